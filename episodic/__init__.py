"""Composition root: configuration, the ingest pipeline wiring, the CLI."""

import os as _os

# Milvus Lite's gRPC channel logs keep-alive chatter ("too_many_pings") at error level;
# it is harmless and would drown the CLI's own messages. Users can still override it.
_os.environ.setdefault("GRPC_VERBOSITY", "NONE")
