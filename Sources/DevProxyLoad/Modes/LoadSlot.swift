import Glibc

/// What a worker drives: one connection slot, HTTP/1.1 (`Slot`) or HTTP/2 (`HTTP2Slot`).
///
/// A slot never blocks: `step` runs until it would wait, then leaves `pollRequest` (or
/// `wakeTime`) saying what it waits for.
protocol LoadSlot: AnyObject {
    /// Whether this slot has nothing more to do (a finished stream).
    var isFinished: Bool { get }
    /// Whether the slot is setting up a connection or running an exchange (idle mode's ramp-up).
    var isBusy: Bool { get }
    /// When a slot waiting to reconnect wants to be stepped without any socket event.
    var wakeTime: UInt64? { get }
    /// The descriptor and events to poll for, if the slot waits on its socket.
    var pollRequest: pollfd? { get }
    /// Deadline of the current operation.
    var deadline: UInt64 { get }
    /// Runs the slot as far as it goes without blocking.
    func step(buffer: UnsafeMutableRawBufferPointer, stats: inout RunStats)
    /// Fails the current operation with a timeout when its deadline has passed.
    func checkTimeout(now: UInt64, stats: inout RunStats)
    /// At the end of the run, accounts for what is still in flight.
    func finishRun(stats: inout RunStats)
}

extension Slot: LoadSlot {}
