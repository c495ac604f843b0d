import CertAuthority
/// Pinning policies (TrustKit, Android Network Security Config, OkHttp) and their evaluation.
public enum Pinning {}
