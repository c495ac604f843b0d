import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A minimal element tree read with `XMLParser`: names, attributes, text and children.
struct XMLElementTree {
    var name: String
    var attributes: [String: String]
    var text: String
    var children: [XMLElementTree]

    /// Parses a whole document and returns its root element.
    ///
    /// - Throws: `PolicyError(.unreadable)` with the parser's line and message.
    static func parse(_ data: Data) throws -> XMLElementTree {
        // FoundationXML's parser traps on element names that are not UTF-8 (found by fuzzing);
        // Android reads resource XML as UTF-8, so anything else is unreadable anyway.
        guard let text = String(validating: [UInt8](data), as: UTF8.self) else {
            throw PolicyError(.unreadable, "the XML is not valid UTF-8")
        }
        // It also crashes on a processing instruction without data (strlen of NULL). Policies
        // have none besides the XML declaration, so any other `<?` is refused up front.
        let body = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        let declaration = body.prefix { $0 != ">" }
        let isDeclaration = declaration.hasPrefix("<?xml") && declaration.dropFirst(5).first?.isWhitespace == true
            && declaration.contains("version")
        let rest = isDeclaration ? body.dropFirst(declaration.count) : body[...]
        guard !rest.contains("<?") else {
            throw PolicyError(.unreadable, "the XML holds a processing instruction (`<?…?>`) besides the declaration")
        }
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            let message = parser.parserError.map { "\($0.localizedDescription)" } ?? "no root element"
            throw PolicyError(.unreadable, "the XML does not parse (line \(parser.lineNumber)): \(message)")
        }
        return root
    }

    /// Children named `name`, in document order.
    func children(named name: String) -> [XMLElementTree] { children.filter { $0.name == name } }

    /// Collects elements from parser events.
    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            stack.append(XMLElementTree(name: elementName, attributes: attributeDict, text: "", children: []))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?) {
            guard let finished = stack.popLast() else { return }
            if stack.isEmpty {
                root = finished
            } else {
                stack[stack.count - 1].children.append(finished)
            }
        }
    }
}
