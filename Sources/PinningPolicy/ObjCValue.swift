import Foundation

/// Objective-C value coercions TrustKit relies on when it reads its configuration dictionary.
enum ObjCValue {
    /// `-[NSNumber boolValue]` / `-[NSString boolValue]` of a plist or JSON value.
    ///
    /// NSString's rule: skip leading whitespace and one sign and leading zeros, then true if the
    /// next character is Y, y, T, t or a digit 1–9. That is why `<string>YES</string>` works in an
    /// Info.plist.
    static func bool(_ value: Any) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.intValue != 0 }
        if let int = value as? Int { return int != 0 }
        guard let text = value as? String else { return nil }
        var rest = Substring(text).drop { $0.isWhitespace }
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        rest = rest.drop { $0 == "0" }
        guard let first = rest.first else { return false }
        return "YyTt123456789".contains(first)
    }
}
