import Foundation
import Synchronization

// Ping-pong of one byte over connected socket pairs: each round trip is a send and a blocking
// receive on both ends, the shape of a proxy waiting on a client and an origin. Run the same
// count of pairs as threads blocking in recv() and as tasks on two epoll loops, and compare
// round trips per second with the CPU time and context switches each took.

let usage = "usage: loop-vs-threads threads|loop tcp|unix ROUND_TRIPS PAIRS"
let arguments = CommandLine.arguments
guard arguments.count == 5, let roundTrips = Int(arguments[3]), let pairCount = Int(arguments[4]),
      ["threads", "loop"].contains(arguments[1]), ["tcp", "unix"].contains(arguments[2]) else {
    print(usage)
    exit(2)
}
let useLoop = arguments[1] == "loop"
let pairs = (0..<pairCount).map { _ in arguments[2] == "tcp" ? SocketPair.tcp() : SocketPair.unix() }

let finishedEnds = Atomic<Int>(0)
let before = ResourceUsage.now()
let start = Date()
if useLoop {
    let loops = [EventLoop(), EventLoop()]
    for (index, pair) in pairs.enumerated() {
        // The two ends of a pair on different loops, as a proxy's peers are other processes.
        let first = loops[index % 2], second = loops[(index + 1) % 2]
        Task(executorPreference: first) {
            await PingPong.onLoop(pair.a, speaksFirst: true, roundTrips: roundTrips, loop: first)
            finishedEnds.add(1, ordering: .relaxed)
        }
        Task(executorPreference: second) {
            await PingPong.onLoop(pair.b, speaksFirst: false, roundTrips: roundTrips, loop: second)
            finishedEnds.add(1, ordering: .relaxed)
        }
    }
} else {
    for pair in pairs {
        Thread { PingPong.blocking(pair.a, speaksFirst: true, roundTrips: roundTrips); finishedEnds.add(1, ordering: .relaxed) }.start()
        Thread { PingPong.blocking(pair.b, speaksFirst: false, roundTrips: roundTrips); finishedEnds.add(1, ordering: .relaxed) }.start()
    }
}
while finishedEnds.load(ordering: .relaxed) < 2 * pairCount { usleep(10_000) }
let seconds = Date().timeIntervalSince(start)
let used = ResourceUsage.now() - before
let total = Double(roundTrips * pairCount)
print(String(format: "%@ %@ %d pairs: %.0f round trips/s, CPU user %.2f s sys %.2f s, %.1f µs CPU per round trip, context switches %d voluntary %d involuntary",
             arguments[1], arguments[2], pairCount, total / seconds, used.user, used.system,
             (used.user + used.system) * 1e6 / total, used.voluntarySwitches, used.involuntarySwitches))
