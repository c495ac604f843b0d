#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open descriptors (`RLIMIT_NOFILE`), raised at start.
///
/// Each intercepted connection holds two descriptors (the client's and the origin's), more while
/// a body is spooled or an HTTP/2 client's streams each have an HTTP/1.1 origin connection. At the
/// soft limit most shells give (1,024), `devproxy run` failed new connections with "too many open
/// files" (`upstream_refused`) from about 500 at once, half its own `maxConnections`. The soft
/// limit goes up to the hard one, as nginx (`worker_rlimit_nofile`) and Go's runtime raise theirs.
public enum DescriptorLimit {
    /// Above this a hard limit reads as unlimited, and Linux refuses it (`fs.nr_open`, 1,048,576 by default).
    static let ceiling: rlim_t = 1 << 20

    /// Raises the soft limit to the hard one (at most `ceiling`); the soft limit in force after.
    @discardableResult
    public static func raise() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(resourceKind, &limit) == 0 else { return 0 }
        let target = min(limit.rlim_max, ceiling)
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resourceKind, &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    #if os(Linux)
    private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceKind = RLIMIT_NOFILE
    #endif
}
