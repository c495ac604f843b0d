import Foundation

/// Headless Chromium driven by Playwright (`Resources/webui_browser.py`) against a running web
/// UI: the browser half of the web UI tests, and the screenshot generator for the README.
public enum WebUIBrowser {
    /// The system browser the script launches; Playwright's own download is never used.
    public static let chromium = "/usr/bin/chromium"

    /// Why the browser tests cannot run here, or nil when they can (`scripts/test` installs both).
    public static let missing: String? = {
        guard FileManager.default.isExecutableFile(atPath: chromium) else { return "\(chromium) is not installed" }
        let probe = try? Subprocess.run("python3", ["-c", "import playwright.sync_api"], timeout: 30)
        guard probe?.status == 0 else { return "the Python package playwright is not installed" }
        return nil
    }()

    /// Runs the script: `ui` is the `web ui:` URL (with its token), `proxy` the proxy's
    /// `http://127.0.0.1:PORT`; screenshots go to `shots` when given; `only` runs that one check.
    /// `script` names another script in `Resources/` taking the same `--ui` and `--proxy`.
    /// - Returns: the script's result; it prints `PASS name …` / `FAIL name …` a check.
    public static func run(ui: String, proxy: String, shots: String? = nil, only: String? = nil,
                           script name: String = "webui_browser.py",
                           timeout: TimeInterval = 180) throws -> Subprocess.Result {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/\(name)").path
        return try Subprocess.run("python3", [script, "--ui", ui, "--proxy", proxy] + (shots.map { ["--shots", $0] } ?? [])
                                      + (only.map { ["--only", $0] } ?? []),
                                  timeout: timeout)
    }

    /// The checks that passed, by name, from the script's output.
    public static func passed(_ result: Subprocess.Result) -> Set<String> {
        Set(result.stdout.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            return words.first == "PASS" && words.count > 1 ? String(words[1]) : nil
        })
    }
}
