/// The library's functions and methods with the signatures the reference lists when a call
/// does not fit one (`Expected: map.get(string, any), map.get(list, any).`). A name missing
/// here is not in the library: the call fails as not found before its arguments are evaluated.
enum Signatures {
    /// Methods by receiver type, then name (`timestamp.date()` is a method, and
    /// `timestamp.date(int, int, int)` a function).
    static let methods: [String: String] = {
        let byType: [String: [String]] = [
            "string": ["size()", "lower()", "upper()", "trim()", "matches(string)", "replace(string, string)", "split(string)", "toUtf8()"],
            "list": ["size()", "hasAll(list)", "hasAny(list)", "hasOnly(list)", "concat(list)", "join(string)", "removeAll(list)", "toSet()"],
            "set": [
                "size()", "hasAll(set), set.hasAll(list)", "hasAny(set), set.hasAny(list)", "hasOnly(set), set.hasOnly(list)", "union(set)",
                "intersection(set)", "difference(set)",
            ],
            "map": ["size()", "keys()", "values()", "get(string, any), map.get(list, any)", "diff(map)"],
            "map_diff": ["addedKeys()", "removedKeys()", "changedKeys()", "affectedKeys()", "unchangedKeys()"],
            "bytes": ["size()", "toBase64()", "toHexString()"],
            "timestamp": [
                "year()", "month()", "day()", "hours()", "minutes()", "seconds()", "nanos()", "dayOfWeek()", "dayOfYear()", "toMillis()",
                "date()", "time()",
            ],
            "duration": ["seconds()", "nanos()"],
            "latlng": ["latitude()", "longitude()", "distance(latlng)"],
            "path": ["bind(map)"],
        ]
        var table: [String: String] = [:]
        for (type, signatures) in byType {
            for signature in signatures { table["\(type).\(signature.prefix { $0 != "(" })"] = "\(type).\(signature)" }
        }
        return table
    }()

    /// Global functions by name (`debug` takes any number of values and is not listed).
    static let functions: [String: String] = {
        let all = [
            "int(int), int(float), int(string)", "float(int), float(float), float(string)",
            "string(int), string(float), string(null), string(string), string(bool), string(path)", "path(string)",
            "exists(path)", "existsAfter(path)", "get(path)", "getAfter(path)",
            "math.abs(int), math.abs(float)", "math.ceil(float)", "math.floor(float)", "math.round(float)", "math.sqrt(float)",
            "math.pow(float, float)", "math.isNaN(float)",
            "timestamp.date(int, int, int)", "timestamp.value(int), timestamp.value(string)",
            "duration.value(int, string)", "duration.time(int, int, int, int)", "duration.abs(duration)", "latlng.value(float, float)",
            "hashing.md5(bytes), hashing.md5(string)", "hashing.sha256(bytes), hashing.sha256(string)",
            "hashing.crc32(bytes), hashing.crc32(string)", "hashing.crc32c(bytes), hashing.crc32c(string)",
        ]
        return Dictionary(uniqueKeysWithValues: all.map { (String($0.prefix { $0 != "(" }), $0) })
    }()

    /// The reference's error for a call of `qualified` (a function's name, or a method's as
    /// `type.name`) whose argument count fits none of its signatures; nil for other names.
    static func arityError(_ qualified: String, _ count: Int, method: Bool = false) -> RulesValue? {
        guard let signatures = method ? methods[qualified] : functions[qualified] else { return nil }
        guard !counts(signatures).contains(count) else { return nil }
        return .error("Incorrect number of arguments. Received: \(count). Expected: \(signatures).")
    }

    /// The argument counts a list of signatures takes.
    private static func counts(_ signatures: String) -> [Int] {
        signatures.split(separator: "(").dropFirst().map { rest in
            let parameters = rest.prefix { $0 != ")" }
            return parameters.isEmpty ? 0 : parameters.filter { $0 == "," }.count + 1
        }
    }

    /// The argument counts a method of this name takes on any type, which is all a ruleset
    /// being loaded can check.
    static let methodCounts: [String: Set<Int>] = {
        var out: [String: Set<Int>] = [:]
        for (qualified, signatures) in methods {
            out[String(qualified.split(separator: ".")[1]), default: []].formUnion(counts(signatures))
        }
        return out
    }()

    /// Whether a call of a library function or method (`method` names it without its type)
    /// may take `count` arguments; true for names the library lacks, which are told apart
    /// elsewhere. `debug` takes one value when a ruleset is loaded.
    static func takes(_ name: String, _ count: Int, method: Bool) -> Bool {
        if method { return methodCounts[name]?.contains(count) ?? true }
        if name == "debug" { return count == 1 }
        return functions[name].map { counts($0).contains(count) } ?? true
    }
}
