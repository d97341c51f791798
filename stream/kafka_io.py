"""Talking to Kafka (kafka-python): topics, a chunk producer, consumers, commits, dead letters.

Values are opaque bytes here (serialized ``MediaChunk``/``DeadLetter`` protobufs); keys are
stream ids, so all chunks of one stream land in one partition and stay in order. Every
failure a person can act on surfaces as :class:`episodic.core.errors.KafkaError` (or its
subclass :class:`~episodic.core.errors.BrokerUnavailable`) with a one-line message, and every
wait is bounded by a setting: nothing here hangs on a broker that is down.

Only standard Kafka behaviour is relied on; the tests run against Tansu
(``episodic.dev_broker``), a real deployment uses Apache Kafka or any compatible cluster.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from episodic.config import KafkaSettings
from episodic.core.errors import BrokerUnavailable, ConfigError, KafkaError

log = logging.getLogger(__name__)

DEAD_LETTER_RAW_MAX_BYTES = 1024 * 1024  # DeadLetter.raw_value is capped at 1 MiB
DEAD_LETTER_REASON_MAX_CHARS = 1000
_DLQ_HEADERS = [("episodic-schema", b"episodic.v1.DeadLetter")]
_SECRET_KEYS = frozenset({"sasl_plain_password", "ssl_password"})


# -- configuration -------------------------------------------------------------------------------
def client_config(settings: KafkaSettings) -> dict[str, Any]:
    """Connection settings shared by producers, consumers and admin clients: bootstrap
    servers, client id, request timeout and, where the protocol uses them, SASL and SSL keys.

    The result holds the SASL password: never log it; :func:`redacted` gives a safe copy."""
    servers = [s.strip() for s in settings.kafka_bootstrap_servers.split(",") if s.strip()]
    if not servers:
        raise ConfigError("kafka_bootstrap_servers is empty: give host:port[,host:port]")
    protocol = settings.kafka_security_protocol
    cfg: dict[str, Any] = {
        "bootstrap_servers": servers,
        "client_id": settings.kafka_client_id,
        "security_protocol": protocol,
        "request_timeout_ms": settings.kafka_request_timeout_ms,
    }
    if protocol.startswith("SASL_"):
        if not settings.kafka_sasl_mechanism:
            raise ConfigError(f"kafka_security_protocol {protocol} needs kafka_sasl_mechanism")
        cfg["sasl_mechanism"] = settings.kafka_sasl_mechanism
        # kafka-python takes the PLAIN and SCRAM credentials under these names
        cfg["sasl_plain_username"] = settings.kafka_sasl_username
        cfg["sasl_plain_password"] = settings.kafka_sasl_password
    if protocol in ("SSL", "SASL_SSL"):
        for key, value in (
            ("ssl_cafile", settings.kafka_ssl_cafile),
            ("ssl_certfile", settings.kafka_ssl_certfile),
            ("ssl_keyfile", settings.kafka_ssl_keyfile),
        ):
            if value:
                cfg[key] = value
    return cfg


def redacted(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a client configuration that is safe to log or print."""
    return {k: ("***" if k in _SECRET_KEYS and v else v) for k, v in cfg.items()}


def _servers(settings: KafkaSettings) -> str:
    return settings.kafka_bootstrap_servers


def _one_line(exc: BaseException | str, limit: int = 240) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _translate(exc: Exception, what: str, settings: KafkaSettings, wait_s: float | None = None) -> KafkaError:
    """A kafka-python exception as a one-line :class:`KafkaError` that names the thing
    that failed (``what``) and the setting to look at."""
    from kafka import errors as E

    name = type(exc).__name__
    if isinstance(exc, (E.MessageSizeTooLargeError, E.RecordListTooLargeError)):
        return KafkaError(
            f"{what}: message too large for Kafka (kafka_max_message_bytes = "
            f"{settings.kafka_max_message_bytes}; the topic's max.message.bytes may be lower): {_one_line(exc)}"
        )
    # kafka-python 3 has no NoBrokersAvailable any more: a failed bootstrap is a
    # KafkaTimeoutError("Unable to bootstrap from [...]")
    if type(exc).__name__ == "NoBrokersAvailable" or (
        isinstance(exc, E.KafkaTimeoutError) and "bootstrap" in str(exc).lower()
    ):
        within = f" within {wait_s:g} s" if wait_s is not None else ""
        return BrokerUnavailable(
            f"{what}: cannot reach a Kafka broker at {_servers(settings)}{within} "
            f"(is it running? check kafka_bootstrap_servers and kafka_security_protocol)"
        )
    if isinstance(exc, E.KafkaConnectionError):
        return BrokerUnavailable(f"{what}: lost the connection to Kafka at {_servers(settings)}: {_one_line(exc)}")
    if isinstance(exc, E.KafkaTimeoutError):
        within = f" within {wait_s:g} s" if wait_s is not None else ""
        return KafkaError(f"{what}: Kafka at {_servers(settings)} did not answer{within}: {_one_line(exc)}")
    if isinstance(exc, E.AuthorizationError):
        return KafkaError(f"{what}: not authorized by Kafka ({name}); check the SASL/SSL settings and ACLs")
    return KafkaError(f"{what}: Kafka error {name}: {_one_line(exc)}")


def _kafka_errors() -> tuple[type[Exception], ...]:
    from kafka import errors as E

    return (E.KafkaError,)


# -- topics --------------------------------------------------------------------------------------
def ensure_topics(settings: KafkaSettings, timeout_s: float = 15.0) -> int:
    """Create ``kafka_topic`` and ``kafka_dlq_topic`` (each ``kafka_partitions`` ×
    ``kafka_replication_factor``) when missing; existing topics are kept as they are. Returns the
    partition count of the media topic. New topics get ``max.message.bytes`` =
    ``kafka_max_message_bytes`` (Apache Kafka's default is about 1 MiB).

    Raises :class:`BrokerUnavailable` when no broker answers within ``timeout_s``."""
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    wait_ms = int(timeout_s * 1000)
    what = "creating Kafka topics"
    admin = _admin(settings, timeout_s, what)
    try:
        existing = set(admin.list_topics())
        wanted = [
            (settings.kafka_topic, settings.kafka_partitions),
            (settings.kafka_dlq_topic, settings.kafka_partitions),
        ]
        if settings.kafka_alerts_topic:
            wanted.append((settings.kafka_alerts_topic, settings.kafka_partitions))
        for name, partitions in wanted:
            if name in existing:
                continue
            topic = NewTopic(
                name,
                partitions,
                settings.kafka_replication_factor,
                topic_configs={"max.message.bytes": str(settings.kafka_max_message_bytes)},
            )
            try:
                admin.create_topics([topic], timeout_ms=wait_ms)
                log.info("created topic %s (%d partitions)", name, partitions)
            except TopicAlreadyExistsError:
                pass  # another process created it first: keep theirs
        count = _partition_count(admin, settings.kafka_topic)
    except _kafka_errors() as exc:
        raise _translate(exc, what, settings, timeout_s) from None
    finally:
        admin.close()
    if count != settings.kafka_partitions:
        log.info(
            "topic %s has %d partitions (kafka_partitions = %d applies only to new topics)",
            settings.kafka_topic, count, settings.kafka_partitions,
        )
    return count


def topic_partitions(settings: KafkaSettings, timeout_s: float = 5.0) -> dict[str, int | None]:
    """Partition counts of ``kafka_topic`` and ``kafka_dlq_topic`` (None: the topic does not
    exist yet), read without creating anything: what ``episodic doctor`` reports.

    Raises :class:`BrokerUnavailable`/:class:`KafkaError` with the setting to look at."""
    what = "reading Kafka topics"
    admin = _admin(settings, timeout_s, what)
    try:
        existing = set(admin.list_topics())
        return {
            name: _partition_count(admin, name) if name in existing else None
            for name in (settings.kafka_topic, settings.kafka_dlq_topic)
        }
    except _kafka_errors() as exc:
        raise _translate(exc, what, settings, timeout_s) from None
    finally:
        admin.close()


def _admin(settings: KafkaSettings, timeout_s: float, what: str) -> Any:
    """An admin client whose bootstrap and requests are bounded by ``timeout_s``."""
    from kafka import KafkaAdminClient

    wait_ms = int(timeout_s * 1000)
    cfg = client_config(settings)
    cfg["request_timeout_ms"] = min(cfg["request_timeout_ms"], wait_ms)
    try:
        return KafkaAdminClient(**cfg, bootstrap_timeout_ms=wait_ms)
    except _kafka_errors() as exc:
        raise _translate(exc, what, settings, timeout_s) from None


def _partition_count(admin: Any, topic: str) -> int:
    for desc in admin.describe_topics([topic]):
        if desc.get("name") == topic and desc.get("partitions"):
            return len(desc["partitions"])
    raise KafkaError(f"Kafka topic {topic!r} has no partitions in the broker's metadata")


# -- producing -----------------------------------------------------------------------------------
class ChunkProducer:
    """Produces opaque values to ``kafka_topic``, keyed by stream id.

    acks from all in-sync replicas, retries until ``kafka_delivery_timeout_ms``, one request
    in flight per connection (so a retry never reorders a stream's chunks), idempotent
    writes (the brokers drop a retried batch they already have). ``send`` returns
    kafka-python's future; :func:`delivery_result` waits for it with a clear error.
    """

    def __init__(self, settings: KafkaSettings, topic: str | None = None) -> None:
        from kafka import KafkaProducer

        self.settings = settings
        self.topic = topic or settings.kafka_topic
        self._closed = False
        cfg = client_config(settings)
        wait_ms = settings.kafka_request_timeout_ms
        try:
            self._producer = KafkaProducer(
                **cfg,
                acks="all",
                retries=2**31 - 1,  # bounded by delivery_timeout_ms
                max_in_flight_requests_per_connection=1,
                # Tansu (the test broker) hands out producer ids (InitProducerId) and accepts
                # idempotent batches with kafka-python 3.0.12, so this stays on.
                enable_idempotence=True,
                max_request_size=settings.kafka_max_message_bytes,
                # Kafka's rule: delivery timeout >= linger + request timeout
                delivery_timeout_ms=max(settings.kafka_delivery_timeout_ms, wait_ms + 1000),
                max_block_ms=wait_ms,  # send() waiting for topic metadata
                bootstrap_timeout_ms=wait_ms,
                linger_ms=0,
                compression_type=None,  # media is compressed already
            )
        except _kafka_errors() as exc:
            raise _translate(exc, "starting the Kafka producer", settings, wait_ms / 1000) from None

    def __repr__(self) -> str:
        return f"ChunkProducer(servers={_servers(self.settings)!r}, topic={self.topic!r})"

    def send(self, stream_id: str, value: bytes, headers: Sequence[tuple[str, bytes]] = ()) -> Any:
        """Queue ``value`` for the media topic under key ``stream_id``; returns the future."""
        return self.send_to(self.topic, stream_id.encode("utf-8"), value, headers, what=f"a message of {stream_id!r}")

    def send_to(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        headers: Sequence[tuple[str, bytes]] = (),
        what: str | None = None,
    ) -> Any:
        """Queue ``value`` for any topic (the dead-letter writer uses this)."""
        what = what or f"a message for {topic}"
        if self._closed:
            raise KafkaError(f"{what}: the producer is closed")
        limit = self.settings.kafka_max_message_bytes
        if len(value) > limit:
            raise KafkaError(
                f"{what}: message of {len(value)} bytes is over kafka_max_message_bytes ({limit})"
            )
        try:
            return self._producer.send(topic, value=bytes(value), key=key, headers=list(headers) or None)
        except _kafka_errors() as exc:
            raise _translate(exc, what, self.settings, self.settings.kafka_request_timeout_ms / 1000) from None

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every queued message is acknowledged or failed (then its future says
        which), at most ``timeout`` seconds (default: the delivery timeout)."""
        wait = timeout if timeout is not None else self.settings.kafka_delivery_timeout_ms / 1000 + 5
        try:
            self._producer.flush(timeout=wait)
        except _kafka_errors() as exc:
            raise _translate(exc, "waiting for Kafka acknowledgements", self.settings, wait) from None

    def close(self, timeout: float = 10.0) -> None:
        """Close, giving queued messages up to ``timeout`` seconds; call :meth:`flush` first
        (and check the futures) for delivery guarantees. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._producer.close(timeout=timeout)
        except _kafka_errors() as exc:  # closing must not mask the error that got us here
            log.warning("closing the Kafka producer: %s", _one_line(exc))

    def __enter__(self) -> ChunkProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def delivery_result(future: Any, what: str, settings: KafkaSettings, timeout: float | None = None) -> Any:
    """Wait for a send future; returns kafka-python's ``RecordMetadata`` (topic, partition,
    offset) or raises a one-line :class:`KafkaError` naming ``what``."""
    wait = timeout if timeout is not None else settings.kafka_delivery_timeout_ms / 1000 + 5
    try:
        return future.get(timeout=wait)
    except _kafka_errors() as exc:
        from kafka import errors as E

        if isinstance(exc, E.KafkaTimeoutError):
            raise KafkaError(
                f"{what} was not acknowledged by Kafka at {_servers(settings)} within "
                f"{settings.kafka_delivery_timeout_ms / 1000:g} s (kafka_delivery_timeout_ms): {_one_line(exc)}"
            ) from None
        raise _translate(exc, what, settings) from None


# -- consuming -----------------------------------------------------------------------------------
def make_consumer(
    settings: KafkaSettings, topics: Iterable[str] | None = None, group_id: str | None = None
) -> Any:
    """A group member with manual commits (see :func:`commit_offsets`), reading from the
    earliest offset when its group has none committed. With ``topics`` it is subscribed
    now; without, call ``consumer.subscribe([...], listener=...)`` yourself. Keys and values
    are raw bytes."""
    from kafka import KafkaConsumer

    cfg = client_config(settings)
    wait_ms = settings.kafka_request_timeout_ms
    max_bytes = settings.kafka_max_message_bytes
    try:
        return KafkaConsumer(
            *(list(topics) if topics else []),
            **cfg,
            group_id=group_id or settings.kafka_group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=max(max_bytes, 1024 * 1024),
            fetch_max_bytes=max(max_bytes, 50 * 1024 * 1024),
            max_poll_records=settings.worker_max_buffered_chunks,
            session_timeout_ms=settings.kafka_session_timeout_ms,
            heartbeat_interval_ms=settings.kafka_heartbeat_interval_ms,
            max_poll_interval_ms=settings.kafka_max_poll_interval_ms,
            bootstrap_timeout_ms=wait_ms,
        )
    except _kafka_errors() as exc:
        raise _translate(exc, "starting the Kafka consumer", settings, wait_ms / 1000) from None


def commit_offsets(consumer: Any, offsets: Mapping[Any, int], timeout_s: float | None = None) -> bool:
    """Commit ``{TopicPartition: next offset to read}`` for the consumer's group. Returns
    False (and logs) when the group is rebalancing or the commit could not be confirmed in
    time; the caller keeps its offsets and tries again later. Other failures raise
    :class:`KafkaError`."""
    from kafka import OffsetAndMetadata
    from kafka import errors as E

    if not offsets:
        return True
    # kafka-python 3: OffsetAndMetadata(offset, metadata, leader_epoch); -1 = unknown epoch
    payload = {tp: OffsetAndMetadata(int(off), "", -1) for tp, off in offsets.items()}
    if timeout_s is None:
        timeout_ms = int(getattr(consumer, "config", {}).get("request_timeout_ms", 30000))
    else:
        timeout_ms = int(timeout_s * 1000)
    try:
        consumer.commit(payload, timeout_ms=timeout_ms)
        return True
    except (
        E.CommitFailedError,
        E.RebalanceInProgressError,
        E.IllegalGenerationError,
        E.UnknownMemberIdError,
        E.RetriableError,  # coordinator moving, timeouts, lost connections
    ) as exc:
        log.warning("offset commit not done (%s): %s", type(exc).__name__, _one_line(exc))
        return False
    except E.KafkaError as exc:
        raise KafkaError(f"committing Kafka offsets: {type(exc).__name__}: {_one_line(exc)}") from None


# -- dead letters --------------------------------------------------------------------------------
class DeadLetterWriter:
    """Writes ``DeadLetter`` messages (proto/episodic/v1/media.proto) to ``kafka_dlq_topic``,
    keyed like the original message."""

    def __init__(self, producer: ChunkProducer, settings: KafkaSettings) -> None:
        self.producer = producer
        self.settings = settings
        self.topic = settings.kafka_dlq_topic

    def build(
        self,
        reason: str,
        topic: str,
        partition: int,
        offset: int,
        value: bytes,
        parsed: bool,
        worker_id: str,
    ) -> Any:
        """The DeadLetter message: ``value`` goes into ``chunk`` when ``parsed`` (it is a
        MediaChunk), otherwise into ``raw_value`` (first 1 MiB)."""
        from google.protobuf.message import DecodeError

        from episodic.proto.episodic.v1 import media_pb2

        dl = media_pb2.DeadLetter(
            reason=_one_line(reason, DEAD_LETTER_REASON_MAX_CHARS),
            topic=topic,
            partition=int(partition),
            offset=int(offset),
            rejected_at_ms=int(time.time() * 1000),
            worker_id=worker_id,
        )
        value = bytes(value or b"")
        if parsed:
            try:
                dl.chunk.ParseFromString(value)
            except DecodeError:
                dl.ClearField("chunk")
                parsed = False
        if not parsed:
            dl.raw_value = value[:DEAD_LETTER_RAW_MAX_BYTES]
        # a chunk near the size limit plus this envelope could exceed it: keep the metadata
        room = self.settings.kafka_max_message_bytes - 16 * 1024
        if dl.ByteSize() > room and dl.HasField("chunk"):
            size = len(dl.chunk.payload)
            dl.chunk.payload = b""
            dl.reason = _one_line(
                f"{dl.reason} [payload of {size} bytes dropped: too large for the dead-letter topic]",
                DEAD_LETTER_REASON_MAX_CHARS,
            )
        return dl

    def send(
        self,
        reason: str,
        topic: str,
        partition: int,
        offset: int,
        value: bytes,
        parsed: bool,
        worker_id: str,
        key: bytes | None = None,
    ) -> Any:
        """Queue a DeadLetter; returns the send future. ``key`` is the original message's
        key (default: the chunk's stream id when it parsed)."""
        dl = self.build(reason, topic, partition, offset, value, parsed, worker_id)
        if key is None and dl.HasField("chunk") and dl.chunk.stream_id:
            key = dl.chunk.stream_id.encode("utf-8")
        return self.producer.send_to(
            self.topic, key, dl.SerializeToString(), _DLQ_HEADERS,
            what=f"dead letter for {topic}[{partition}]@{offset}",
        )

    def flush(self, timeout: float | None = None) -> None:
        self.producer.flush(timeout)


def decode_dead_letter(value: bytes) -> Any:
    """Parse a message from the dead-letter topic into a ``DeadLetter``."""
    from episodic.proto.episodic.v1 import media_pb2

    return media_pb2.DeadLetter.FromString(value)
