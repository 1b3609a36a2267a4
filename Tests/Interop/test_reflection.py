"""A client with no generated Firestore code: it learns Flint's gRPC API by server reflection,
as grpcurl and Postman do, then calls it with messages built from what it learned."""

import uuid

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase


@pytest.fixture
def reflected(flint_host):
    channel = grpc.insecure_channel(flint_host)
    database = ProtoReflectionDescriptorDatabase(channel)
    yield channel, database, descriptor_pool.DescriptorPool(database)
    channel.close()


def test_services_are_listed(reflected):
    _, database, _ = reflected
    assert list(database.get_services()) == [
        "google.firestore.v1.Firestore",
        "google.firestore.v1beta1.Firestore",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ]


def test_methods_and_messages_are_described(reflected):
    _, _, pool = reflected
    service = pool.FindServiceByName("google.firestore.v1.Firestore")
    methods = {m.name: m for m in service.methods}
    assert {"GetDocument", "Commit", "RunQuery", "Listen", "Write", "BatchWrite"} <= set(methods)
    assert methods["Commit"].input_type.full_name == "google.firestore.v1.CommitRequest"
    assert methods["RunQuery"].server_streaming and not methods["RunQuery"].client_streaming
    assert methods["Listen"].client_streaming and methods["Listen"].server_streaming

    operator = pool.FindEnumTypeByName("google.firestore.v1.StructuredQuery.FieldFilter.Operator")
    assert operator.values_by_name["ARRAY_CONTAINS"].number == 7
    value = pool.FindMessageTypeByName("google.firestore.v1.Value")
    assert value.fields_by_name["integer_value"].number == 2
    assert value.fields_by_name["timestamp_value"].message_type.full_name == "google.protobuf.Timestamp"

    with pytest.raises(KeyError):
        pool.FindMessageTypeByName("google.firestore.v1.NoSuchMessage")


def call(channel, pool, method, request_fields, service="google.firestore.v1.Firestore"):
    """Calls a unary method with a request built from its reflected descriptor."""
    descriptor = pool.FindMethodByName(f"{service}.{method}")
    request_type = message_factory.GetMessageClass(descriptor.input_type)
    response_type = message_factory.GetMessageClass(descriptor.output_type)
    stub = channel.unary_unary(
        f"/{service}/{method}",
        request_serializer=request_type.SerializeToString,
        response_deserializer=response_type.FromString,
    )
    return stub(request_type(**request_fields))


def test_a_reflected_client_writes_and_reads(reflected):
    channel, _, pool = reflected
    root = "projects/reflected/databases/(default)/documents"
    name = f"{root}/r-{uuid.uuid4().hex[:10]}/doc"
    write_type = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.firestore.v1.Write"))
    write = write_type()
    write.update.name = name
    write.update.fields["n"].integer_value = 42
    write.update.fields["tags"].array_value.values.add().string_value = "reflected"

    committed = call(channel, pool, "Commit", {"database": "projects/reflected/databases/(default)", "writes": [write]})
    assert len(committed.write_results) == 1
    assert committed.commit_time.seconds > 0

    document = call(channel, pool, "GetDocument", {"name": name})
    assert document.fields["n"].integer_value == 42
    assert [v.string_value for v in document.fields["tags"].array_value.values] == ["reflected"]
    assert document.update_time == committed.commit_time

    with pytest.raises(grpc.RpcError) as missing:
        call(channel, pool, "GetDocument", {"name": name + "-missing"})
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_v1beta1_is_described_with_v1_messages_and_answers(reflected):
    channel, _, pool = reflected
    service = pool.FindServiceByName("google.firestore.v1beta1.Firestore")
    methods = {m.name: m for m in service.methods}
    assert "RunAggregationQuery" not in methods
    assert methods["Commit"].input_type.full_name == "google.firestore.v1.CommitRequest"
    assert methods["Listen"].client_streaming and methods["Listen"].server_streaming

    beta = "google.firestore.v1beta1.Firestore"
    name = f"projects/reflected/databases/(default)/documents/beta-{uuid.uuid4().hex[:10]}/doc"
    write = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.firestore.v1.Write"))()
    write.update.name = name
    write.update.fields["n"].integer_value = 7
    committed = call(channel, pool, "Commit", {"database": "projects/reflected/databases/(default)", "writes": [write]}, beta)
    assert len(committed.write_results) == 1
    assert call(channel, pool, "GetDocument", {"name": name}).fields["n"].integer_value == 7

    # The reference's words for a method it does not serve name the method.
    for path, message in [
        (f"/{beta}/RunAggregationQuery", f"Method {beta}/RunAggregationQuery is unimplemented"),
        ("/google.firestore.v1.Firestore/NoSuchMethod", "Method not found: google.firestore.v1.Firestore/NoSuchMethod"),
    ]:
        with pytest.raises(grpc.RpcError) as refused:
            channel.unary_unary(path)(b"")
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert refused.value.details() == message
