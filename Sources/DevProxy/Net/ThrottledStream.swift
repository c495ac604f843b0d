import Foundation
import Synchronization

/// One client connection's simulated link (`--throttle`, the web UI's throttle menu): the added
/// latency, and the client device's token buckets (`ThrottleDevice`, one each way per client
/// address, shared by all its connections), used by the streams the connection reads and writes
/// through (the plain socket, then TLS over it), so a CONNECT's tunnel or intercepted session has
/// the one link. It follows the proxy's `ThrottleSwitch`: a profile set or cleared while the
/// connection is open applies from its next read or write.
///
/// Used by the connection's own thread only, but for `covered(by:)`, which the thread that sets
/// Offline calls (`ProxyServer.cutOffline`).
final class ThrottledLink: @unchecked Sendable {
    private let conditions: ThrottleSwitch
    /// The client's address without its port: its connections share one `ThrottleDevice`.
    private let client: String
    /// That device's buckets, taken from `conditions.devices` when the link is first slowed (a
    /// link never slowed looks nothing up), held while the connection lives.
    private var device: ThrottleDevice?
    /// Upload tokens `allowedRead` took ahead of a read, settled by `didRead`.
    private var reservedUp = 0.0
    /// The switch's generation this link last read `setting` at.
    private var seen: UInt64
    /// What the switch says now; nil at full speed.
    private(set) var setting: ThrottleSwitch.Setting?
    /// The connection's destination names (a CONNECT's target, the server name, each plain-HTTP
    /// request's host), which `--throttle-hosts` is matched against; nil until one is known.
    private var names: [String]?
    /// `names`, for another thread: the one that switches to Offline asks whether this connection
    /// is covered (one uncontended lock per destination change).
    private let published = Mutex<[String]?>(nil)
    /// Whether the connection is slowed now: a profile is set, the destination is known and covered.
    private(set) var active = false
    /// Whether the profile set is Offline and covers the destination: new requests fail.
    private var offline = false
    /// For an HTTP/2 client: only its HEADERS and DATA frames make a turn, not the WINDOW_UPDATE,
    /// PING and SETTINGS frames that come while a response streams (`speaksHTTP2(after:)`).
    private var http2: HTTP2RequestFrames?
    /// HTTP/2: the session's output not yet parsed into whole frames, and the frames held until
    /// their stream's latency has passed (`holdResponses`), in the order they were written.
    private var outgoing: [UInt8] = []
    private var held: [HeldFrame] = []
    /// The bytes of `held`.
    private(set) var heldBytes = 0
    /// At most this many bytes wait for their latency: past it, a write waits until the first held
    /// frame is due and sends what is due (`ThrottledStream.write`), so the origin is read no faster
    /// than the client's link takes its bytes. Without it a download's whole body (up to the client's
    /// HTTP/2 window: curl's is 32 MiB) was read into memory during the latency, and its flow ended
    /// long before the client had it (272 ms for what took 5.5 s).
    static let heldLimit = 256 * 1024

    private struct HeldFrame {
        let bytes: [UInt8]
        let stream: UInt32
        /// HEADERS, PUSH_PROMISE or CONTINUATION: a header block, which must keep its order.
        let headerBlock: Bool
        /// Uptime; never earlier than the frame's before it.
        let due: TimeInterval
    }

    /// Bytes either way may go at once after a pause: a small burst, so the long-run rate is the profile's.
    static let burst = 16 * 1024
    /// When a read last returned part of a request, and whether one has since the last write.
    private var lastRead: TimeInterval = 0
    private var readSinceWrite = false

    /// `client`: the client's address without its port (`ThrottleDevices`' key).
    init(conditions: ThrottleSwitch, client: String) {
        self.conditions = conditions
        self.client = client
        seen = conditions.generation
        adopt(conditions.setting)
    }

    /// `active`, after reading the switch again if it moved.
    var isActive: Bool {
        follow()
        return active
    }

    /// Whether requests to the destination fail now (the Offline profile).
    var isOffline: Bool {
        follow()
        return offline
    }

    /// The profile flows record while the connection is slowed (or offline).
    var profile: ThrottleProfile? {
        follow()
        return active || offline ? setting?.profile : nil
    }

    /// The connection's destination is `names` from now on (nil: none, as while a CONNECT's `200` goes).
    func destination(_ names: [String]?) {
        self.names = names
        published.withLock { $0 = names }
        follow()
        decide()
    }

    /// A request's head was just read, before its host was known (plain-HTTP proxying, where each
    /// request's host decides: the head came through while the link was idle): its response waits
    /// the latency from now, as one read while the link was slowed does. Else a connection's first
    /// request, or one to a `--throttle-hosts` host after another host's, got no latency at all.
    func requestHeadRead() {
        guard active else { return }
        lastRead = Self.now()
        readSinceWrite = true
    }

    /// Whether `setting` covers the connection's destination now (none known: not covered, as
    /// while a CONNECT's `200` goes). Called from the thread that sets the throttle.
    func covered(by setting: ThrottleSwitch.Setting) -> Bool {
        published.withLock { names in names.map { setting.covers($0) } ?? false }
    }

    /// `active` and `offline`, from the setting and the destination.
    private func decide() {
        let covered = setting != nil && names.map { setting?.covers($0) == true } == true
        offline = covered && setting?.profile.offline == true
        active = covered && !offline
    }

    /// Reads the switch again when it moved since the last look.
    @inline(__always) private func follow() {
        let now = conditions.generation
        guard now != seen else { return }
        seen = now
        adopt(conditions.setting)
    }

    private func adopt(_ setting: ThrottleSwitch.Setting?) {
        self.setting = setting
        decide()
    }

    /// The device's buckets, looked up the first time the link needs them.
    private var buckets: ThrottleDevice {
        if let device { return device }
        let found = conditions.devices.device(for: client)
        device = found
        return found
    }

    /// The rates now and the switch generation they came with: a bucket that saw an older one
    /// starts again, full, at the new rate.
    private var rates: (down: Double, up: Double, generation: UInt64) {
        (setting?.profile.downloadBytesPerSecond ?? 1, setting?.profile.uploadBytesPerSecond ?? 1, seen)
    }

    static func now() -> TimeInterval { TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// How many of `wanted` bytes the next read may take, after waiting for the upload bucket
    /// when bytes are `ready` to be read (a read that would find nothing does not wait).
    /// The bytes are taken from the device's upload bucket ahead (`didRead` settles them), so the
    /// device's connections take turns, each waiting until its share is due.
    func allowedRead(_ wanted: Int, ready: Bool, socket: Socket) -> Int {
        follow()
        settleUp(read: 0)
        guard active, wanted > 0 else { return wanted }
        // Nothing to wait for: a read that may find bytes takes a little, counted after it.
        guard ready else { return min(wanted, Self.burst / 4) }
        let rates = rates
        let (amount, due) = buckets.up.reserve(upTo: Double(wanted), least: Double(min(wanted, Self.burst / 4)),
                                               rate: rates.up, generation: rates.generation, now: Self.now())
        reservedUp = amount
        Self.sleep(until: due, socket: socket)
        return Int(amount)
    }

    /// Takes the `read` bytes from the upload bucket, less what `allowedRead` took ahead, and
    /// gives back what was taken ahead but not read (a short read, an error, the end).
    private func settleUp(read: Int) {
        let difference = Double(read) - reservedUp
        reservedUp = 0
        guard difference != 0 else { return }
        let rates = rates
        buckets.up.take(difference, rate: rates.up, generation: rates.generation, now: Self.now())
    }

    /// The client speaks HTTP/2 from here on; `early` is what it sent before the stream read any.
    func speaksHTTP2(after early: [UInt8]) {
        var frames = HTTP2RequestFrames()
        _ = early.withUnsafeBytes { frames.scan($0) }
        http2 = frames
    }

    /// Counts the bytes a read returned from the client.
    /// An HTTP/2 client's frames are followed even while the link is idle, so that a profile set
    /// later knows where its frames begin.
    func didRead(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { settleUp(read: 0); return }
        let request = http2?.scan(bytes, at: active ? Self.now() : nil) ?? true
        guard active else { settleUp(read: 0); return }
        settleUp(read: bytes.count)
        guard request else { return }
        lastRead = Self.now()
        readSinceWrite = true
    }

    /// Before a write to the client: the turn's latency (Chrome's: the response starts no sooner
    /// than `latency` after the request's last byte; here, the first write after the client sent
    /// something waits until `latency` after that read).
    func beforeWrite(socket: Socket) {
        guard active, readSinceWrite, let latency = setting?.profile.latency, latency > 0 else { return }
        Self.sleep(until: lastRead + latency, socket: socket)
        readSinceWrite = false
    }

    /// Whether the client speaks HTTP/2: its responses wait the latency each (`holdResponses`),
    /// not the connection's next write.
    var isHTTP2: Bool { http2 != nil }

    /// HTTP/2: what of `bytes` (whole or partial frames the session wrote) may go now, with any held
    /// frames that came due first. Chrome's latency is per request: a stream's response (its first
    /// HEADERS frame, then everything of that stream) waits until `latency` after the request's
    /// last frame, while the other streams' frames go on. Header blocks stay in the order they
    /// were compressed (HPACK): a HEADERS frame after a held one is held too.
    func holdResponses(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        outgoing.append(contentsOf: bytes)
        var ready = releaseDue(all: false)
        let latency = active ? setting?.profile.latency ?? 0 : 0
        let now = Self.now()
        var offset = 0
        while outgoing.count - offset >= 9 {
            let length = Int(outgoing[offset]) << 16 | Int(outgoing[offset + 1]) << 8 | Int(outgoing[offset + 2])
            guard outgoing.count - offset >= 9 + length else { break }
            let type = outgoing[offset + 3]
            let stream = (UInt32(outgoing[offset + 5]) << 24 | UInt32(outgoing[offset + 6]) << 16
                          | UInt32(outgoing[offset + 7]) << 8 | UInt32(outgoing[offset + 8])) & 0x7fff_ffff
            let frame = outgoing[offset..<offset + 9 + length]
            offset += 9 + length
            let isHeaderBlock = type == 0x1 || type == 0x5 || type == 0x9
            var due: TimeInterval = 0
            if type == 0x1, stream != 0, let asked = http2?.requested.removeValue(forKey: stream) {
                due = asked + latency
            }
            // A held stream's frames wait behind its HEADERS, but for WINDOW_UPDATE: the client's
            // upload on it goes on meanwhile.
            let heldStream = stream != 0 && type != 0x8 && held.contains { $0.stream == stream }
            guard heldStream || due > now || (isHeaderBlock && held.contains { $0.headerBlock }) else {
                ready.append(contentsOf: frame)
                continue
            }
            held.append(HeldFrame(bytes: Array(frame), stream: stream, headerBlock: isHeaderBlock,
                                  due: max(due, held.last?.due ?? 0)))
            heldBytes += frame.count
        }
        outgoing.removeFirst(offset)
        return ready
    }

    /// The held frames that came due (`all`: every one), in the order they were written.
    func releaseDue(all: Bool) -> [UInt8] {
        guard !held.isEmpty else { return [] }
        let now = Self.now()
        let latencyOff = !active || (setting?.profile.latency ?? 0) == 0
        let count = all || latencyOff ? held.count : held.prefix { $0.due <= now }.count
        guard count > 0 else { return [] }
        let released = held.prefix(count).flatMap(\.bytes)
        held.removeFirst(count)
        heldBytes -= released.count
        return released
    }

    /// When the first held frame comes due (uptime); nil when none is held.
    var nextDue: TimeInterval? { held.first?.due }

    /// Takes `count` bytes (at most `burst`) from the device's download bucket and waits until
    /// they may go to the client: its turn after the bytes its other connections took before.
    func send(_ count: Int, socket: Socket) {
        let rates = rates
        let due = buckets.down.reserve(Double(count), rate: rates.down, generation: rates.generation, now: Self.now())
        Self.sleep(until: due, socket: socket)
    }

    /// Counts a write to the client as ended.
    func didWrite() {
        readSinceWrite = false
    }

    /// Sleeps until `deadline` (uptime seconds), in a poll on `socket` for nothing: a socket cut
    /// by shutdown (`Socket.abort`) or reset by its peer ends the sleep early, and the next read
    /// or write reports it.
    static func sleep(until deadline: TimeInterval, socket: Socket) {
        while true {
            let remaining = deadline - now()
            guard remaining > 0 else { return }
            var poller = pollfd(fd: socket.fd, events: 0, revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(remaining * 1000, 1000).rounded(.up))))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { return }
        }
    }
}

/// One client device's bandwidth (`ThrottleDevices`): what DevProxy sends it and what it reads
/// from it, each a `SharedBucket` all the device's throttled connections draw from, so its
/// concurrent transfers split the profile's rate, as Chrome DevTools' throttling shares one rate
/// among a page's requests.
final class ThrottleDevice: Sendable {
    let down = SharedBucket()
    let up = SharedBucket()
}

/// A token bucket several connection threads draw from: refilled at `rate` a second up to
/// `ThrottledLink.burst`. A taker takes its bytes at once, under a lock held for a few
/// arithmetic operations (once per piece of up to 16 KiB, never per byte), even when that leaves
/// the bucket in debt, and learns when they are due: when the debt they made is paid. Then it
/// sleeps on its own. So the takers queue in the order they came, each waiting for the bytes
/// taken before it, and one that comes back for its next piece queues behind the others: a
/// device's transfers take turns and none starves.
final class SharedBucket: Sendable {
    private struct State {
        var rate = 1.0
        var level = Double(ThrottledLink.burst)
        var updated: TimeInterval = 0
        /// The `ThrottleSwitch` generation `rate` came with.
        var generation: UInt64 = 0
        var started = false

        /// Refills to `now`, after starting again full at `rate` if the setting changed since.
        mutating func refill(rate: Double, generation: UInt64, now: TimeInterval) {
            if !started || generation > self.generation {
                self = State(rate: max(rate, 1), updated: now, generation: generation, started: true)
                return
            }
            level = min(Double(ThrottledLink.burst), level + max(0, now - updated) * self.rate)
            updated = max(updated, now)
        }

        /// When the bucket is out of debt.
        func due(now: TimeInterval) -> TimeInterval { level >= 0 ? now : now + -level / rate }
    }

    private let state = Mutex(State())

    /// Takes `amount` bytes; returns when they may go (uptime): `now` when the bucket held them.
    func reserve(_ amount: Double, rate: Double, generation: UInt64, now: TimeInterval) -> TimeInterval {
        state.withLock { state in
            state.refill(rate: rate, generation: generation, now: now)
            state.level -= amount
            return state.due(now: now)
        }
    }

    /// Takes what the bucket holds of `wanted` bytes, `least` at least, and says how many and
    /// when they may go.
    func reserve(upTo wanted: Double, least: Double, rate: Double, generation: UInt64,
                 now: TimeInterval) -> (amount: Double, due: TimeInterval) {
        state.withLock { state in
            state.refill(rate: rate, generation: generation, now: now)
            let amount = min(wanted, max(least, state.level.rounded(.down)))
            state.level -= amount
            return (amount, state.due(now: now))
        }
    }

    /// Takes `amount` bytes already gone (negative: gives back bytes taken but not used).
    func take(_ amount: Double, rate: Double, generation: UInt64, now: TimeInterval) {
        state.withLock { state in
            state.refill(rate: rate, generation: generation, now: now)
            state.level = min(Double(ThrottledLink.burst), state.level - amount)
        }
    }
}

/// The client devices' buckets, by client address without its port (a phone over WireGuard: its
/// tunnel address; curl on the proxy's machine: 127.0.0.1): one `ThrottleDevice` per address
/// while any of its connections is throttled. Links hold their device; the map holds it weakly,
/// so a device whose connections all closed goes with the last of them, and its entry is swept
/// once the map has grown to twice what was live at the last sweep (64 at least): the map stays
/// bounded by the devices connected now.
final class ThrottleDevices: Sendable {
    private struct Entry {
        weak var device: ThrottleDevice?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var sweepAt = 64
    }

    private let state = Mutex(State())

    /// The device at `address`, made when none of its connections holds it.
    func device(for address: String) -> ThrottleDevice {
        state.withLock { state in
            if let device = state.entries[address]?.device { return device }
            if state.entries[address] == nil, state.entries.count >= state.sweepAt {
                state.entries = state.entries.filter { $0.value.device != nil }
                state.sweepAt = max(64, 2 * state.entries.count)
            }
            let device = ThrottleDevice()
            state.entries[address] = Entry(device: device)
            return device
        }
    }

    /// Entries in the map, live or not yet swept.
    var entries: Int { state.withLock { $0.entries.count } }

    /// Devices some connection holds now.
    var live: Int { state.withLock { $0.entries.values.filter { $0.device != nil }.count } }
}

/// A client stream through a `ThrottledLink`: reads at the link's upload rate, writes at its
/// download rate in pieces of at most `ThrottledLink.burst` bytes, each sent at once, and the
/// first write of a turn after the latency. Memory stays bounded: a write returns only once its
/// bytes went, so the relay reads its origin no faster than the client's link takes them.
final class ThrottledStream: ByteStream, @unchecked Sendable {
    let inner: ByteStream
    let link: ThrottledLink

    init(_ inner: ByteStream, link: ThrottledLink) {
        self.inner = inner
        self.link = link
    }

    var socket: Socket { inner.socket }
    var inputReady: Bool { inner.inputReady }
    var pending: Int { inner.pending }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let allowed = link.allowedRead(buffer.count, ready: true, socket: socket)
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<allowed]))
        link.didRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        return count
    }

    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        let ready = link.isActive && (inner.pending > 0 || inner.inputReady)
        let allowed = link.allowedRead(buffer.count, ready: ready, socket: socket)
        let count = try inner.readAvailable(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<allowed]))
        if let count { link.didRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
        return count
    }

    func write(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws {
        // HTTP/2: each response waits its own latency; other streams' frames go at once.
        if link.isHTTP2 && (link.isActive || link.nextDue != nil) {
            let ready = link.holdResponses(bytes)
            if !ready.isEmpty { try ready.withUnsafeBytes { try send($0, flush: flush) } }
            // Bounded: past `heldLimit`, the write waits for the first held frame's latency to pass
            // and sends what came due (other streams wait that long at most).
            while link.heldBytes > ThrottledLink.heldLimit, let due = link.nextDue {
                ThrottledLink.sleep(until: due, socket: socket)
                guard ThrottledLink.now() >= due else { break }  // the socket was cut: the next write says so
                let released = link.releaseDue(all: false)
                if !released.isEmpty { try released.withUnsafeBytes { try send($0, flush: true) } }
            }
            return
        }
        try send(bytes, flush: flush)
    }

    /// Writes `bytes` at the link's rate, after its latency (HTTP/1.1: the turn's first write).
    private func send(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws {
        guard link.isActive, !bytes.isEmpty else {
            try inner.write(bytes, flush: flush)
            if !bytes.isEmpty { link.didWrite() }
            return
        }
        if !link.isHTTP2 { link.beforeWrite(socket: socket) }
        var offset = 0
        while offset < bytes.count {
            let piece = min(bytes.count - offset, ThrottledLink.burst)
            link.send(piece, socket: socket)
            try inner.write(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + piece]), flush: true)
            offset += piece
        }
        link.didWrite()
    }

    /// Also sends the held HTTP/2 frames that came due (the connection's loop calls it when the
    /// first one does, `nextDue`).
    func flush() throws {
        let due = link.releaseDue(all: false)
        if !due.isEmpty { try due.withUnsafeBytes { try send($0, flush: true) } }
        try inner.flush()
    }

    /// Held frames go first, early rather than never.
    func close() {
        sendHeld()
        inner.close()
    }

    func releaseBuffers() { inner.releaseBuffers() }

    func closeWrite() {
        sendHeld()
        inner.closeWrite()
    }

    private func sendHeld() {
        let held = link.releaseDue(all: true)
        if !held.isEmpty { try? held.withUnsafeBytes { try send($0, flush: true) } }
    }
}

/// Follows the frames an HTTP/2 client sends (after its 24-byte connection preface) across reads,
/// and says whether a read carried part of a request: a HEADERS (RFC 9113 §6.2) or DATA (§6.1) frame.
/// It runs on every read of an HTTP/2 client whose proxy can throttle, so it steps over payloads
/// and keeps a frame header's first four bytes (length and type, §4.1) in one integer.
struct HTTP2RequestFrames {
    private var prefaceLeft = 24
    /// How many bytes of the current 9-byte frame header were read.
    private var headerRead = 0
    /// The header's length (24 bits) and type (8 bits), as far as they were read.
    private var lengthAndType: UInt32 = 0
    private var payloadLeft = 0
    private var inRequestFrame = false
    /// The header's stream identifier, as far as it was read.
    private var streamID: UInt32 = 0
    /// When each stream's request last sent a HEADERS or DATA frame (uptime), while the link is
    /// active: its response waits the latency from there. Taken when the response starts; cleared
    /// whole past `requestedLimit` (streams reset before an answer leave theirs).
    var requested: [UInt32: TimeInterval] = [:]
    static let requestedLimit = 4096

    /// Takes the next bytes; true when any of them belong to a HEADERS or DATA frame. With `time`,
    /// records it as the latest request frame of each stream whose HEADERS or DATA frame began here.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, at time: TimeInterval? = nil) -> Bool {
        var found = false
        var index = min(prefaceLeft, bytes.count)
        prefaceLeft -= index
        while index < bytes.count {
            if payloadLeft > 0 {
                let skip = min(payloadLeft, bytes.count - index)
                payloadLeft -= skip
                index += skip
                found = found || inRequestFrame
                continue
            }
            if headerRead < 4 {
                lengthAndType = lengthAndType << 8 | UInt32(bytes[index])
                headerRead += 1
                index += 1
            } else if headerRead == 4 {
                // Flags: not needed.
                headerRead += 1
                index += 1
            } else {
                streamID = streamID << 8 | UInt32(bytes[index])
                headerRead += 1
                index += 1
            }
            guard headerRead == 9 else { continue }
            payloadLeft = Int(lengthAndType >> 8)
            let type = lengthAndType & 0xff
            inRequestFrame = type == 0x0 || type == 0x1
            found = found || inRequestFrame
            // A request begins with HEADERS; its DATA moves its end while it is not answered yet
            // (a bidirectional stream's later frames, once answered, wait for nothing).
            if inRequestFrame, let time, type == 0x1 || requested[streamID & 0x7fff_ffff] != nil {
                if requested.count >= Self.requestedLimit { requested.removeAll() }
                requested[streamID & 0x7fff_ffff] = time
            }
            headerRead = 0
            lengthAndType = 0
            streamID = 0
        }
        return found
    }
}
