import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Bodies the proxy spooled (past their first 64 KiB) kept as files beside the session, in
/// `PATH-bodies/` (0700, each file 0600), rather than copied into the SQLite file.
///
/// A spooled body is already a file. Copying it into SQLite wrote every byte three more times
/// (the WAL, then the checkpoint into the file, which also read the WAL back) and fsynced it:
/// ~0.5 s of CPU per 64 MiB body on the benchmark's machine (docs/performance.md, "Run 17"). The
/// writer instead hard-links the spool file into the directory, which costs no copy at all; the
/// spool's own name goes when the spool lets the body go, as before. Where a link cannot be made
/// (the spool on another file system), the body is copied into the file as before.
///
/// The row keeps everything else (size, hash, decoded text) and names its file in `bodies.file`;
/// its `data` is then empty. Readers open the file by that name (`BodyFiles.read`, the SQL
/// function `body_file(file)` for `~b` filters). A file is named after its flow's `seq` and part,
/// which are never reused once committed; one linked by a batch that rolled back is removed.
struct BodyFiles: Sendable {
    /// The directory: the session's path with `-bodies`.
    let directory: String

    /// The body files of the session at `sessionPath`.
    init(sessionPath: String) {
        directory = sessionPath + "-bodies"
    }

    /// The file name of flow `sequence`'s `part` body.
    static func name(sequence: Int64, part: StoredBody.Part) -> String { "\(sequence)-\(part.rawValue).body" }

    func path(of name: String) -> String { "\(directory)/\(name)" }

    /// Whether `name` is one `name(sequence:part:)` makes: a session file from elsewhere may hold
    /// anything in `bodies.file`, and a reader must never open `../../somewhere` for it.
    static func isValidName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count >= 8, name.hasSuffix(".body") else { return false }
        let stem = utf8.dropLast(5)
        guard let dash = stem.firstIndex(of: UInt8(ascii: "-")), dash > stem.startIndex,
              stem[stem.startIndex..<dash].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return false
        }
        let part = stem[(dash + 1)...]
        return part.count == 1 && (part.first == UInt8(ascii: "0") || part.first == UInt8(ascii: "1"))
    }

    /// The path of file `name` for reading.
    /// - Throws: `SessionStoreError(.bodyFile)` for a name this store would never have written.
    func readablePath(of name: String) throws -> String {
        guard Self.isValidName(name) else {
            throw SessionStoreError(.bodyFile, "the session names a body file \"\(name)\", which is not one DevProxy writes")
        }
        return path(of: name)
    }

    /// Links `file`'s first `length` bytes into the directory as flow `sequence`'s `part` body.
    /// - Returns: the file's name; nil when it cannot be linked (the caller copies the body instead).
    func adopt(_ file: SpoolFile, length: Int, sequence: Int64, part: StoredBody.Part) -> String? {
        guard length > 0, file.length >= length else { return nil }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { return nil }
        let name = Self.name(sequence: sequence, part: part)
        let target = path(of: name)
        // A file of a rolled-back batch may hold the name (its removal failed): this body replaces it.
        unlink(target)
        guard link(file.path, target) == 0 else { return nil }
        // The spool keeps what the flow log keeps too; the store keeps at most `length`.
        if file.length > length && truncate(target, off_t(length)) != 0 {
            unlink(target)
            return nil
        }
        return name
    }

    /// Removes the files `names` (a rolled-back batch's, or those a `clear` deleted the rows of).
    func remove(_ names: some Sequence<String>) {
        for name in names { unlink(path(of: name)) }
    }

    /// The names of the files in the directory now.
    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".body") }
    }

    /// Removes the directory and everything in it (a session deleted).
    func removeAll() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Bytes the files hold.
    func size() -> Int {
        names().reduce(0) { total, name in
            var info = stat()
            return total + (stat(path(of: name), &info) == 0 ? Int(info.st_size) : 0)
        }
    }

    /// The size of file `name`.
    /// - Throws: `SessionStoreError(.bodyFile)` when it is missing.
    func size(of name: String) throws -> Int {
        var info = stat()
        guard stat(try readablePath(of: name), &info) == 0 else { throw missing(name) }
        return Int(info.st_size)
    }

    /// The whole of file `name`.
    /// - Throws: `SessionStoreError(.bodyFile)` when it is missing or cannot be read.
    func read(_ name: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try chunks(of: name, chunkSize: 1 << 20) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Calls `body` with file `name` in pieces of at most `chunkSize` bytes.
    /// - Throws: `SessionStoreError(.bodyFile)` when it is missing or cannot be read, or what `body` throws.
    func chunks(of name: String, chunkSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let descriptor = open(try readablePath(of: name), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw missing(name) }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: max(1, chunkSize))
        while true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 {
                throw SessionStoreError(.bodyFile, "cannot read the body file \(path(of: name)): \(String(cString: strerror(errno)))")
            }
            if got == 0 { return }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(got))) }
        }
    }

    private func missing(_ name: String) -> SessionStoreError {
        SessionStoreError(.bodyFile, "the body file \(path(of: name)) is missing: a session keeps its bodies past 64 KiB "
                          + "beside it, in \(directory)/")
    }

    // MARK: SQL

    /// Registers `body_file(name)` on `database`: the bytes of body file `name` as a BLOB (NULL
    /// for a NULL name, a file that is gone, or a name DevProxy never writes), for `~b` filters
    /// over bodies kept as files.
    func register(on database: SQLiteDatabase) throws {
        try database.createFunction("body_file", arguments: 1, context: Context(self), Self.call)
    }

    private final class Context: Sendable {
        let files: BodyFiles
        init(_ files: BodyFiles) { self.files = files }
    }

    private static let call: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 1, let arguments, let value = arguments[0],
              sqlite3_value_type(value) == SQLITE_TEXT, let text = sqlite3_value_text(value) else {
            sqlite3_result_null(context)
            return
        }
        let files = Unmanaged<Context>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue().files
        // Read straight into memory SQLite owns and frees: a 64 MiB body is not copied twice.
        guard let path = try? files.readablePath(of: String(cString: text)) else {
            sqlite3_result_null(context)
            return
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            sqlite3_result_null(context)
            return
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else {
            sqlite3_result_zeroblob(context, 0)
            return
        }
        let size = Int(info.st_size)
        guard let memory = sqlite3_malloc64(sqlite3_uint64(size)) else {
            sqlite3_result_error_nomem(context)
            return
        }
        var offset = 0
        while offset < size {
            let got = pread(descriptor, memory + offset, size - offset, off_t(offset))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            offset += got
        }
        sqlite3_result_blob64(context, memory, sqlite3_uint64(offset), sqlite3_free)
    }
}
