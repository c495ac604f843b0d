/// DevProxy's version: what `devproxy --version` prints, the web UI's API reports, and HAR files
/// name as their creator's.
public enum DevProxyVersion {
    public static let current = "0.1.0"
}
