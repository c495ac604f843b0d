import Glibc

/// Nanoseconds on `CLOCK_MONOTONIC`; cheap enough to call around every request.
enum MonotonicClock {
    /// The current monotonic time in nanoseconds.
    @inline(__always)
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Converts seconds to nanoseconds, for deadlines.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(max(0, seconds) * 1e9)
    }
}
