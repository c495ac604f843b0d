import Foundation
import PackagePlugin

/// Turns every file under the target's `Assets/` into Swift source at build time (one raw string
/// literal per text file, base64 for binary ones), so the web UI ships inside the binary.
///
/// Why not `resources: [.embedInCode]`: SwiftPM emits those as byte-array literals, which the
/// type checker is slow on (measured: 200 KB of assets took 120 s in a debug build); a string
/// literal compiles in milliseconds. The plugin runs on every build, so adding, editing or
/// removing an asset needs no manual step.
@main
struct EmbedWebAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // `Target.directoryURL` needs tools version 6.1; this package declares 6.0.
        let assets = URL(fileURLWithPath: target.directory.string).appending(path: "Assets")
        let output = context.pluginWorkDirectoryURL.appending(path: "WebAssets+Embedded.swift")
        var inputs: [URL] = [assets]
        if let walker = FileManager.default.enumerator(at: assets, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                inputs.append(url)
            }
        }
        return [.buildCommand(displayName: "Embedding \(inputs.count - 1) web asset(s) of \(target.name)",
                              executable: try context.tool(named: "EmbedWebAssetsTool").url,
                              arguments: [assets.path, output.path],
                              inputFiles: inputs, outputFiles: [output])]
    }
}
