import CTLS
/// The team certificate authority.
public enum CA {}
