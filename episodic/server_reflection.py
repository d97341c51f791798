"""Server reflection in both versions clients speak: ``grpc.reflection.v1`` (what current
grpcurl, Postman and grpc-cli ask first) and ``grpc.reflection.v1alpha`` (older clients).

grpcio-reflection ships only the v1alpha service. The v1 service has the same messages, field
for field, under another package, so the same servicer answers both: v1 calls are decoded and
encoded with the v1alpha message classes (the bytes on the wire are identical), and a v1
descriptor of reflection.proto (v1alpha's, renamed) is added to the descriptor pool, so a
client can describe the v1 service too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha import reflection_pb2 as alpha
from grpc_reflection.v1alpha import reflection_pb2_grpc as alpha_grpc

V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
V1ALPHA_SERVICE_NAME = reflection.SERVICE_NAME


def _register_v1_descriptor() -> None:
    """Put a v1 reflection.proto into the default pool (once; nothing if one is there)."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    alpha.DESCRIPTOR.CopyToProto(proto)
    old = "." + proto.package + "."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    for message in proto.message_type:
        for f in message.field:
            if f.type_name.startswith(old):
                f.type_name = f".{V1_PACKAGE}." + f.type_name[len(old):]
    for service in proto.service:
        for method in service.method:
            method.input_type = f".{V1_PACKAGE}." + method.input_type[len(old):]
            method.output_type = f".{V1_PACKAGE}." + method.output_type[len(old):]
    proto.ClearField("options")  # v1alpha's java/objc options
    pool.Add(proto)


def enable_server_reflection(service_names: Iterable[str], server: grpc.Server) -> None:
    """Reflection v1 and v1alpha on ``server``, listing ``service_names`` and both
    reflection services."""
    _register_v1_descriptor()
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer: Any = reflection.ReflectionServicer(names)
    alpha_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=alpha.ServerReflectionRequest.FromString,
        response_serializer=alpha.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )
