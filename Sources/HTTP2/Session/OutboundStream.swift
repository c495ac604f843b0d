/// What we still have to send on one stream after its head: body bytes, then the end.
///
/// libnghttp2 pulls from it through the stream's data provider (`SessionCallbacks.readData`)
/// during `mem_send`; when it is empty but not ended the provider defers, and `submitData` or
/// `submitTrailers` resumes it.
///
/// A class, changed where it is kept: each `outbound[stream]?.field = …` on a struct in the
/// session's dictionary ran the dictionary's modify accessor, whose coroutine frame glibc had to
/// allocate (callgrind: 12 `malloc` per relayed h2 stream).
final class OutboundStream {
    /// Body bytes given to `submitData` and not yet handed to the library.
    var queue = ByteQueue()
    /// Whether the caller has ended the body (`endStream` or trailers).
    var ended = false
    /// Trailers to send after the body, already checked.
    var trailers: [HTTP2Field]?
    /// Whether the provider returned NGHTTP2_ERR_DEFERRED and waits for `resume_data`.
    var deferred = false
    /// Whether the provider reported EOF: nothing more can be sent on this stream.
    var finished = false
}
