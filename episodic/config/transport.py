"""Sections for moving media: chunks, live sources that drop, Kafka.

See :mod:`episodic.config` for how the flat keys are filed under sections.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChunkSettings:
    """Media chunks, the unit that travels through Kafka (embedded ingest uses them too)."""

    chunk_target_s: float = 1.0  # a chunk closes at the first video keyframe (or audio packet) after this
    chunk_max_bytes: int = 4 * 1024 * 1024  # the most media one Kafka chunk holds
    # a source with more than chunk_max_bytes between two keyframes (a phone's 1080p60 or 4K with
    # a 250-frame GOP) has its video re-encoded by `push` from there on, at the working size with
    # a keyframe every chunk_target_s (stream/gop_reencode.py); false: such a source is refused
    reencode_long_gop: bool = True
    # The per-stream pipeline restarts from scratch at a chunk boundary at least this often
    # (at a legal segment boundary): the worker's restart point, so a restarted worker
    # rebuilds exactly the state an uninterrupted one had (ours; = consolidation_max_s).
    checkpoint_interval_s: float = 60.0

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0.2 <= s.chunk_target_s <= 10:
            problems.append("chunk_target_s must be in 0.2..10 seconds")
        return problems


@dataclass(frozen=True)
class ReconnectSettings:
    """Live sources that drop and come back (push of rtsp://, http(s)://, HLS, srt://, devices)."""

    # A live source that breaks off is opened again with exponential backoff (first delay,
    # doubling up to the cap); the push gives up, closes the stream and exits non-zero after
    # this many failed attempts in a row or this long without the source, whichever is first.
    # 0 attempts: no reconnection (a drop ends the stream, as for a file).
    reconnect_attempts: int = 10
    reconnect_max_s: float = 300.0  # give up after this long without the source
    reconnect_first_delay_s: float = 1.0  # first wait before opening it again
    reconnect_max_delay_s: float = 30.0  # longest wait between two attempts

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 <= s.reconnect_attempts <= 1000:
            problems.append("reconnect_attempts must be in 0..1000")
        if not 0 < s.reconnect_first_delay_s <= s.reconnect_max_delay_s <= 3600:
            problems.append("reconnect delays must satisfy 0 < reconnect_first_delay_s <= reconnect_max_delay_s <= 3600")
        if not 0 < s.reconnect_max_s <= 7 * 24 * 3600:
            problems.append("reconnect_max_s must be in (0, 1 week]")
        return problems


@dataclass(frozen=True)
class KafkaSettings:
    """Kafka: push, worker and replay."""

    kafka_bootstrap_servers: str = "127.0.0.1:9092"  # comma-separated host:port list
    kafka_topic: str = "episodic.media"  # media chunks, keyed by stream id
    kafka_dlq_topic: str = "episodic.media.dlq"  # chunks that could not be decoded, with the reason
    # alerts of standing queries (episodic.v1.Alert protobuf, key = stream id), published by
    # the worker as it raises them; "" = not published
    kafka_alerts_topic: str = "episodic.alerts"
    kafka_partitions: int = 6  # when push/worker create the topic (existing topics are kept)
    kafka_replication_factor: int = 1  # when push/worker create the topic
    kafka_group_id: str = "episodic-workers"  # consumer group the workers share (partitions are split among them)
    kafka_client_id: str = "episodic"  # client id the brokers see (logs, quotas)
    kafka_security_protocol: str = "PLAINTEXT"  # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    kafka_sasl_mechanism: str = ""  # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
    kafka_sasl_username: str = ""  # for SASL_PLAINTEXT / SASL_SSL
    kafka_sasl_password: str = ""  # best set as EPISODIC_KAFKA_SASL_PASSWORD
    kafka_ssl_cafile: str = ""  # PEM CA for SSL / SASL_SSL
    kafka_ssl_certfile: str = ""  # client certificate (mutual TLS)
    kafka_ssl_keyfile: str = ""  # the client certificate's private key (PEM)
    kafka_max_message_bytes: int = 8 * 1024 * 1024  # producer request size / consumer fetch limit
    kafka_session_timeout_ms: int = 6000  # a worker silent this long leaves the group (its partitions move)
    kafka_heartbeat_interval_ms: int = 1000  # how often a worker tells the group it is alive
    kafka_max_poll_interval_ms: int = 600000  # one poll's chunks may take minutes to encode
    kafka_request_timeout_ms: int = 30000  # one request to a broker
    kafka_delivery_timeout_ms: int = 120000  # producer: give up on a chunk after this (retries included)
    worker_max_buffered_chunks: int = 64  # per worker: pause fetching past this (backpressure)

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.kafka_security_protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            problems.append("kafka_security_protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
        if s.kafka_partitions < 1 or s.kafka_replication_factor < 1:
            problems.append("kafka_partitions and kafka_replication_factor must be >= 1")
        if not s.kafka_topic or not s.kafka_dlq_topic or s.kafka_topic == s.kafka_dlq_topic:
            problems.append("kafka_topic and kafka_dlq_topic must be set and differ")
        if s.worker_max_buffered_chunks < 1:
            problems.append("worker_max_buffered_chunks must be >= 1")
        return problems
