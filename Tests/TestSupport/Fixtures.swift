import Foundation

/// The test data kept in the repository under `Tests/Fixtures/`: other projects' test vectors
/// and certificates, each folder with a `SOURCES.md` naming where its files came from.
///
/// Found from this file's own path, so it works in any checkout or clone and never looks
/// outside the package root.
public enum Fixtures {
    /// `Tests/Fixtures` in the package this file was compiled from.
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The URL of `relative` under `Tests/Fixtures`, e.g. `trustkit/expected-pins.json`.
    public static func url(_ relative: String) -> URL { directory.appendingPathComponent(relative) }

    /// The file-system path of `relative` under `Tests/Fixtures`.
    public static func path(_ relative: String) -> String { url(relative).path }
}
