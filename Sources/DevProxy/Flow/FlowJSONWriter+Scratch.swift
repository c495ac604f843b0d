extension FlowJSONWriter {
    /// The room a thread's scratch buffer starts with: a short exchange's record fits.
    static let scratchCapacity = 4096
    /// A scratch buffer grown past this (a record with large bodies inline) is let go after the
    /// record, so a thread does not keep the largest record it ever wrote.
    static let scratchKept = 64 * 1024

    /// The bytes `write` writes, copied out at their final size from this thread's scratch buffer
    /// (`FlowJSONFragments.scratch`). A fresh writer allocated 2 KiB for every record, past glibc's
    /// per-thread cache (1 KiB and less), so each took the arena's lock, and freed it again: 1.7 %
    /// of an h2 stream's cycles (perf, docs/performance.md, run 52). A record written while another
    /// is (none is today) gets a writer of its own.
    static func bytes(_ write: (inout FlowJSONWriter) -> Void) -> [UInt8] {
        let fragments = FlowJSONFragments.current
        guard let output = fragments.scratch else {
            var writer = FlowJSONWriter()
            write(&writer)
            return writer.bytes
        }
        fragments.scratch = nil
        var writer = FlowJSONWriter(reusing: output)
        write(&writer)
        let bytes = writer.bytes
        fragments.scratch = output.capacity > scratchKept ? Output(capacity: scratchCapacity) : output
        return bytes
    }
}
