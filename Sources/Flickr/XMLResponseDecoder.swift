import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Decodes Flickr's XML responses (`format=rest`) with libxml2, through FoundationXML.
///
/// A document that declares a DTD or entities is refused before parsing, so nothing is
/// ever expanded (no billion laughs, no external entity reads).
enum XMLResponseDecoder {
    static func photoPage(_ data: Data, page: Int?) throws -> PhotoPage {
        let method = FlickrMethod.photosSearch
        let root = try parse(data, method: method, page: page)
        guard let photos = root.child("photos") else {
            throw FlickrError(.malformedResponse, method: method, page: page, "the response has no photos")
        }
        let decoded = try photos.children.filter { $0.name == "photo" }.enumerated().map { index, element in
            try FlickrFields.photo(element.attributes, description: element.child("description")?.text, index: index, page: page)
        }
        return try FlickrFields.page(photos.attributes, photos: decoded, requestedPage: page)
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
        if declaresDTD(data) {
            throw FlickrError(.malformedResponse, method: method, page: page,
                              "the XML declares a DTD or entities, which Flickr never sends; refused without expanding it")
        }
        let builder = TreeBuilder()
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

    private static let doctype = Array("<!doctype".utf8)
    private static let entity = Array("<!entity".utf8)

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
}

/// Builds the element tree; aborts on any DTD declaration the pre-scan missed.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLElementNode?
    var refusal: String?
    /// The root element was closed.
    private(set) var isComplete = false
    private var stack: [XMLElementNode] = []

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        let node = XMLElementNode(name: elementName, attributes: attributes)
        if let parent = stack.last { parent.children.append(node) } else { root = node }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
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
