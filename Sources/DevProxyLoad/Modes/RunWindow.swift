/// The fixed timeline of a run, in monotonic nanoseconds, shared by all workers.
struct RunWindow: Sendable {
    /// When traffic starts.
    let start: UInt64
    /// When measuring starts (start + warm-up); completions before it are not counted.
    let measureStart: UInt64
    /// When every worker stops, in-flight exchanges abandoned.
    let end: UInt64

    /// Whether a completion at `time` counts.
    func counts(_ time: UInt64) -> Bool { time >= measureStart && time <= end }
}

/// Per-run constants every slot reads.
struct SlotSettings: Sendable {
    let mode: LoadMode
    let plan: ConnectionPlan
    let window: RunWindow
    /// No-progress limit for any operation, in nanoseconds.
    let timeout: UInt64
    /// Pause after a failure before reconnecting, so a refused port does not spin a core.
    let backoff: UInt64 = 10_000_000
}
