import Foundation
import Testing
@testable import HTTPTypes

/// A flow's fields kept flat read, write and encode as the `[[name, value]]` pairs the flow log has
/// always written; entries that are not pairs are made pairs.
@Suite struct FieldPairsTests {
    @Test func readsAsPairsInOrderWithRepeats() {
        var fields = FieldPairs()
        fields.append(name: "Host", value: "a.test")
        fields.append(name: "accept", value: "1")
        fields.append(name: "Accept", value: "2")
        #expect(fields.count == 3)
        #expect(fields.arrays == [["Host", "a.test"], ["accept", "1"], ["Accept", "2"]])
        #expect(fields[2] == ["Accept", "2"])
        #expect(fields.name(at: 1) == "accept" && fields.value(at: 1) == "1")
        #expect(fields.flat == ["Host", "a.test", "accept", "1", "Accept", "2"])
        #expect(fields.first(named: "ACCEPT") == "1")
        #expect(fields.first(named: "accep") == nil)
        #expect(fields == [["Host", "a.test"], ["accept", "1"], ["Accept", "2"]])
        #expect(fields != [["Host", "a.test"], ["Accept", "2"], ["accept", "1"]])
    }

    @Test func entriesThatAreNotPairsAreMadePairs() {
        let fields: FieldPairs = [["lonely"], [], ["Three", "parts", "x"], ["Empty", ""]]
        #expect(fields.arrays == [["lonely", ""], ["Three", "parts"], ["Empty", ""]])
        var edited = fields
        edited[0] = ["only"]
        edited.append(["Z", "9"])
        edited.removeAll { $0[0] == "Three" }
        edited.insert(["First", "0"], at: 0)
        #expect(edited.arrays == [["First", "0"], ["only", ""], ["Empty", ""], ["Z", "9"]])
        #expect(edited.flat.count == 8)
    }

    @Test func encodesAndDecodesAsArraysOfPairs() throws {
        let fields: FieldPairs = [["Set-Cookie", "a=1"], ["X-Text", "Zoë \"q\""]]
        let json = try JSONEncoder().encode(fields)
        #expect(String(decoding: json, as: UTF8.self) == #"[["Set-Cookie","a=1"],["X-Text","Zoë \"q\""]]"#)
        #expect(try JSONDecoder().decode(FieldPairs.self, from: json) == fields)
        let loose = try JSONDecoder().decode(FieldPairs.self, from: Data(#"[["a"],[],["b","2","3"]]"#.utf8))
        #expect(loose.arrays == [["a", ""], ["b", "2"]])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FieldPairs.self, from: Data(#"[["a", 1]]"#.utf8)) }
    }
}
