"""User-facing errors. The CLI prints ``error: <message>`` for these and exits non-zero;
anything else is a bug and keeps its traceback."""

from __future__ import annotations


class EpisodicError(Exception):
    """Base class: the message is written for the person at the terminal."""

    exit_code = 1


class ConfigError(EpisodicError):
    exit_code = 2


class InputError(EpisodicError):
    """Bad arguments: a missing file, an invalid stream id, an absurd size."""

    exit_code = 2


class MediaError(EpisodicError):
    """A recording that cannot be opened or decoded."""

    exit_code = 3


class StoreError(EpisodicError):
    """The memory store is unreachable, locked by another process, or inconsistent."""

    exit_code = 4


class StoreLockedError(StoreError):
    """A Milvus Lite store that another process (an ingest, an ``episodic serve``) holds open:
    the CLI's read commands then ask the ``episodic serve`` that holds it, if one does."""


class ModelError(EpisodicError):
    """A configured model cannot be loaded or answered with something unusable."""

    exit_code = 5


class KafkaError(EpisodicError):
    """Kafka trouble: a broker that cannot be reached in time, a message over
    ``kafka_max_message_bytes``, a chunk the brokers did not acknowledge before
    ``kafka_delivery_timeout_ms``, a topic that cannot be created. Exit code 7."""

    exit_code = 7


class BrokerUnavailable(KafkaError):
    """No Kafka broker answered at ``kafka_bootstrap_servers`` within the time allowed
    (not running, wrong address, firewall, TLS/SASL mismatch). Exit code 7."""

    exit_code = 7


class DeadlineExceeded(EpisodicError, TimeoutError):
    """A call's ``deadline_s`` ran out before its answer was ready."""

    exit_code = 6


SHOWN_CHARS = 100  # the most of a value an error message quotes


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters with an ellipsis
    and the value's length: a message names what was wrong but never echoes a whole 20 kB
    value back (a gRPC status message travels in a size-limited trailer, and logs fill up)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, str):
        size = f"{len(value)} characters"
    elif isinstance(value, (bytes, bytearray)):
        size = f"{len(value)} bytes"
    else:
        size = f"{len(text)} characters as text"
    return f"{text[:limit]}… ({size})"
