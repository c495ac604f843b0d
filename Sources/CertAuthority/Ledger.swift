import Foundation

/// The append-only JSON Lines record of everything a CA issued and revoked.
///
/// Each record is written with one `write` on an `O_APPEND` descriptor and `fsync`ed before
/// the command reports success. Reading never skips a bad line silently: torn or corrupt
/// lines come back as `problems` with their line numbers.
public struct Ledger: Sendable {
    public let path: String

    /// A line that could not be read as a record.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// What reading found.
    public struct Contents: Sendable {
        public var records: [LedgerRecord]
        public var problems: [Problem]
    }

    public init(path: String) {
        self.path = path
    }

    /// Creates an empty ledger (0600); refuses to replace an existing one.
    func create() throws {
        try SecureFile.write([], to: path, mode: SecureFile.privateMode, exclusive: true)
    }

    /// Reads every record.
    ///
    /// - Throws: `.notFound` when the ledger cannot be read at all.
    public func read() throws -> Contents {
        let bytes = try SecureFile.read(path, what: "the ledger")
        return Self.parse(bytes)
    }

    /// Parses ledger bytes; exposed for tests and the fuzzer.
    public static func parse(_ bytes: [UInt8]) -> Contents {
        var contents = Contents(records: [], problems: [])
        let decoder = JSONDecoder()
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let number = index + 1
            let isLast = index == lines.count - 1
            if line.isEmpty { continue }
            do {
                contents.records.append(try decoder.decode(LedgerRecord.self, from: Data(line)))
            } catch {
                let torn = isLast ? "torn (no newline at the end; an interrupted write?)" : "not a valid record"
                contents.problems.append(Problem(line: number, reason: "\(torn): \(Self.describe(error))"))
            }
        }
        return contents
    }

    /// Appends one record, naming the SHA-256 of the line before it, and fsyncs it.
    ///
    /// The ledger is locked (`flock`) from reading the last line to the fsync, so two commands
    /// appending at once never name the same predecessor.
    /// - Throws: `.ledgerCorrupt` when the ledger already has a bad line (appending would bury
    ///   it), `.notWritable` / `.io` when the write fails.
    func append(_ record: LedgerRecord) throws {
        let fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw SecureFile.writeError(path: path, errno: errno) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SecureFile.writeError(path: path, errno: errno) }
        }
        let existingBytes = try SecureFile.read(path, what: "the ledger")
        let existing = Self.parse(existingBytes)
        if let problem = existing.problems.first {
            throw CAError(.ledgerCorrupt, "\(path) \(problem); repair or remove that line, then retry")
        }
        var record = record
        record.previousSHA256 = Digest.sha256(Self.lastLine(of: existingBytes)).hex
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line = [UInt8](try encoder.encode(record))
        line.append(UInt8(ascii: "\n"))
        var before = stat()
        guard fstat(fd, &before) == 0 else { throw SecureFile.writeError(path: path, errno: errno) }
        // The whole line, or none of it: a short write (a full disk) is continued, and a failure
        // cuts the file back to its length before, with the write's own errno. A torn last line
        // made every later CA command refuse until the ledger was edited by hand, and the error
        // named a stale errno ("No such file or directory").
        let failure: Int32? = line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if written == 0 { return ENOSPC }
                offset += written
            }
            return fsync(fd) == 0 ? nil : errno
        }
        if let failure {
            _ = ftruncate(fd, before.st_size)
            _ = fsync(fd)
            throw SecureFile.writeError(path: path, errno: failure)
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted: return "not JSON"
        default: return "\(error)"
        }
    }
}
