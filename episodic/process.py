"""Process-wide settings of the C runtime, applied once by the console entry point."""

from __future__ import annotations

import ctypes
import ctypes.util
import os

# glibc's mallopt parameter for the number of malloc arenas (malloc.h: M_ARENA_MAX)
_M_ARENA_MAX = -8
# FFmpeg's decoder threads, ONNX Runtime and torch each allocate from their own glibc arena
# (by default up to 8 per core); frames freed in one arena are not reused by another, so a 4K
# ingest's resident memory grew to 2.2 GB. Two arenas kept it at 1.7 GB at the same speed
# (benchmarks/bench_resolution.py).
DEFAULT_MALLOC_ARENAS = 2


def limit_malloc_arenas(arenas: int = DEFAULT_MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for threads created from now on; True when applied.

    A ``MALLOC_ARENA_MAX`` the user exported wins (glibc read it at start-up); on a C library
    without ``mallopt`` (musl, macOS) nothing happens."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    return bool(mallopt(_M_ARENA_MAX, int(arenas)))


def quiet_grpc_logging() -> None:
    """gRPC's C core logs nothing below errors unless the user asked for it.

    Milvus Lite's gRPC channel logs keep-alive chatter ("too_many_pings") at error level; it is
    harmless and would drown the CLI's own messages. gRPC reads ``GRPC_VERBOSITY`` when it is
    first imported, so this runs before anything imports grpc; a value the user exported wins."""
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")


def offline_model_hubs() -> None:
    """Model libraries never reach for a model hub: every model ships in a Python package or a
    configured folder, and a hub lookup on a machine without internet only waits for a timeout.
    Values the user exported win."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
