extension Flow {
    /// The process on this machine that opened the client's connection (`SocketOwners`), as
    /// Proxyman and Charles name the client app: the flow log's `client_process`.
    public struct ClientProcess: Codable, Sendable, Equatable {
        public var pid: Int
        /// `/proc/PID/comm`: the name the kernel keeps (at most 15 bytes, `curl`, `python3`).
        public var name: String
        /// `/proc/PID/exe`'s target (`/usr/bin/curl`); nil when it cannot be read.
        public var exe: String?

        public init(pid: Int, name: String, exe: String? = nil) {
            self.pid = pid
            self.name = name
            self.exe = exe
        }
    }
}

extension Flow.ClientProcess: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("exe", exe)
            f.string("name", name)
            f.int("pid", pid)
        }
    }
}
