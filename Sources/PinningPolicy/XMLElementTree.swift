import Foundation
#if os(Linux)
import CLibXML2
#elseif canImport(FoundationXML)
import FoundationXML
#endif

/// A minimal element tree: names (with their prefix, as written), attributes, text and children.
/// On Linux it is read with libxml2 loaded on first use (`CLibXML2`): FoundationXML would link
/// libxml2 and ICU into every devproxy process (~1 MiB resident) for the one command that reads
/// XML. Elsewhere with Foundation's `XMLParser`, which sits on the system's libxml2.
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
        try builder.parse(data)
        guard let root = builder.root else { throw PolicyError(.unreadable, "the XML does not parse: no root element") }
        return root
    }

    /// Children named `name`, in document order.
    func children(named name: String) -> [XMLElementTree] { children.filter { $0.name == name } }

    /// Whether this element, or any element below it, is named `name`.
    func contains(named name: String) -> Bool { self.name == name || children.contains { $0.contains(named: name) } }

    /// Builds the tree from element events.
    private final class Builder {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?

        func start(_ name: String, _ attributes: [String: String]) {
            stack.append(XMLElementTree(name: name, attributes: attributes, text: "", children: []))
        }

        func text(_ string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func end() {
            guard let finished = stack.popLast() else { return }
            if stack.isEmpty {
                root = finished
            } else {
                stack[stack.count - 1].children.append(finished)
            }
        }

        #if os(Linux)
        func parse(_ data: Data) throws {
            var events = CLibXML2_Events()
            events.context = Unmanaged.passUnretained(self).toOpaque()
            events.start = { context, name, attributes in
                let builder = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                var pairs: [String: String] = [:]
                var index = 0
                while let key = attributes?[index], let value = attributes?[index + 1] {
                    pairs[String(cString: key)] = String(cString: value)
                    index += 2
                }
                builder.start(String(cString: name!), pairs)
            }
            events.text = { context, bytes, count in
                let builder = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                builder.text(String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self))
            }
            events.end = { context in Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue().end() }
            var message = [CChar](repeating: 0, count: 512)
            var line: Int32 = 0
            let result = data.withUnsafeBytes { bytes in
                CLibXML2_parse(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, &events,
                               &message, message.count, &line)
            }
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch result {
            case Int32(CLibXML2_OK): return
            case Int32(CLibXML2_Unavailable): throw PolicyError(.unreadable, "the XML cannot be read: \(reason)")
            default: throw PolicyError(.unreadable, "the XML does not parse (line \(line)): \(reason)")
            }
        }
        #else
        func parse(_ data: Data) throws {
            let parser = XMLParser(data: data)
            let delegate = Delegate(builder: self)
            parser.delegate = delegate
            guard parser.parse() else {
                let message = parser.parserError.map { "\($0.localizedDescription)" } ?? "no root element"
                throw PolicyError(.unreadable, "the XML does not parse (line \(parser.lineNumber)): \(message)")
            }
        }

        /// Hands `XMLParser`'s callbacks to the builder.
        private final class Delegate: NSObject, XMLParserDelegate {
            let builder: Builder
            init(builder: Builder) { self.builder = builder }

            func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
                builder.start(elementName, attributeDict)
            }

            func parser(_ parser: XMLParser, foundCharacters string: String) { builder.text(string) }

            func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
                builder.text(String(decoding: CDATABlock, as: UTF8.self))
            }

            func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                        qualifiedName qName: String?) {
                builder.end()
            }
        }
        #endif
    }
}
