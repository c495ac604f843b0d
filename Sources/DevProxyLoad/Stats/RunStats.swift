/// What one worker thread counted; merged across workers after they stop.
///
/// Requests and latencies count only exchanges that completed inside the measured window
/// (after warm-up). Errors count over the whole run, warm-up included, so a failing setup
/// is never hidden.
struct RunStats: Sendable {
    /// Latency per completed request: request written → response fully read
    /// (newconn: TCP connect started → response fully read).
    var latency = Histogram()
    /// Completed requests with a 2xx/3xx status inside the window.
    var requests: UInt64 = 0
    /// Response body bytes read inside the window (stream: the whole body).
    var bodyBytes: UInt64 = 0
    /// Failures by kind.
    var errors: [ErrorKind: UInt64] = [:]
    /// Responses by status code (all codes, not only failures).
    var statuses: [Int: UInt64] = [:]
    /// First failure seen, to tell the reader *why* errors is non-zero.
    var firstError: LoadError?
    /// stream: request written → first response byte, per stream.
    var timeToFirstByte = Histogram()
    /// stream: nanoseconds from request written to last body byte, summed over streams.
    var streamNanoseconds: UInt64 = 0
    /// stream: streams that read their whole body.
    var streamsCompleted: UInt64 = 0
    /// idle: connections that completed their first exchange and are held open.
    var established: UInt64 = 0

    /// Counts one failure.
    mutating func count(_ error: LoadError) {
        errors[error.kind, default: 0] += 1
        if firstError == nil { firstError = error }
    }

    /// Adds another worker's counts.
    mutating func merge(_ other: RunStats) {
        latency.merge(other.latency)
        requests += other.requests
        bodyBytes += other.bodyBytes
        for (kind, n) in other.errors { errors[kind, default: 0] += n }
        for (code, n) in other.statuses { statuses[code, default: 0] += n }
        if firstError == nil { firstError = other.firstError }
        timeToFirstByte.merge(other.timeToFirstByte)
        streamNanoseconds += other.streamNanoseconds
        streamsCompleted += other.streamsCompleted
        established += other.established
    }
}
