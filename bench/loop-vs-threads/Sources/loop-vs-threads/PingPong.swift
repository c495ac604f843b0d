import Foundation

/// One end of the exchange: the end that speaks first sends a byte, then waits for the echo;
/// the other waits, then echoes.
enum PingPong {
    /// With a blocking receive, on a thread of its own.
    static func blocking(_ fd: Int32, speaksFirst: Bool, roundTrips: Int) {
        var byte: UInt8 = 0
        for _ in 0..<roundTrips {
            if speaksFirst { _ = send(fd, &byte, 1, 0) }
            _ = recv(fd, &byte, 1, 0)
            if !speaksFirst { _ = send(fd, &byte, 1, 0) }
        }
    }

    /// With a non-blocking receive that suspends the task on `loop` while nothing is in.
    static func onLoop(_ fd: Int32, speaksFirst: Bool, roundTrips: Int, loop: EventLoop) async {
        var byte: UInt8 = 0
        for _ in 0..<roundTrips {
            if speaksFirst { _ = send(fd, &byte, 1, 0) }
            while recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) < 0 { await loop.readable(fd) }
            if !speaksFirst { _ = send(fd, &byte, 1, 0) }
        }
    }
}
