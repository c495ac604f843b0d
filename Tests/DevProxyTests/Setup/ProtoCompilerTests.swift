@testable import DevProxy
import Testing

/// `--proto FILE`'s one line when protoc fails: its first error, which names the cause.
@Suite struct ProtoCompilerTests {
    /// A missing well-known type's file: protoc's last line named a symptom (`"google.protobuf.Timestamp"
    /// is not defined`), which read as if the type were unsupported.
    @Test func theFirstErrorAndTheMissingPackageAreSaid() {
        let output = """
            google/protobuf/timestamp.proto: File not found.
            api.proto:3:1: Import "google/protobuf/timestamp.proto" was not found or had errors.
            api.proto:4:17: "google.protobuf.Timestamp" is not defined.

            """
        let reason = ProtoCompiler.reason(output)
        #expect(reason.hasPrefix("protoc: google/protobuf/timestamp.proto: File not found. (and 2 more lines)"), "\(reason)")
        #expect(reason.contains("libprotobuf-dev"))
        #expect(ProtoCompiler.reason("typo.proto:1:31: \"strin\" is not defined.\n") == "protoc: typo.proto:1:31: \"strin\" is not defined.")
        #expect(ProtoCompiler.reason("") == "protoc failed with no output")
    }
}
