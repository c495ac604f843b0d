import CertAuthority
import DevProxy
import GRPCWire

/// `--proto FILE` (repeatable, `run` and `web`): `FileDescriptorSet`s (`protoc --include_imports
/// --descriptor_set_out=FILE x.proto`) or `.proto` sources protoc compiles to one
/// (`ProtoCompiler`), merged.
enum ProtoFiles {
    /// The schema of `paths`; nil for none.
    /// - Throws: `UsageError` naming the file and why, for one that is neither, or that protoc refuses.
    static func schema(_ paths: [String]) throws -> ProtoSchema? {
        guard !paths.isEmpty else { return nil }
        var schema = ProtoSchema()
        for path in paths {
            let source = ProtoCompiler.isSource(path)
            var bytes = try SecureFile.read(path, what: source ? "the --proto source" : "the --proto descriptor set")
            if source {
                do {
                    bytes = try ProtoCompiler.descriptorSet(compiling: path)
                } catch {
                    throw UsageError("--proto \(path): \(error.reason)")
                }
            }
            let file: ProtoSchema
            do {
                file = try ProtoSchema(descriptorSet: bytes)
            } catch {
                throw UsageError("--proto \(path): \(error.reason); pass a .proto source (read with protoc) or a "
                                 + "descriptor set: protoc --include_imports --descriptor_set_out=api.desc api.proto")
            }
            schema.merge(file)
        }
        return schema
    }
}
