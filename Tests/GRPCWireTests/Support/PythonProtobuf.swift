import Foundation
import TestSupport

/// Protobuf messages serialized by Python's `protobuf` from a `.proto` compiled at test time
/// with `grpc_tools.protoc`, and protoc's own `--decode_raw` of any bytes: the real peer the raw
/// decoder is held to. Needs `pip install grpcio-tools protobuf` (scripts/test installs them).
enum PythonProtobuf {
    /// A proto2 file, so groups can be made too.
    static let proto = """
    syntax = "proto2";
    package lab;
    message Inner { optional int32 id = 1; optional string name = 2; repeated sint64 deltas = 3; }
    message Sample {
      optional string text = 1; optional int32 count = 2; optional int64 negative = 3; optional sint32 zig = 4;
      optional fixed32 f32 = 5; optional fixed64 f64 = 6; optional float ratio = 7; optional double precise = 8;
      optional bool flag = 9; optional bytes blob = 10; optional Inner inner = 11; repeated Inner items = 12;
      repeated int32 packed = 13 [packed = true]; map<string, int32> tags = 14; optional uint64 big = 15;
      optional string unicode = 16; optional string empty = 17;
      optional group Grp = 20 { optional int32 a = 21; optional string s = 22; }
    }
    """

    /// Python lines, after `m = lab_pb2.Sample()`, that fill `m`; one entry per sample message.
    static let samples: [String: String] = [
        "scalars": """
        m.text = "hello"; m.count = 7; m.negative = -5; m.zig = -3; m.f32 = 0xDEADBEEF; m.f64 = 2**63 + 5
        m.ratio = 1.5; m.precise = -0.1; m.flag = True; m.big = 2**64 - 1
        """,
        "nested": """
        m.inner.id = 1; m.inner.name = "one"; m.inner.deltas.extend([-1, 1, -300])
        for i in range(3):
            it = m.items.add(); it.id = i + 10; it.name = "item %d" % i
        m.packed.extend([1, 2, 300, 70000]); m.tags["a"] = 1; m.tags["b"] = 2
        """,
        "strings": """
        m.unicode = "grüße, 世界 😀"; m.blob = bytes(range(0, 40)); m.empty = ""; m.text = "tab\\tnewline\\nquote\\""
        """,
        "group": """
        m.grp.a = 5; m.grp.s = "in a group"; m.count = 1
        """,
        "large": """
        m.blob = bytes(range(256)) * 200; m.text = "x" * 5000
        for i in range(500):
            it = m.items.add(); it.id = i; it.deltas.extend([i, -i])
        """,
    ]

    /// Every sample, serialized, by name.
    static func serializedSamples() throws -> [String: [UInt8]] {
        let dir = TemporaryDirectory()
        _ = dir.write("lab.proto", proto)
        var script = """
        import sys
        sys.path.insert(0, sys.argv[1])
        from grpc_tools import protoc
        assert protoc.main(["protoc", "-I" + sys.argv[1], "--python_out=" + sys.argv[1], sys.argv[1] + "/lab.proto"]) == 0
        import lab_pb2

        """
        for (name, lines) in samples {
            script += "m = lab_pb2.Sample()\n" + lines + "\n"
            script += "open(sys.argv[1] + '/\(name).bin', 'wb').write(m.SerializeToString())\n"
        }
        let result = try Subprocess.run("python3", ["-c", script, dir.path], timeout: 60)
        guard result.status == 0 else { throw TestFailure("python protobuf failed: \(result.output)") }
        return try samples.keys.reduce(into: [:]) { all, name in
            guard let data = FileManager.default.contents(atPath: dir.file("\(name).bin")) else {
                throw TestFailure("no \(name).bin")
            }
            all[name] = [UInt8](data)
        }
    }

    /// `protoc --decode_raw` of `bytes` (grpc_tools' protoc), or nil when protoc cannot parse them.
    static func decodeRaw(_ bytes: [UInt8]) throws -> String? {
        let result = try Subprocess.run("python3", ["-m", "grpc_tools.protoc", "--decode_raw"], stdin: bytes, timeout: 60)
        return result.status == 0 ? result.stdout : nil
    }

    /// Runs a Python snippet that writes bytes to `sys.argv[1]`, and returns them.
    static func bytes(from script: String) throws -> [UInt8] {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run("python3", ["-c", script, dir.file("out")], timeout: 60)
        guard result.status == 0, let data = FileManager.default.contents(atPath: dir.file("out")) else {
            throw TestFailure("python failed: \(result.output)")
        }
        return [UInt8](data)
    }
}
