import Foundation
@testable import SessionStore
import Testing

/// Patterns the nested-repetition check lets through but ICU backtracks on without end stop at
/// their deadline (`TextPattern.matches(_:until:)` returns nil), and ordinary ones still answer.
struct TextPatternDeadlineTests {
    private func search(_ pattern: String, _ text: String, within: Duration = .milliseconds(300)) throws -> (Bool?, Duration) {
        let compiled = try TextPattern(pattern)
        let clock = ContinuousClock()
        let start = clock.now
        let found = Array(text.utf8).withUnsafeBytes { compiled.matches($0, until: start + within) }
        return (found, clock.now - start)
    }

    @Test func alternativesUnderARepetitionStopAtTheDeadline() throws {
        // Exponential: every way of splitting 80 `a`s into `a` and `aa` is tried before failing.
        let (found, took) = try search("(a|aa)*b", "/" + String(repeating: "a", count: 80))
        #expect(found == nil)
        #expect(took < .seconds(3), "\(took)")
    }

    @Test func severalWildcardsOverOneLongLineStopAtTheDeadline() throws {
        // Polynomial: each `id` tries each later `name`, each tries the rest, over 1 MiB of JSON.
        let json = "[" + Array(repeating: #"{"id":1,"name":"x","kind":"item"}"#, count: 30_000).joined(separator: ",") + "]"
        let (found, took) = try search("id.*name.*zzz", json)
        #expect(found == nil)
        #expect(took < .seconds(3), "\(took)")
    }

    @Test func ordinaryPatternsAnswerWithinTheirTime() throws {
        #expect(try search("(a|aa)*b", "aaab").0 == true)
        #expect(try search("needle-\\d+", #"{"token":"needle-42"}"#).0 == true)
        #expect(try search("needle-\\d+", #"{"token":"needle-x"}"#).0 == false)
        #expect(try search("api.example.com", "https://API.example.com/").0 == true)
    }
}
