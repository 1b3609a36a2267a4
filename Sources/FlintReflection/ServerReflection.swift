import Foundation
import FlintProto
import GRPCCore

/// gRPC server reflection: lets grpcurl, Postman, Evans and other dynamic clients list the
/// services and read the descriptors of their messages without the .proto files. Served under
/// both names in use, v1 and v1alpha (the one Google's emulator serves).
public struct ServerReflection: Sendable {
    let index: DescriptorIndex
    let services: [String]

    /// - Parameter services: the fully qualified names of the services the server answers, each
    ///   declared in `index`. The reflection services are added.
    public init(index: DescriptorIndex, services: [String]) {
        self.index = index
        self.services = services + [V1.descriptor.fullyQualifiedService, V1Alpha.descriptor.fullyQualifiedService]
    }

    /// The reflection services, ready to be registered with a gRPC server.
    public var rpcServices: [any RegistrableRPCService] { [V1(reflection: self), V1Alpha(reflection: self)] }

    /// The descriptors of the files generated from proto/ (see scripts/gen-protos.sh).
    public static let servedDescriptors: DescriptorIndex = {
        do {
            return try DescriptorIndex(base64: ServedDescriptors.fileDescriptorSetBase64)
        } catch {
            preconditionFailure("the descriptors embedded at build time do not load: \(error)")
        }
    }()

    public typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
    public typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

    /// One answer per question. Answers that find nothing carry the codes and messages
    /// Google's emulator gives.
    public func answer(_ request: Request) -> Response {
        var response = Response()
        response.validHost = request.host
        response.originalRequest = request
        switch request.messageRequest {
        case .fileByFilename(let name):
            response.messageResponse = files(index.fileAndImports(named: name), else: "File not found.")
        case .fileContainingSymbol(let symbol):
            response.messageResponse = files(index.fileAndImports(declaring: symbol), else: "Symbol not found.")
        case .fileContainingExtension(let wanted):
            response.messageResponse = files(
                index.fileAndImports(extending: wanted.containingType, number: wanted.extensionNumber), else: "Extension not found.")
        case .allExtensionNumbersOfType(let type):
            if let numbers = index.extensionNumbers(of: type) {
                var found = Grpc_Reflection_V1_ExtensionNumberResponse()
                found.baseTypeName = type
                found.extensionNumber = numbers
                response.messageResponse = .allExtensionNumbersResponse(found)
            } else {
                response.messageResponse = Self.error(.notFound, "Type not found.")
            }
        case .listServices:
            var list = Grpc_Reflection_V1_ListServiceResponse()
            list.service = services.map { name in
                var service = Grpc_Reflection_V1_ServiceResponse()
                service.name = name
                return service
            }
            response.messageResponse = .listServicesResponse(list)
        case nil:
            response.messageResponse = Self.error(.unimplemented, "not implemented MESSAGEREQUEST_NOT_SET")
        }
        return response
    }

    private func files(_ found: [Data]?, else message: String) -> Response.OneOf_MessageResponse {
        guard let found else { return Self.error(.notFound, message) }
        var files = Grpc_Reflection_V1_FileDescriptorResponse()
        files.fileDescriptorProto = found
        return .fileDescriptorResponse(files)
    }

    private static func error(_ code: RPCError.Code, _ message: String) -> Response.OneOf_MessageResponse {
        var error = Grpc_Reflection_V1_ErrorResponse()
        error.errorCode = Int32(code.rawValue)
        error.errorMessage = message
        return .errorResponse(error)
    }

    /// Answers each question as it arrives, so a client may wait for one answer before asking again.
    func serve(_ requests: RPCAsyncSequence<Request, any Error>, _ responses: RPCWriter<Response>) async throws {
        for try await request in requests {
            try await responses.write(answer(request))
        }
    }

    struct V1: Grpc_Reflection_V1_ServerReflection.SimpleServiceProtocol {
        static let descriptor = Grpc_Reflection_V1_ServerReflection.descriptor
        let reflection: ServerReflection

        func serverReflectionInfo(
            request: RPCAsyncSequence<Request, any Error>, response: RPCWriter<Response>, context: ServerContext
        ) async throws { try await reflection.serve(request, response) }
    }

    struct V1Alpha: Grpc_Reflection_V1alpha_ServerReflection.SimpleServiceProtocol {
        static let descriptor = Grpc_Reflection_V1alpha_ServerReflection.descriptor
        let reflection: ServerReflection

        func serverReflectionInfo(
            request: RPCAsyncSequence<Request, any Error>, response: RPCWriter<Response>, context: ServerContext
        ) async throws { try await reflection.serve(request, response) }
    }
}
