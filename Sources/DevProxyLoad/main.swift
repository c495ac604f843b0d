import Foundation
import Glibc

// Entry point: parse, set up TLS and addresses, run the workers for the fixed window, report.
// Only this file prints errors and picks exit codes (0 ran, 1 could not start, 2 bad arguments).

/// Writes one `error:` line to stderr and exits.
func exitWithError(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(code)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(LoadOptions.usage)
    exit(arguments.isEmpty ? 2 : 0)
}

let options: LoadOptions
do {
    options = try LoadOptions.parse(arguments)
} catch {
    exitWithError(error.description, code: 2)
}

// OpenSSL's socket BIO writes with write(2); a peer reset must be an EPIPE, not a signal.
signal(SIGPIPE, SIG_IGN)

let plan: ConnectionPlan
do {
    plan = try ConnectionPlan(options: options)
} catch {
    exitWithError(error.description, code: 1)
}

let start = MonotonicClock.now()
let measureStart = start + MonotonicClock.nanoseconds(options.effectiveWarmup)
let window = RunWindow(start: start, measureStart: measureStart,
                       end: measureStart + MonotonicClock.nanoseconds(options.duration))
let settings = SlotSettings(mode: options.mode, plan: plan, window: window,
                            timeout: MonotonicClock.nanoseconds(options.timeout))

// Spread C connections over T threads as evenly as possible.
let workers = (0..<options.threads).map { index in
    let share = options.connections / options.threads + (index < options.connections % options.threads ? 1 : 0)
    return Worker(connections: share, settings: settings)
}
for (index, worker) in workers.enumerated() { worker.start(name: "load-\(index)") }

// Read the CPU counters at the warm-up's end so the report covers the measured window only.
let untilMeasure = measureStart > MonotonicClock.now() ? measureStart - MonotonicClock.now() : 0
if untilMeasure > 0 { usleep(UInt32(min(untilMeasure / 1000, UInt64(UInt32.max)))) }
let cpuAtMeasure = ProcessCPU.current()

var stats = RunStats()
for worker in workers {
    worker.join()
    stats.merge(worker.stats)
}
let finished = min(MonotonicClock.now(), window.end)
let measured = Double(finished > measureStart ? finished - measureStart : 0) / 1e9
let report = LoadReport(options: options, stats: stats, measuredSeconds: measured,
                        cpu: ProcessCPU.current().since(cpuAtMeasure))
print(options.json ? report.json() : report.text())
// Written out now, not by exit(): whatever happens while the process tears down, the report is kept.
fflush(nil)
