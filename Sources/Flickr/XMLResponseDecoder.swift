import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Decodes Flickr's XML responses (`format=rest`) with libxml2, through FoundationXML.
///
/// Refused before parsing: a document that declares a DTD or entities (nothing is ever
/// expanded: no billion laughs, no external entity reads), one in any encoding but UTF-8
/// (Flickr sends UTF-8; in UTF-16 a DTD would hide from the byte scan), and one whose bytes
/// are not valid UTF-8 (FoundationXML traps on such names). Refused
/// while parsing: elements nested deeper than `maximumDepth`, as the JSON parser refuses
/// deep nesting, so that no document costs a deep recursion.
enum XMLResponseDecoder {
    /// Flickr's documents are four levels deep; the JSON parser's bound is the same.
    static let maximumDepth = 512

    static func photoPage(_ data: Data, page: Int?) throws -> PhotoPage {
        let method = FlickrMethod.photosSearch
        let root = try parse(data, method: method, page: page)
        guard let photos = root.child("photos") else {
            throw FlickrError(.malformedResponse, method: method, page: page, "the response has no photos")
        }
        let records = photos.children.filter { $0.name == "photo" }.enumerated().map { index, element in
            FlickrFields.photo(element.attributes, description: element.child("description")?.text, index: index, page: page)
        }
        return try FlickrFields.page(photos.attributes, records: records, requestedPage: page)
    }

    static func placeInfo(_ data: Data) throws -> PlaceInfo {
        let method = FlickrMethod.placeInfo
        let root = try parse(data, method: method, page: nil)
        guard let place = root.child("place") else {
            throw FlickrError(.malformedResponse, method: method, "the response has no place")
        }
        guard let placeID = LooseValue.nonEmptyString(place.attributes["place_id"]) else {
            throw FlickrError(.malformedResponse, method: method, "the place has no place_id")
        }
        func level(_ name: String) -> PlaceLevel? {
            guard let element = place.child(name) else { return nil }
            return FlickrFields.level(element.attributes, name: element.text)
        }
        return PlaceInfo(placeID: placeID, woeID: LooseValue.nonEmptyString(place.attributes["woeid"]),
                         placeType: LooseValue.nonEmptyString(place.attributes["place_type"]),
                         placeTypeID: LooseValue.int(place.attributes["place_type_id"]),
                         name: LooseValue.nonEmptyString(place.attributes["name"]), locality: level("locality"),
                         county: level("county"), region: level("region"), country: level("country"))
    }

    /// The `<rsp>` element; a `stat="fail"` envelope becomes the API error it carries.
    static func parse(_ data: Data, method: String, page: Int?) throws -> XMLElementNode {
        if let encoding = foreignEncoding(data) {
            throw FlickrError(.malformedResponse, method: method, page: page,
                              "the XML is encoded in \(encoding), not UTF-8 as Flickr sends it; refused")
        }
        // FoundationXML traps on names that are not UTF-8 (libxml2 hands them over before
        // it reports the encoding error): check the bytes first.
        guard String(validating: data, as: UTF8.self) != nil else {
            throw FlickrError(.malformedResponse, method: method, page: page, "the XML is not valid UTF-8; refused")
        }
        if declaresDTD(data) {
            throw FlickrError(.malformedResponse, method: method, page: page,
                              "the XML declares a DTD or entities, which Flickr never sends; refused without expanding it")
        }
        // FoundationXML reads a processing instruction without data through a NULL pointer
        // (`<?target?>` crashes the process): refused before it is parsed.
        if holdsProcessingInstruction(data) {
            throw FlickrError(.malformedResponse, method: method, page: page,
                              "the XML holds a processing instruction (<?…?>), which Flickr never sends; refused")
        }
        let builder = TreeBuilder(maximumDepth: maximumDepth)
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        // libxml2 can accept a document that simply stops; only a closed root is whole.
        guard parser.parse(), let root = builder.root, builder.isComplete, builder.refusal == nil else {
            let reason = builder.refusal ?? (data.isEmpty ? "empty body" : "not well-formed XML (truncated or garbled)")
            throw FlickrError(.malformedResponse, method: method, page: page, "the response is not valid XML: \(reason)")
        }
        guard root.name == "rsp" else {
            throw FlickrError(.malformedResponse, method: method, page: page, "the XML root is <\(root.name)>, not <rsp>")
        }
        switch LooseValue.string(root.attributes["stat"]) {
        case "ok": return root
        case "fail":
            let error = root.child("err")
            throw FlickrFields.failure(code: error?.attributes["code"], message: error?.attributes["msg"], method: method, page: page)
        default:
            throw FlickrError(.malformedResponse, method: method, page: page, "the response has no stat")
        }
    }

    /// The encoding of a document that is not UTF-8 (nor its ASCII subset), from its byte
    /// order mark, its first bytes, or its XML declaration; nil for UTF-8.
    static func foreignEncoding(_ data: Data) -> String? {
        let head = [UInt8](data.prefix(200))
        if head.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || head.starts(with: [0x00, 0x00, 0x00, 0x3C])
            || head.starts(with: [0xFF, 0xFE, 0x00, 0x00]) || head.starts(with: [0x3C, 0x00, 0x00, 0x00]) { return "UTF-32" }
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0x00, 0x3C]) { return "UTF-16 (big-endian)" }
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0x3C, 0x00]) { return "UTF-16 (little-endian)" }
        if head.starts(with: [0x4C, 0x6F, 0xA7, 0x94]) { return "EBCDIC" }
        // <?xml version="1.0" encoding="…"?>
        let prolog = String(decoding: head, as: UTF8.self)
        guard prolog.hasPrefix("<?xml") || prolog.hasPrefix("\u{FEFF}<?xml"), let close = prolog.range(of: "?>") else { return nil }
        let declaration = prolog[..<close.lowerBound].lowercased()
        guard let start = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[start.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        let name = String(rest.prefix { $0 != "\"" && $0 != "'" && $0 != " " })
        return ["utf-8", "utf8", "us-ascii", "ascii"].contains(name) ? nil : name
    }

    private static let doctype = Array("<!doctype".utf8)
    private static let entity = Array("<!entity".utf8)

    /// Whether `<?` appears anywhere but in the XML declaration that may open the document
    /// (`<?xml` and a space, after an optional byte order mark). Also inside a comment or
    /// CDATA: Flickr sends neither, and a refused document is safer than a crashed process.
    static func holdsProcessingInstruction(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let declaration = Array("<?xml".utf8)
        if bytes[start...].starts(with: declaration), bytes.count > start + declaration.count,
           [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start + declaration.count]) {
            start += declaration.count
        }
        return zip(bytes[start...], bytes[start...].dropFirst()).contains { $0 == UInt8(ascii: "<") && $1 == UInt8(ascii: "?") }
    }

    /// Whether the document contains `<!DOCTYPE` or `<!ENTITY` (any case).
    static func declaresDTD(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 else { return false }
        for index in 0..<(bytes.count - 1) where bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "!") {
            for pattern in [doctype, entity] where index + pattern.count <= bytes.count {
                if zip(bytes[index..<index + pattern.count], pattern).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) { return true }
            }
        }
        return false
    }
}

/// A parsed element: name, attributes, children, and its own text.
///
/// Released without recursion: a tree is freed level by level, however deep.
final class XMLElementNode {
    let name: String
    /// Attribute values as `JSONValue.string`, so that one `FlickrFields` reads both formats.
    let attributes: JSONObject
    var children: [XMLElementNode] = []
    var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = JSONObject(attributes.mapValues(JSONValue.string))
    }

    func child(_ name: String) -> XMLElementNode? { children.first { $0.name == name } }

    deinit {
        var detached = children
        children = []
        while let node = detached.popLast() {
            detached += node.children
            node.children = []
        }
    }
}

/// Builds the element tree; aborts on nesting deeper than its bound, and on any DTD
/// declaration the pre-scan missed.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLElementNode?
    var refusal: String?
    /// The root element was closed.
    private(set) var isComplete = false
    private var stack: [XMLElementNode] = []
    private let maximumDepth: Int

    init(maximumDepth: Int) {
        self.maximumDepth = maximumDepth
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        guard refusal == nil else { return }
        guard stack.count < maximumDepth else {
            refusal = "elements are nested deeper than \(maximumDepth) levels"
            parser.abortParsing()
            return
        }
        let node = XMLElementNode(name: elementName, attributes: attributes)
        if let parent = stack.last { parent.children.append(node) } else { root = node }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard refusal == nil, !stack.isEmpty else { return }
        stack.removeLast()
        if stack.isEmpty { isComplete = true }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        stack.last?.text += string
    }

    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
        refuse(parser)
    }

    func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
        refuse(parser)
    }

    func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
        refuse(parser)
    }

    private func refuse(_ parser: XMLParser) {
        refusal = "it declares a DTD"
        parser.abortParsing()
    }
}
