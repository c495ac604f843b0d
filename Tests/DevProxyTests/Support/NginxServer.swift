import Foundation
import TestSupport

/// nginx (Debian's nginx-light) over TLS with HTTP/1.1 and HTTP/2 (ALPN) on a free loopback port,
/// its own configuration in a temporary directory; `directives` go into its one server block.
/// Killed (SIGKILL) when released.
final class NginxServer {
    let port: Int
    private let process: Process
    private let directory = TemporaryDirectory()

    init(certificate: String, key: String, directives: String) throws {
        let directory = directory
        (process, port) = try HTTP2Origin.launchOnFreePort { port in
            try Self.nginx(port: port, directory: directory, certificate: certificate, key: key, directives: directives)
        }
    }

    private static func nginx(port: Int, directory: TemporaryDirectory, certificate: String, key: String,
                              directives: String) throws -> Process {
        let temp = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        let config = """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(directory.file("nginx.pid"));
        error_log \(directory.file("error.log")) warn;
        events { worker_connections 64; }
        http {
            access_log off;
            client_body_temp_path \(temp);
            proxy_temp_path \(temp);
            fastcgi_temp_path \(temp);
            uwsgi_temp_path \(temp);
            scgi_temp_path \(temp);
            server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(certificate);
                ssl_certificate_key \(key);
        \(directives)
            }
        }
        """
        let path = directory.write("nginx.conf", config)
        return Process.quietServer("/usr/sbin/nginx", ["-c", path, "-p", directory.path, "-e", directory.file("error.log")])
    }

    deinit {
        // SIGKILL: children of Foundation's Process inherit a blocked SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

extension Process {
    /// A server process for a test's origin, not started: no input, its output discarded.
    static func quietServer(_ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        return process
    }
}
