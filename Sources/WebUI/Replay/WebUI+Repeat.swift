import DevProxy
import Foundation

/// `POST /api/flows/ID/repeat`, `GET` and `DELETE /api/repeats/ID` (docs/web-ui.md).
extension WebUI {
    /// Starts sending flow `id`'s request `count` times, `concurrency` at once; answers the
    /// repeat's id at once (202). Each send is a replay: a flow of its own marked `replay_of`.
    func startRepeat(_ request: WebRequest, id: String) throws -> WebResponse {
        let object: [String: Any]
        if request.body.isEmpty {
            object = [:]
        } else {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
                return .error(400, "the body must be a JSON object: {\"count\", \"concurrency\", \"delay_ms\"}")
            }
            object = parsed
        }
        var values: [String: Int] = [:]
        for (name, range, fallback) in [("count", RepeatRun.counts, 10), ("concurrency", RepeatRun.concurrencies, 1),
                                        ("delay_ms", RepeatRun.delays, 0)] {
            guard let given = object[name] else {
                values[name] = fallback
                continue
            }
            // JSON's true is an NSNumber too (its type is a C char, where a number's is not).
            guard let number = given as? NSNumber, String(cString: number.objCType) != "c",
                  let value = Int(exactly: number.doubleValue),
                  range.contains(value) else {
                return .error(400, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            values[name] = value
        }
        guard let link = proxy else { return Self.noProxy }
        guard link.replayPort != 0 else { return Self.noRegularListener }
        let plan: ReplayPlan
        switch try replayPlan(of: id) {
        case .refused(let answer): return answer
        case .plan(let planned): plan = planned
        }
        let run = RepeatRun(id: String(WebAccess.newToken().prefix(12)), flow: id, count: values["count"]!,
                            concurrency: values["concurrency"]!, delayMs: values["delay_ms"]!)
        let started = repeats.start(run) { [weak self] _ in
            guard let self else { return .error(kind: "cancelled", flow: nil) }
            return self.repeatOnce(plan, through: link, of: id)
        }
        guard started else {
            return .error(429, "\(RepeatBoard.runningLimit) repeats are running; cancel one or wait for it to end")
        }
        return .json(object: run.json, status: 202)
    }

    /// `GET /api/repeats/ID`: progress and summary.
    func repeatProgress(id: String) -> WebResponse {
        guard let run = repeats.run(id: id) else { return .error(404, "no repeat \(id)") }
        return .json(object: run.json)
    }

    /// `DELETE /api/repeats/ID`: sends no more (those in flight end as they end).
    func cancelRepeat(id: String) -> WebResponse {
        guard let run = repeats.run(id: id) else { return .error(404, "no repeat \(id)") }
        run.cancel()
        return .json(object: run.json)
    }

    /// One repetition: a replay of `original` as a new flow, and how it ended.
    private func repeatOnce(_ plan: ReplayPlan, through link: ProxyLink, of original: String) -> RepeatRun.Outcome {
        do {
            switch try deliver(plan, through: link, id: Replayer.newFlowID(), replayOf: original) {
            case .unreachable: return .error(kind: "proxy_unreachable", flow: nil)
            case .refused: return .error(kind: "refused", flow: nil)
            case .flow(let id, let answer):
                let summary = try store.summary(id: id)
                if let kind = summary?.errorKind { return .error(kind: kind, flow: id) }
                if let status = summary?.status ?? Self.status(of: answer) { return .status(status, flow: id) }
                return .error(kind: "no_response", flow: id)
            }
        } catch {
            return .error(kind: "store_failed", flow: nil)
        }
    }

    /// The status code of an HTTP/1.1 response's first line.
    private static func status(of answer: [UInt8]) -> Int? {
        let line = String(decoding: answer.prefix(64), as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        return parts.count >= 2 ? Int(parts[1]) : nil
    }
}
