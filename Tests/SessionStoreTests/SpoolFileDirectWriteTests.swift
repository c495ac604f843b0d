import CSystem
import Foundation
@testable import SessionStore
import Testing
import TestSupport

#if os(Linux)
import Glibc

/// A spool file writes whole pages that start on a page boundary, from a page-aligned buffer,
/// around the page cache (`O_DIRECT`), and everything else through it; read back, the file is
/// every byte in order however the writes were cut.
@Suite struct SpoolFileDirectWriteTests {
    /// Whether the file system under `directory` takes `O_DIRECT` writes (tmpfs on older kernels
    /// does not): probed with a page written the way the spool file writes one.
    static func takesDirectWrites(in directory: String) -> Bool {
        let path = directory + "/probe"
        defer { unlink(path) }
        close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600))
        let descriptor = CSystem_openDirectForWriting(path)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: SpoolFile.directAlignment,
                                                          alignment: SpoolFile.directAlignment)
        defer { page.deallocate() }
        page.initializeMemory(as: UInt8.self, repeating: 1)
        return pwrite(descriptor, page.baseAddress, page.count, 0) == page.count
    }

    /// Appends `count` pattern bytes from a buffer whose start is `misalignment` bytes past a page
    /// boundary, and adds them to `expected`.
    static func append(_ file: SpoolFile, _ count: Int, misalignment: Int = 0, to expected: inout [UInt8]) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count + misalignment,
                                                            alignment: SpoolFile.directAlignment)
        defer { buffer.deallocate() }
        let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[misalignment...])
        for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: (expected.count + index) &* 31 &+ 7) }
        expected += bytes
        return file.append(UnsafeRawBufferPointer(bytes), required: Int.max)
    }

    @Test func alignedPagesGoAroundTheCacheAndTheFileReadsBackWhole() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let direct = Self.takesDirectWrites(in: dir.file("spool"))
        let page = SpoolFile.directAlignment
        let file = try #require(spool.makeFile())
        var expected: [UInt8] = []
        // At an offset off a page boundary: through the cache, aligned buffer or not.
        #expect(Self.append(file, 100, to: &expected))
        #expect(Self.append(file, 3 * page + 10, to: &expected))
        #expect(file.directLength == 0)
        // Up to the next page boundary, then five pages and a bit: the pages go around the cache.
        #expect(Self.append(file, page - file.length % page, to: &expected))
        #expect(file.length % page == 0)
        #expect(Self.append(file, 5 * page + 123, to: &expected))
        #expect(file.directLength == (direct ? 5 * page : 0))
        // An unaligned buffer at an aligned offset: through the cache.
        #expect(Self.append(file, page - 123, to: &expected))
        #expect(file.length % page == 0)
        #expect(Self.append(file, 2 * page, misalignment: 1, to: &expected))
        #expect(file.directLength == (direct ? 5 * page : 0))
        // And two more aligned pages, the last bytes of the file.
        #expect(Self.append(file, 2 * page, to: &expected))
        #expect(file.directLength == (direct ? 7 * page : 0))
        file.finishWriting()
        #expect(file.length == expected.count)
        #expect(file.read(count: expected.count + 10) == expected)
        #expect(FileManager.default.contents(atPath: file.path).map(Array.init) == expected)
    }
}
#endif
