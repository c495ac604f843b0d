#if os(Linux)
import CSystem
import Foundation

/// glibc malloc settings for a proxy that runs a thread per connection, set once at start-up
/// before any thread exists. Measured with `bench/memstat.py` (docs/performance.md, "Process
/// memory"): with glibc's defaults, 100k flows left the proxy at 182 MiB, 142 MiB of it free
/// chunks spread over 16 arenas that `malloc_trim` could not give back.
///
/// A setting the environment already makes (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`,
/// `MALLOC_TRIM_THRESHOLD_`, or any `GLIBC_TUNABLES`) is left as the user set it.
enum HeapTuning {
    /// Arenas: four per core. glibc's default is 8 per core, created as threads collide on a
    /// lock; a flow's memory is allocated on its connection's thread and freed on the session
    /// store's writer, so every arena ends up with holes of its own, which the trims after bursts
    /// (`ProxyServer`, `StoreWriter`) give back. Fewer arenas cost more than they saved: with one
    /// per core (2 here) the connection threads and the writer's frees queued on two arena locks,
    /// and the h2 keep-alive cell served 8-20 % fewer streams a second than with 8, while 100k
    /// flows left the proxy at 83-85 MiB against 56-65 MiB with 8 (docs/performance.md, "Run 46").
    static var arenaMax: Int32 { Int32(4 * max(1, ProcessInfo.processInfo.activeProcessorCount)) }
    /// Blocks from 128 KiB up are mapped on their own and unmapped when freed. 128 KiB is glibc's
    /// initial threshold; fixing it stops glibc from raising it (to 32 MiB at most) after the
    /// first such block is freed, which put every later HTTP/2 stream queue and body capture
    /// into the arenas, where they stayed after the streams ended.
    static let mmapThreshold: Int32 = 128 * 1024
    /// Free memory at the top of a heap beyond 1 MiB goes back to the system at once (fixing the
    /// mmap threshold fixes this one too; glibc's default 128 KiB would shrink and regrow the
    /// heap on every burst).
    static let trimThreshold: Int32 = 1024 * 1024

    /// Applies the settings above, except those the environment sets.
    static func apply() {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GLIBC_TUNABLES"] == nil else { return }
        if environment["MALLOC_ARENA_MAX"] == nil { mallopt(M_ARENA_MAX, arenaMax) }
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        if environment["MALLOC_TRIM_THRESHOLD_"] == nil { mallopt(M_TRIM_THRESHOLD, trimThreshold) }
    }
}
#endif
