import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SwiftProtobuf
import Testing

/// gRPC server reflection (v1alpha, the name the reference serves), against the reference and
/// Flint: the answers to questions with no answer, and the Firestore API each describes.
struct GRPCReflectionDifferentialTests {
    typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
    typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

    static func ask(port: Int, _ questions: [Request]) async throws -> [Response] {
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            try await Grpc_Reflection_V1alpha_ServerReflection.Client(wrapping: client).serverReflectionInfo(
                requestProducer: { writer in try await writer.write(contentsOf: questions) }
            ) { response in
                var answers: [Response] = []
                for try await answer in response.messages { answers.append(answer) }
                return answers
            }
        }
    }

    static func question(_ body: (inout Request) -> Void) -> Request {
        var request = Request()
        body(&request)
        return request
    }

    /// The Firestore service's file and its imports, by name.
    static func firestoreFiles(port: Int, version: String = "v1") async throws -> [String: Google_Protobuf_FileDescriptorProto] {
        let answers = try await ask(port: port, [question { $0.fileContainingSymbol = "google.firestore.\(version).Firestore" }])
        let files = try answers.first?.fileDescriptorResponse.fileDescriptorProto.map {
            try Google_Protobuf_FileDescriptorProto(serializedBytes: $0)
        } ?? []
        #expect(files.first?.name == "google/firestore/\(version)/firestore.proto")
        return Dictionary(files.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Messages and enums by full name, nested ones included.
    struct Declarations {
        var messages: [String: Google_Protobuf_DescriptorProto] = [:]
        var enums: [String: Google_Protobuf_EnumDescriptorProto] = [:]
        var methods: [String: Google_Protobuf_MethodDescriptorProto] = [:]

        init(_ files: some Sequence<Google_Protobuf_FileDescriptorProto>) {
            for file in files {
                for message in file.messageType { add(message, in: file.package) }
                for type in file.enumType { enums[file.package + "." + type.name] = type }
                for service in file.service {
                    for method in service.method { methods[file.package + "." + service.name + "." + method.name] = method }
                }
            }
        }

        mutating func add(_ message: Google_Protobuf_DescriptorProto, in scope: String) {
            let name = scope + "." + message.name
            messages[name] = message
            for nested in message.nestedType { add(nested, in: name) }
            for type in message.enumType { enums[name + "." + type.name] = type }
        }
    }

    /// A field as a client reads it off the wire: its number's name, type and oneof.
    static func shape(_ field: Google_Protobuf_FieldDescriptorProto, in message: Google_Protobuf_DescriptorProto) -> String {
        let oneof = field.hasOneofIndex ? message.oneofDecl[Int(field.oneofIndex)].name : "-"
        return "\(field.name) \(field.type) \(field.label) \(field.typeName) oneof:\(oneof)"
    }

    /// Where Flint follows the public API definition and the reference's own schema differs:
    /// field numbers the public definition gives `request_options` and the reference's build
    /// gives a stream-initialization message. Neither is read by Flint or sent by the SDKs.
    static let knownDifferences: Set<String> = ["google.firestore.v1.WriteRequest 6", "google.firestore.v1.ListenRequest 5"]

    @Test func unansweredQuestionsAndTheFirestoreSchemaMatchTheReference() async throws {
        guard let (reference, flintPort, stop) = try await RawHTTP.bothServerPorts(for: "reflection") else { return }
        defer { stop() }

        let questions = [
            Self.question { $0.host = "somewhere"; $0.fileContainingSymbol = "google.firestore.v1.NoSuchThing" },
            Self.question { $0.fileByFilename = "google/firestore/v1/nothing.proto" },
            Self.question { $0.fileByFilename = "" },
            Self.question { $0.fileContainingExtension.containingType = "google.firestore.v1.Nope"; $0.fileContainingExtension.extensionNumber = 9 },
            Self.question { $0.allExtensionNumbersOfType = "google.firestore.v1.Nope" },
            Self.question { $0.host = "h" },
            Self.question { $0.listServices = "*" },
        ]
        let expected = try await Self.ask(port: reference.port, questions)
        let actual = try await Self.ask(port: flintPort, questions)
        try #require(expected.count == questions.count)
        try #require(actual.count == questions.count)
        for (theirs, ours) in zip(expected, actual).dropLast() {
            #expect(ours == theirs)
        }
        #expect(expected[0].errorResponse.errorMessage == "Symbol not found.")
        // Each lists what it serves; both list Firestore and this reflection service.
        for answer in [expected.last!, actual.last!] {
            let names = answer.listServicesResponse.service.map { $0.name }
            #expect(names.contains("google.firestore.v1.Firestore") && names.contains("grpc.reflection.v1alpha.ServerReflection"))
        }

        let theirs = Declarations(try await Self.firestoreFiles(port: reference.port).values)
        let ours = Declarations(try await Self.firestoreFiles(port: flintPort).values)
        #expect(ours.methods.count == Google_Firestore_V1_Firestore.Method.descriptors.count)
        for (name, method) in ours.methods {
            let shape = { (m: Google_Protobuf_MethodDescriptorProto) in "\(m.inputType) \(m.outputType) \(m.clientStreaming) \(m.serverStreaming)" }
            #expect(theirs.methods[name].map(shape) == shape(method), "\(name)")
        }
        var comparedFields = 0
        for (name, message) in ours.messages where name.hasPrefix("google.firestore.v1.") {
            // A message Flint declares that the reference lacks is checked by its fields' users.
            guard let reference = theirs.messages[name] else { continue }
            let referenceFields = Dictionary(reference.field.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
            for field in message.field {
                guard let match = referenceFields[field.number], !Self.knownDifferences.contains("\(name) \(field.number)") else {
                    continue
                }
                #expect(Self.shape(field, in: message) == Self.shape(match, in: reference), "\(name) field \(field.number)")
                comparedFields += 1
            }
        }
        #expect(comparedFields > 200)
        for (name, type) in ours.enums where name.hasPrefix("google.firestore.v1.") {
            guard let reference = theirs.enums[name] else { continue }
            let values = { (e: Google_Protobuf_EnumDescriptorProto) in Dictionary(e.value.map { ($0.number, $0.name) }, uniquingKeysWith: { a, _ in a }) }
            #expect(values(type) == values(reference), "\(name)")
        }
    }

    /// Flint serves v1beta1 with v1's messages. That is sound when, on the reference, each
    /// message a v1beta1 method reads or answers, and every message below it, has field by field
    /// the same number, name, type and oneof as v1's message of that name (the test above checks
    /// Flint's v1 against the reference's). Flint's v1beta1 methods are the reference's, less
    /// RunAggregationQuery, with v1's types.
    @Test func theV1Beta1ServiceReadsAndAnswersTheReferencesV1Beta1Messages() async throws {
        guard let (reference, flintPort, stop) = try await RawHTTP.bothServerPorts(for: "reflection") else { return }
        defer { stop() }

        let listed = try await Self.ask(port: flintPort, [Self.question { $0.listServices = "*" }])
        #expect(listed.first?.listServicesResponse.service.map(\.name).contains("google.firestore.v1beta1.Firestore") == true)
        let theirs = Declarations(try await Self.firestoreFiles(port: reference.port, version: "v1beta1").values)
        let theirV1 = Declarations(try await Self.firestoreFiles(port: reference.port).values)
        let ours = Declarations(try await Self.firestoreFiles(port: flintPort, version: "v1beta1").values)
        let asV1 = { (name: String) in name.replacingOccurrences(of: ".google.firestore.v1beta1.", with: ".google.firestore.v1.") }
        let served = ours.methods.keys.filter { $0.hasPrefix("google.firestore.v1beta1.Firestore.") }
        #expect(served.count == Google_Firestore_V1_Firestore.Method.descriptors.count - 1)
        #expect(!served.contains("google.firestore.v1beta1.Firestore.RunAggregationQuery"))
        var pending: [String] = []
        for name in served {
            let method = ours.methods[name]!
            let match = try #require(theirs.methods[name], "\(name)")
            #expect(match.clientStreaming == method.clientStreaming && match.serverStreaming == method.serverStreaming, "\(name)")
            #expect(asV1(match.inputType) == method.inputType, "\(name)")
            #expect(asV1(match.outputType) == method.outputType, "\(name)")
            pending += [match.inputType, match.outputType]
        }
        var seen: Set<String> = []
        var comparedFields = 0
        while let type = pending.popLast() {
            guard type.hasPrefix(".google.firestore.v1beta1."), seen.insert(type).inserted else { continue }
            if let betaEnum = theirs.enums[String(type.dropFirst())] {
                let values = { (e: Google_Protobuf_EnumDescriptorProto?) in e.map { $0.value.map { "\($0.number) \($0.name)" }.sorted() } }
                #expect(values(theirV1.enums[String(asV1(type).dropFirst())]) == values(betaEnum), "\(type)")
                continue
            }
            let beta = try #require(theirs.messages[String(type.dropFirst())], "\(type)")
            let v1 = try #require(theirV1.messages[String(asV1(type).dropFirst())], "\(type) in v1")
            let v1Fields = Dictionary(v1.field.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
            for field in beta.field {
                pending.append(field.typeName)
                var renamed = field
                renamed.typeName = asV1(field.typeName)
                #expect(v1Fields[field.number].map { Self.shape($0, in: v1) } == Self.shape(renamed, in: beta), "\(type) field \(field.number)")
                comparedFields += 1
            }
        }
        #expect(comparedFields > 150)
    }
}
