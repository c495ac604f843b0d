import HTTPTypes
import Testing

/// `ObsText.string` of an array (an HTTP/2 field's value) reads as the generic path reads the same
/// bytes: ASCII as it is, UTF-8 as its text, anything else byte for byte as private-use scalars.
@Suite struct ObsTextTests {
    @Test(arguments: [
        Array("application/grpc+proto".utf8),
        [],
        Array("caf\u{E9} \u{4E2D}".utf8),
        Array("caf".utf8) + [0xE9],
        [0xF0, 0x9F, 0x98, 0x41],
        [0x80],
    ] as [[UInt8]])
    func anArrayReadsAsAnyCollection(_ bytes: [UInt8]) {
        let fromArray = ObsText.string(bytes)
        let fromSlice = ObsText.string(bytes[...])
        #expect(fromArray == fromSlice)
        #expect((ObsText.wireBytes(fromArray) ?? Array(fromArray.utf8)) == bytes)
    }
}
