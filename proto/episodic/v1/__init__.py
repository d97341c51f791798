"""``episodic.v1``: the public gRPC API (``episodic.proto``) and its generated code.

Import the generated modules as ``from proto.episodic.v1 import episodic_pb2, episodic_pb2_grpc``;
regenerate them with ``python -m episodic.proto.generate`` after editing the ``.proto`` file.
"""
