import FlintEngine
import FlintProto
import FlintReflection
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import GRPCProtobuf
import SwiftProtobuf
import Testing

/// gRPC server reflection: the descriptor index on its own, then both service names over h2c.
struct GRPCReflectionTests {
    typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
    typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

    static func fileNames(_ serialized: [Data]?) throws -> [String] {
        try (serialized ?? []).map { try Google_Protobuf_FileDescriptorProto(serializedBytes: $0).name }
    }

    /// Every file an answer carries has all its imports in the same answer, and none comes twice.
    static func expectClosed(_ serialized: [Data]?) throws {
        let files = try (serialized ?? []).map { try Google_Protobuf_FileDescriptorProto(serializedBytes: $0) }
        let names = Set(files.map(\.name))
        #expect(names.count == files.count)
        for file in files {
            #expect(file.dependency.allSatisfy(names.contains), "\(file.name) imports a file the answer lacks")
        }
    }

    @Test func theServedDescriptorsDeclareEveryFirestoreMethodAndItsMessages() throws {
        let index = ServerReflection.servedDescriptors
        for method in Google_Firestore_V1_Firestore.Method.descriptors {
            let symbol = method.service.fullyQualifiedService + "." + method.method
            let files = try Self.fileNames(index.fileAndImports(declaring: symbol))
            #expect(files.first == "google/firestore/v1/firestore.proto", "\(symbol)")
        }
        let firestore = index.fileAndImports(declaring: "google.firestore.v1.Firestore")
        try Self.expectClosed(firestore)
        #expect(
            try Set(Self.fileNames(firestore)) == [
                "google/firestore/v1/firestore.proto", "google/firestore/v1/common.proto", "google/firestore/v1/document.proto",
                "google/firestore/v1/write.proto", "google/firestore/v1/query.proto", "google/firestore/v1/query_profile.proto",
                "google/firestore/v1/aggregation_result.proto", "google/firestore/v1/bloom_filter.proto",
                "google/protobuf/empty.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
                "google/protobuf/struct.proto", "google/protobuf/duration.proto", "google/protobuf/any.proto",
                "google/rpc/status.proto", "google/type/latlng.proto",
            ])
        // Nested types, enums, enum values and fields are found in the file that declares them.
        for symbol in [
            "google.firestore.v1.StructuredQuery.FieldFilter", "google.firestore.v1.StructuredQuery.FieldFilter.Operator",
            "google.firestore.v1.StructuredQuery.FieldFilter.ARRAY_CONTAINS", "google.firestore.v1.StructuredQuery.where",
        ] {
            #expect(try Self.fileNames(index.fileAndImports(declaring: symbol)).first == "google/firestore/v1/query.proto")
        }
        #expect(try Self.fileNames(index.fileAndImports(declaring: "google.firestore.v1.Value.map_value")).first
            == "google/firestore/v1/document.proto")
        // Imports come after the file, nearest first.
        #expect(try Self.fileNames(index.fileAndImports(named: "google/rpc/status.proto"))
            == ["google/rpc/status.proto", "google/protobuf/any.proto"])
        #expect(index.fileAndImports(declaring: ".google.firestore.v1.Value") == nil)
        #expect(index.fileAndImports(named: "firestore.proto") == nil)
        #expect(index.extensionNumbers(of: "google.firestore.v1.Value") == [])
        #expect(index.extensionNumbers(of: "google.firestore.v1.Nope") == nil)
    }

    /// A set written here: one file adds extensions to a message of another.
    static func extendingSet() throws -> Data {
        var base = Google_Protobuf_FileDescriptorProto()
        base.name = "t/base.proto"
        base.package = "t"
        var message = Google_Protobuf_DescriptorProto()
        message.name = "Extended"
        var range = Google_Protobuf_DescriptorProto.ExtensionRange()
        range.start = 100
        range.end = 200
        message.extensionRange = [range]
        base.messageType = [message]
        base.syntax = "proto2"

        var adds = Google_Protobuf_FileDescriptorProto()
        adds.name = "t/adds.proto"
        adds.package = "t.more"
        adds.dependency = ["t/base.proto"]
        adds.syntax = "proto2"
        adds.extension = [Int32(150), 101].map { number in
            var field = Google_Protobuf_FieldDescriptorProto()
            field.name = "extra_\(number)"
            field.number = number
            field.label = .optional
            field.type = .int32
            field.extendee = ".t.Extended"
            return field
        }
        var set = Google_Protobuf_FileDescriptorSet()
        set.file = [base, adds]
        return try set.serializedBytes()
    }

    @Test func extensionsAreFoundByTheMessageTheyExtend() throws {
        let index = try DescriptorIndex(fileDescriptorSet: Self.extendingSet())
        #expect(index.extensionNumbers(of: "t.Extended") == [101, 150])
        #expect(try Self.fileNames(index.fileAndImports(extending: "t.Extended", number: 150)) == ["t/adds.proto", "t/base.proto"])
        #expect(index.fileAndImports(extending: "t.Extended", number: 102) == nil)
        #expect(try Self.fileNames(index.fileAndImports(declaring: "t.more.extra_101")) == ["t/adds.proto", "t/base.proto"])
    }

    @Test func aSetThatLacksAnImportOrIsNotBase64IsRefused() throws {
        var set = try Google_Protobuf_FileDescriptorSet(serializedBytes: Self.extendingSet())
        set.file.removeFirst()
        #expect(throws: DescriptorIndex.LoadError.missingDependency(file: "t/adds.proto", dependency: "t/base.proto")) {
            try DescriptorIndex(fileDescriptorSet: try set.serializedBytes())
        }
        #expect(throws: DescriptorIndex.LoadError.notBase64) { try DescriptorIndex(base64: "not base64!") }
    }

    static func request(_ body: (inout Request) -> Void) -> Request {
        var request = Request()
        body(&request)
        return request
    }

    /// Questions of every kind on one stream, under each service name.
    @Test(arguments: ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"])
    func oneStreamAnswersEachQuestionInOrder(service: String) async throws {
        let questions = [
            Self.request { $0.listServices = "" },
            Self.request { $0.host = "localhost"; $0.fileContainingSymbol = "google.firestore.v1.Firestore.Listen" },
            Self.request { $0.fileByFilename = "google/firestore/v1/document.proto" },
            Self.request { $0.fileContainingSymbol = "google.firestore.v1.Nope" },
            Self.request { $0.fileByFilename = "nope.proto" },
            Self.request { $0.fileContainingExtension.containingType = "google.firestore.v1.Value"; $0.fileContainingExtension.extensionNumber = 5 },
            Self.request { $0.allExtensionNumbersOfType = "google.firestore.v1.Write" },
            Self.request { $0.allExtensionNumbersOfType = "google.firestore.v1.Nope" },
            Self.request { $0.host = "h" },
        ]
        let method = MethodDescriptor(fullyQualifiedService: service, method: "ServerReflectionInfo")
        let answers = try await Self.ask(method, questions)
        try #require(answers.count == questions.count)
        #expect(zip(answers, questions).allSatisfy { $0.originalRequest == $1 && $0.validHost == $1.host })

        #expect(answers[0].listServicesResponse.service.map(\.name) == [
            "google.firestore.v1.Firestore", "google.firestore.v1beta1.Firestore", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
        ])
        let listen = answers[1].fileDescriptorResponse.fileDescriptorProto
        let firestoreFile = try Google_Protobuf_FileDescriptorProto(serializedBytes: try #require(listen.first))
        let listenMethod = try #require(firestoreFile.service.first?.method.first { $0.name == "Listen" })
        #expect(listenMethod.inputType == ".google.firestore.v1.ListenRequest")
        #expect(listenMethod.clientStreaming && listenMethod.serverStreaming)
        try Self.expectClosed(listen)
        #expect(try Self.fileNames(answers[2].fileDescriptorResponse.fileDescriptorProto).first == "google/firestore/v1/document.proto")

        let errors = answers[3...].map { ($0.errorResponse.errorCode, $0.errorResponse.errorMessage) }
        #expect(errors[0] == (5, "Symbol not found."))
        #expect(errors[1] == (5, "File not found."))
        #expect(errors[2] == (5, "Extension not found."))
        #expect(answers[6].allExtensionNumbersResponse.baseTypeName == "google.firestore.v1.Write")
        #expect(answers[6].allExtensionNumbersResponse.extensionNumber == [])
        #expect(errors[4] == (5, "Type not found."))
        #expect(errors[5] == (12, "not implemented MESSAGEREQUEST_NOT_SET"))
    }

    /// Sends `questions` on one bidirectional stream of a running Flint and collects the answers.
    static func ask(
        _ method: MethodDescriptor, _ questions: [Request]
    ) async throws -> [Response] {
        var answers: [Response] = []
        try await GRPCTests.withFlintChannel { client, _ in
            answers = try await client.bidirectionalStreaming(
                request: StreamingClientRequest { writer in try await writer.write(contentsOf: questions) },
                descriptor: method,
                serializer: ProtobufSerializer<Request>(),
                deserializer: ProtobufDeserializer<Response>(), options: .defaults
            ) { response in
                var out: [Response] = []
                for try await answer in response.messages { out.append(answer) }
                return out
            }
        }
        return answers
    }
}
