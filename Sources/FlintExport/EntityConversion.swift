import FlintModel
import FlintProto
import Foundation
import SwiftProtobuf

/// Documents to and from the entities of a managed export.
///
/// A field's type comes from its value and, where that is ambiguous, its meaning: timestamps are
/// integers of microseconds (so an export keeps no nanoseconds), bytes and maps are strings (a map
/// holds an encoded entity), an array is one property per element with `multiple` set.
enum EntityConversion {
    enum Meaning {
        static let timestamp: Int32 = 7
        static let geoPoint: Int32 = 9
        static let blob: Int32 = 14
        static let text: Int32 = 15
        static let byteString: Int32 = 16
        static let map: Int32 = 19
        static let emptyArray: Int32 = 24
        static let vector: Int32 = 31
    }

    /// An export's entities carry no times; Flint gives them the time they are loaded.
    struct Loaded {
        var database: DatabaseID
        var key: DocumentKey
        var fields: MapValue
    }

    // MARK: Reading

    static func document(_ bytes: [UInt8]) throws(FlintError) -> Loaded {
        let entity: Flint_Export_ExportedEntity
        do { entity = try Flint_Export_ExportedEntity(serializedBytes: bytes) } catch {
            throw .invalidArgument("An export record is not an entity: \(error).")
        }
        guard entity.hasKey else { throw .invalidArgument("An exported entity has no key.") }
        let database = databaseID(app: entity.key.app, database: entity.key.databaseID)
        let key = try documentKey(entity.key.path.element.map { ($0.type, $0.hasName ? $0.name : nil, $0.id) })
        return Loaded(database: database, key: key, fields: try fields(entity))
    }

    /// `dev~my-project` (the emulator) and `s~my-project` (production) name `my-project`.
    static func databaseID(app: String, database: String) -> DatabaseID {
        let project = app.split(separator: "~", maxSplits: 1).last.map(String.init) ?? app
        return DatabaseID(project: project, database: database.isEmpty ? DatabaseID.defaultDatabase : database)
    }

    private static func documentKey(_ elements: [(type: String, name: String?, id: Int64)]) throws(FlintError) -> DocumentKey {
        var segments: [String] = []
        for element in elements {
            segments.append(element.type)
            segments.append(element.name ?? "__id\(element.id)__")
        }
        let path = ResourcePath(segments)
        for (i, segment) in segments.enumerated() {
            do { try Validation.validateSegment(segment, at: i) } catch {
                throw .invalidArgument("An exported entity's key \"\(path.canonical)\" is not a document name: \(error.message)")
            }
        }
        return try DocumentKey(path)
    }

    private static func fields(_ entity: Flint_Export_ExportedEntity) throws(FlintError) -> MapValue {
        var fields: [(String, Value)] = []
        // Keyed by bytes: names that differ only in normalization are two arrays.
        var arrays: [UTF8Key: (index: Int, values: [Value], vector: Bool)] = [:]
        for property in entity.property + entity.rawProperty {
            let value = try value(property)
            guard property.multiple else {
                fields.append((property.name, value))
                continue
            }
            // Elements come as separate properties of one name, in order.
            let name = UTF8Key(property.name)
            if arrays[name] == nil {
                arrays[name] = (fields.count, [], property.meaning == Meaning.vector)
                fields.append((property.name, .null))
            }
            arrays[name]!.values.append(value)
        }
        for (_, array) in arrays {
            if array.vector {
                guard let components = numbers(array.values) else {
                    throw .invalidArgument("An exported vector holds something other than numbers.")
                }
                fields[array.index].1 = .vector(components)
            } else {
                fields[array.index].1 = .array(array.values)
            }
        }
        return MapValue(fields)
    }

    /// A vector inside an array is written as the map it is on the wire.
    private static func vectorShaped(_ map: MapValue) -> Value {
        guard map.count == 2, case .string("__vector__")? = map["__type__"], case .array(let items)? = map["value"],
            let components = numbers(items)
        else { return .map(map) }
        return .vector(components)
    }

    /// The values as doubles, or nil when one is not a number.
    private static func numbers(_ values: [Value]) -> [Double]? {
        var out: [Double] = []
        for v in values {
            switch v {
            case .double(let d): out.append(d)
            case .integer(let i): out.append(Double(i))
            default: return nil
            }
        }
        return out
    }

    private static func value(_ property: Flint_Export_EntityProperty) throws(FlintError) -> Value {
        let v = property.value
        switch property.meaning {
        case Meaning.timestamp where v.hasInt64Value:
            return .timestamp(Timestamp(microseconds: v.int64Value))
        case Meaning.blob, Meaning.byteString:
            return .bytes([UInt8](v.stringValue))
        case Meaning.map:
            let inner: Flint_Export_ExportedEntity
            do { inner = try Flint_Export_ExportedEntity(serializedBytes: v.stringValue) } catch {
                throw .invalidArgument("Field \"\(property.name)\" of an exported entity is not a readable map.")
            }
            return vectorShaped(try fields(inner))
        case Meaning.emptyArray:
            return .array([])
        default:
            break
        }
        if v.hasInt64Value { return .integer(v.int64Value) }
        if v.hasBooleanValue { return .boolean(v.booleanValue) }
        if v.hasDoubleValue { return .double(v.doubleValue) }
        if v.hasStringValue {
            guard let text = String(validating: v.stringValue, as: UTF8.self) else { return .bytes([UInt8](v.stringValue)) }
            return .string(text)
        }
        if v.hasPointValue {
            // x is the latitude.
            return .geoPoint(try GeoPoint(latitude: v.pointValue.x, longitude: v.pointValue.y))
        }
        if v.hasReferenceValue {
            let r = v.referenceValue
            let key = try documentKey(r.pathElement.map { ($0.type, $0.hasName ? $0.name : nil, $0.id) })
            return .reference(DocumentReference(database: databaseID(app: r.app, database: r.databaseID), key: key))
        }
        return .null
    }

    // MARK: Writing

    /// The entity for `document`, laid out as Google's emulator writes it.
    static func entity(_ fields: MapValue, key: DocumentKey, database: DatabaseID) -> Flint_Export_ExportedEntity {
        var entity = Flint_Export_ExportedEntity()
        entity.key.app = "dev~" + database.project
        entity.key.path = path(key)
        if database.database != DatabaseID.defaultDatabase { entity.key.databaseID = database.database }
        add(fields, to: &entity)
        entity.entityGroup = path(try! DocumentKey(ResourcePath(Array(key.path.segments.prefix(2)))))
        return entity
    }

    private static func path(_ key: DocumentKey) -> Flint_Export_EntityPath {
        var path = Flint_Export_EntityPath()
        let segments = key.path.segments
        for i in stride(from: 0, to: segments.count, by: 2) {
            var element = Flint_Export_EntityPath.Element()
            element.type = segments[i]
            if let id = NumericID.value(segments[i + 1]) { element.id = id } else { element.name = segments[i + 1] }
            path.element.append(element)
        }
        return path
    }

    private static func add(_ fields: MapValue, to entity: inout Flint_Export_ExportedEntity) {
        for entry in fields.entries {
            switch entry.value {
            case .array(let values) where values.isEmpty:
                // The emulator lists empty arrays among the indexed properties.
                entity.property.append(property(entry.key, meaning: Meaning.emptyArray, Flint_Export_EntityValue()))
            case .array(let values):
                for element in values {
                    var p = property(entry.key, element)
                    p.multiple = true
                    entity.rawProperty.append(p)
                }
            case .vector(let doubles):
                for d in doubles {
                    var v = Flint_Export_EntityValue()
                    v.doubleValue = d
                    var p = property(entry.key, meaning: Meaning.vector, v)
                    p.multiple = true
                    entity.rawProperty.append(p)
                }
            default:
                entity.rawProperty.append(property(entry.key, entry.value))
            }
        }
    }

    private static func property(_ name: String, meaning: Int32? = nil, _ value: Flint_Export_EntityValue) -> Flint_Export_EntityProperty {
        var p = Flint_Export_EntityProperty()
        if let meaning { p.meaning = meaning }
        p.name = name
        p.multiple = false
        p.value = value
        return p
    }

    /// One property for a value that is not an array (an array element, or a whole field).
    private static func property(_ name: String, _ value: Value) -> Flint_Export_EntityProperty {
        var v = Flint_Export_EntityValue()
        var meaning: Int32?
        switch value {
        case .null: break
        case .boolean(let b): v.booleanValue = b
        case .integer(let i): v.int64Value = i
        case .double(let d): v.doubleValue = d
        case .string(let s): v.stringValue = Data(s.utf8)
        case .timestamp(let t):
            meaning = Meaning.timestamp
            v.int64Value = t.microseconds
        case .bytes(let b):
            meaning = Meaning.blob
            v.stringValue = Data(b)
        case .geoPoint(let g):
            meaning = Meaning.geoPoint
            v.pointValue.x = g.latitude
            v.pointValue.y = g.longitude
        case .reference(let r):
            v.referenceValue.app = "dev~" + r.database.project
            v.referenceValue.pathElement = path(r.key).element.map { element in
                var e = Flint_Export_EntityValue.ReferenceValue.PathElement()
                e.type = element.type
                if element.hasID { e.id = element.id } else { e.name = element.name }
                return e
            }
            if r.database.database != DatabaseID.defaultDatabase { v.referenceValue.databaseID = r.database.database }
        case .map(let m):
            meaning = Meaning.map
            var inner = Flint_Export_ExportedEntity()
            inner.key.app = ""
            inner.key.path = Flint_Export_EntityPath()
            add(m, to: &inner)
            inner.entityGroup = Flint_Export_EntityPath()
            v.stringValue = (try? inner.serializedBytes()) ?? Data()
        case .vector(let doubles):
            // Only an array element gets here; a field holding a vector is written by `add`.
            return property(name, .map(Value.vectorShape(doubles)))
        case .array:
            // Arrays do not nest; an array inside an array never reaches an export.
            break
        }
        return property(name, meaning: meaning, v)
    }
}
