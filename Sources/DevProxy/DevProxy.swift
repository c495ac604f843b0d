import CertAuthority
/// The intercepting proxy engine.
public enum DevProxyEngine {}
