import Testing

extension Trait where Self == TimeLimitTrait {
    /// Ten minutes: a backstop for a test whose every wait has a timeout of its own (subprocesses,
    /// sockets, `flows(count:timeout:)`), so a hang still ends the run instead of stalling CI.
    ///
    /// Tighter limits were not what they said: in `.ci/run`'s parallel run on two cores, every
    /// time-limited test was reported ending at one and the same moment, 261-279 s into the run,
    /// whatever its body took, and a one-minute limit was once reported exceeded by a test whose
    /// body takes two seconds (SOCKS5ListenerTests, session 42). The whole run takes about seven
    /// minutes, so ten cannot fire for that.
    static var backstop: Self { .timeLimit(.minutes(10)) }
}
