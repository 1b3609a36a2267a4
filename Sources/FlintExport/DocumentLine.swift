import FlintModel
import Foundation

/// One document as a line of Firestore REST JSON, written straight into bytes: an export of a
/// million documents spends its time here, and building Foundation dictionaries for
/// JSONSerialization was most of it.
enum DocumentLine {
    static func encode(_ doc: Document, _ id: DatabaseID, into out: inout [UInt8]) {
        out += Array(#"{"createTime":""#.utf8)
        out += Array(RFC3339.format(doc.createTime).utf8)
        out += Array(#"","fields":"#.utf8)
        fields(doc.fields, &out)
        out += Array(#","name":"#.utf8)
        string(id.documentsRoot + "/" + doc.key.path.canonical, &out)
        out += Array(#","updateTime":""#.utf8)
        out += Array(RFC3339.format(doc.updateTime).utf8)
        out += Array("\"}\n".utf8)
    }

    static func fields(_ m: MapValue, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, e) in m.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            string(e.key, &out)
            out.append(UInt8(ascii: ":"))
            value(e.value, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func value(_ v: Value, _ out: inout [UInt8]) {
        func tagged(_ name: String, _ body: (inout [UInt8]) -> Void) {
            out += Array("{\"\(name)\":".utf8)
            body(&out)
            out.append(UInt8(ascii: "}"))
        }
        switch v {
        case .null: out += Array(#"{"nullValue":null}"#.utf8)
        case .boolean(let b): out += Array((b ? #"{"booleanValue":true}"# : #"{"booleanValue":false}"#).utf8)
        case .integer(let i): tagged("integerValue") { $0 += Array("\"\(i)\"".utf8) }
        case .double(let d):
            tagged("doubleValue") { o in
                if d.isNaN { o += Array("\"NaN\"".utf8) } else if d.isInfinite { o += Array((d > 0 ? "\"Infinity\"" : "\"-Infinity\"").utf8) } else {
                    o += Array("\(d)".utf8)
                }
            }
        case .timestamp(let t): tagged("timestampValue") { string(RFC3339.format(t), &$0) }
        case .string(let s): tagged("stringValue") { string(s, &$0) }
        case .bytes(let b): tagged("bytesValue") { string(Data(b).base64EncodedString(), &$0) }
        case .reference(let r): tagged("referenceValue") { string(r.database.documentsRoot + "/" + r.key.path.canonical, &$0) }
        case .geoPoint(let g): tagged("geoPointValue") { $0 += Array("{\"latitude\":\(g.latitude),\"longitude\":\(g.longitude)}".utf8) }
        case .array(let items):
            tagged("arrayValue") { o in
                o += Array(#"{"values":["#.utf8)
                for (i, item) in items.enumerated() {
                    if i > 0 { o.append(UInt8(ascii: ",")) }
                    value(item, &o)
                }
                o += Array("]}".utf8)
            }
        case .map(let m):
            tagged("mapValue") { o in
                o += Array(#"{"fields":"#.utf8)
                fields(m, &o)
                o.append(UInt8(ascii: "}"))
            }
        case .vector(let values):
            value(.map(Value.vectorShape(values)), &out)
        }
    }

    static func string(_ s: String, _ out: inout [UInt8]) { JSONString.append(s, to: &out) }
}
