import Foundation

/// `--proto api.proto`: a `.proto` source turned into the `FileDescriptorSet` the gRPC view reads,
/// by `protoc` (Debian's `protobuf-compiler`) as a user would run it by hand:
/// `protoc --include_imports --descriptor_set_out=OUT -I DIR api.proto`, with the file's own
/// directory as the import root (and protoc's own include directory for the well-known types).
public enum ProtoCompiler {
    /// Why a source could not be compiled, in one line.
    public struct Failure: Error, Sendable {
        public let reason: String
    }

    /// Whether `path` names a `.proto` source rather than a descriptor set.
    public static func isSource(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".proto")
    }

    /// Compiles `path` and returns the descriptor set's bytes.
    /// - Parameter protoc: the compiler; a bare name is looked up on PATH.
    /// - Throws: `Failure` when protoc is missing or rejects the file (its last line).
    public static func descriptorSet(compiling path: String, protoc: String = "protoc") throws(Failure) -> [UInt8] {
        let tool = ExternalTool(protoc)
        guard tool.isInstalled else {
            throw Failure(reason: "a .proto source needs protoc to be read, and it is not installed (Debian: apt-get install "
                          + "protobuf-compiler); or pass a descriptor set: protoc --include_imports "
                          + "--descriptor_set_out=api.desc \(path)")
        }
        var template = Array((NSTemporaryDirectory() + "/devproxy-proto-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw Failure(reason: "cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/set.desc"
        let file = URL(fileURLWithPath: path)
        let outcome: ExternalTool.Outcome
        do {
            outcome = try tool.run(["--include_imports", "--descriptor_set_out=" + output,
                                    "--proto_path=" + file.deletingLastPathComponent().path, file.path])
        } catch {
            throw Failure(reason: (error as? TrustStoreError)?.reason ?? "\(error)")
        }
        guard outcome.status == 0 else { throw Failure(reason: Self.reason(outcome.output)) }
        guard let bytes = FileManager.default.contents(atPath: output) else {
            throw Failure(reason: "protoc wrote no descriptor set")
        }
        return Array(bytes)
    }

    /// protoc's failure in one line: its first error, which names the cause (the last names a
    /// symptom: `"google.protobuf.Timestamp" is not defined` after the import was not found), and
    /// for a well-known type's file that is missing, the package that has them.
    static func reason(_ output: String) -> String {
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard let first = lines.first else { return "protoc failed with no output" }
        var reason = "protoc: \(first)"
        if lines.count > 1 { reason += " (and \(lines.count - 1) more line\(lines.count == 2 ? "" : "s"))" }
        if first.hasPrefix("google/protobuf/"), first.hasSuffix("File not found.") {
            reason += "; the well-known types' .proto files come with libprotobuf-dev (apt-get install libprotobuf-dev), "
                + "or pass a descriptor set built with --include_imports"
        }
        return reason
    }
}
