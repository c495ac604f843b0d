import Glibc

/// User and system CPU time of this process, from `getrusage(RUSAGE_SELF)`.
///
/// Reported so a reader can see when the generator, not the server, is the bottleneck:
/// on a 2-core machine a generator near 100 % of a core is suspect.
struct ProcessCPU: Sendable {
    var userSeconds: Double
    var systemSeconds: Double

    /// Reads the counters now.
    static func current() -> ProcessCPU {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessCPU(userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime))
    }

    /// The CPU spent between `earlier` and `self`.
    func since(_ earlier: ProcessCPU) -> ProcessCPU {
        ProcessCPU(userSeconds: userSeconds - earlier.userSeconds, systemSeconds: systemSeconds - earlier.systemSeconds)
    }
}
