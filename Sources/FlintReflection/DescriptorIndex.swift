import Foundation
import SwiftProtobuf

/// Proto file descriptors, found by file name, by the names they declare, and by the extensions
/// they add: what gRPC server reflection answers from.
public struct DescriptorIndex: Sendable {
    private struct File: Sendable {
        let serialized: Data
        let dependencies: [String]
    }

    private var files: [String: File] = [:]
    private var fileDeclaring: [String: String] = [:]
    private var messageNames: Set<String> = []
    /// Extended message's full name → extension number → the file that declares the extension.
    private var extensions: [String: [Int32: String]] = [:]

    public enum LoadError: Error, Equatable {
        case notBase64
        /// A file imports one the set does not hold, so its answers could not be complete.
        case missingDependency(file: String, dependency: String)
    }

    /// Reads a serialized `google.protobuf.FileDescriptorSet`, as `protoc --descriptor_set_out
    /// --include_imports` writes it.
    public init(fileDescriptorSet: Data) throws {
        let set = try Google_Protobuf_FileDescriptorSet(serializedBytes: fileDescriptorSet)
        for file in set.file {
            files[file.name] = File(serialized: try file.serializedBytes(), dependencies: file.dependency)
            index(file)
        }
        for (name, file) in files {
            if let missing = file.dependencies.first(where: { files[$0] == nil }) {
                throw LoadError.missingDependency(file: name, dependency: missing)
            }
        }
    }

    public init(base64 text: String) throws {
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else { throw LoadError.notBase64 }
        try self.init(fileDescriptorSet: data)
    }

    /// The named file, then every file it imports, directly or not, each once, nearest first.
    public func fileAndImports(named name: String) -> [Data]? {
        guard files[name] != nil else { return nil }
        var order = [name]
        var seen: Set = [name]
        var next = 0
        while next < order.count {
            for dependency in files[order[next]]!.dependencies where seen.insert(dependency).inserted {
                order.append(dependency)
            }
            next += 1
        }
        return order.map { files[$0]!.serialized }
    }

    /// The file declaring a fully qualified name (no leading dot), with its imports.
    public func fileAndImports(declaring symbol: String) -> [Data]? {
        fileDeclaring[symbol].flatMap { fileAndImports(named: $0) }
    }

    /// The file declaring extension `number` of `message`, with its imports.
    public func fileAndImports(extending message: String, number: Int32) -> [Data]? {
        extensions[message]?[number].flatMap { fileAndImports(named: $0) }
    }

    /// The extension numbers declared for a message, ascending; nil when no message has that name.
    public func extensionNumbers(of message: String) -> [Int32]? {
        guard messageNames.contains(message) else { return nil }
        return (extensions[message]?.keys).map { $0.sorted() } ?? []
    }

    private mutating func index(_ file: Google_Protobuf_FileDescriptorProto) {
        let scope = file.package.isEmpty ? "" : file.package + "."
        for message in file.messageType { index(message, in: scope, file: file.name) }
        for type in file.enumType { index(type, in: scope, file: file.name) }
        for field in file.extension { index(extension: field, in: scope, file: file.name) }
        for service in file.service {
            let name = scope + service.name
            fileDeclaring[name] = file.name
            for method in service.method { fileDeclaring[name + "." + method.name] = file.name }
        }
    }

    private mutating func index(_ message: Google_Protobuf_DescriptorProto, in scope: String, file: String) {
        let name = scope + message.name
        fileDeclaring[name] = file
        messageNames.insert(name)
        for field in message.field { fileDeclaring[name + "." + field.name] = file }
        for nested in message.nestedType { index(nested, in: name + ".", file: file) }
        for type in message.enumType { index(type, in: name + ".", file: file) }
        for field in message.extension { index(extension: field, in: name + ".", file: file) }
    }

    /// Enum values are scoped beside their enum, as protoc resolves them.
    private mutating func index(_ type: Google_Protobuf_EnumDescriptorProto, in scope: String, file: String) {
        fileDeclaring[scope + type.name] = file
        for value in type.value { fileDeclaring[scope + value.name] = file }
    }

    private mutating func index(extension field: Google_Protobuf_FieldDescriptorProto, in scope: String, file: String) {
        fileDeclaring[scope + field.name] = file
        // The extendee is written fully qualified, with a leading dot, in descriptors protoc writes.
        let extendee = field.extendee.hasPrefix(".") ? String(field.extendee.dropFirst()) : field.extendee
        extensions[extendee, default: [:]][field.number] = file
    }
}
