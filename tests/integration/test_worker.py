"""Live ingest through Kafka, end to end: `episodic push` → a real broker (Tansu) →
`episodic worker` → Milvus Lite on disk, compared with embedded `episodic ingest` of the same
recordings. Real models, real decoding, real processes; `kill -9` is a real SIGKILL.

The promises held here (README, "Live streams through Kafka"): the worker stores exactly the
records embedded ingest stores; a worker killed mid-stream and restarted ends with the same
records, none missing, none doubled; two workers in one group split a multi-partition topic
with three streams; corrupt chunks, malformed and oversized messages go to the dead-letter
topic while the stream and its neighbours go on; a push survives a broker restart.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kafka.partitioner.default import murmur2

from episodic import samples
from episodic.components import Components
from episodic.config import Settings, load_settings
from episodic.dev_broker import LocalBroker, free_port
from episodic.pipeline import Checkpoint
from episodic.proto.episodic.v1 import media_pb2
from episodic.push import ChunkSender, push_source
from episodic.stream import kafka_io
from episodic.stream.chunks import Chunker
from episodic.stream.media_chunk import SCHEMA_VERSION
from episodic.worker import Worker
from tests.cli_runner import run_cli, start_cli
from tests.kafka_fixtures import kafka_test_settings

pytestmark = pytest.mark.slow

CHECKPOINT_S = 10.0  # several checkpoints per recording, so restarts resume mid-stream
LONG = "cam-long"


def _kafka_env(s: Settings) -> dict[str, str]:
    """The settings a CLI child needs to reach this test's broker, topics and group."""
    keys = [f for f in s.flat() if f.startswith("kafka_")] + ["checkpoint_interval_s"]
    return {f"EPISODIC_{k.upper()}": str(getattr(s, k)) for k in keys}


def _records(store: Any, stream_id: str) -> tuple[list[tuple], list[tuple]]:
    memories = sorted(store.list_memories(stream_id=stream_id), key=lambda m: m.id)
    events = sorted(store.list_events(stream_id=stream_id), key=lambda e: e.id)
    return (
        [(m.id, m.t_start, m.t_end, m.transcript_text, m.visual_text, m.ocr_text, len(m.snippets),
          bool(m.metadata.get("provisional"))) for m in memories],
        [(e.id, e.memory_id, e.t_start, e.t_end, e.summary, bool(e.metadata.get("provisional"))) for e in events],
    )


def _read_store(data: Path, stream_ids: list[str], **overrides: Any) -> dict[str, Any]:
    c = Components(load_settings(data_dir=data, **overrides))
    try:
        out = {sid: _records(c.store, sid) for sid in stream_ids}
        out["_streams"] = {i.stream_id: i for i in c.store.list_streams()}
        out["_counts"] = c.store.counts()
        return out
    finally:
        c.close()


class Lines:
    """Reads a child's stderr in a thread, so a test can wait for a line without blocking."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._q.put(line)
        self._q.put(None)

    def wait_for(self, pattern: str, timeout_s: float = 240.0, count: int = 1) -> list[str]:
        """Block until ``count`` lines matched ``pattern`` (in all lines seen so far)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        while sum(bool(rx.search(x)) for x in self.seen) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {count}× {pattern!r} in {timeout_s} s:\n" + "".join(self.seen[-30:]))
            try:
                line = self._q.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.wait(timeout=30)
                raise AssertionError(f"process ended (exit {code}) before {pattern!r}:\n" + "".join(self.seen[-30:]))
            self.seen.append(line)
        return [x for x in self.seen if rx.search(x)]

    def finish(self, timeout_s: float = 600.0) -> str:
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
            raise AssertionError(f"still running after {timeout_s} s:\n" + self._drain()[-6000:]) from None
        return self._drain()

    def _drain(self) -> str:
        """All lines seen, after taking what the reader thread has queued."""
        while True:
            try:
                line = self._q.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
        return "".join(self.seen)


def _finish_all(logs: list[Lines], timeout_s: float) -> list[str]:
    """Wait for every child to exit; if one does not within ``timeout_s`` (in all), stop them
    all and fail with every child's last lines (a hang between workers needs both sides)."""
    deadline = time.monotonic() + timeout_s
    try:
        return [log.finish(timeout_s=max(1.0, deadline - time.monotonic())) for log in logs]
    except AssertionError as e:
        for log in logs:
            if log.proc.poll() is None:
                log.proc.kill()
        others = "\n".join(f"--- child {i} ---\n" + log._drain()[-4000:] for i, log in enumerate(logs))
        raise AssertionError(f"{e}\n{others}") from None


def _scrape(port: int) -> dict[str, float]:
    """``/metrics`` as {series (name plus labels, as printed): value}."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            out[sample.name + (f"{{{labels}}}" if labels else "")] = sample.value
    return out


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)


def _ids_in_distinct_partitions(n: int, partitions: int, prefix: str) -> list[str]:
    """Stream ids whose keys the default partitioner puts in ``n`` different partitions."""
    out: dict[int, str] = {}
    for i in range(1000):
        sid = f"{prefix}-{i}"
        p = (murmur2(sid.encode()) & 0x7FFFFFFF) % partitions
        out.setdefault(p, sid)
        if len(out) == n:
            return list(out.values())
    raise AssertionError("no such ids")


SHORT = _ids_in_distinct_partitions(3, 3, "cam")  # three short streams, one per partition of 3


# -- recordings and the embedded reference ------------------------------------------------------
@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("live")
    long = root / f"{LONG}.mp4"  # files named after their stream ids: one `ingest` takes them all
    samples.make_recording(
        long,
        [samples.Scene(9, seed=i, tint=(40 * i, 200 - 30 * i, 90)) for i in range(1, 5)],
        [
            samples.Speech(1.0, "Maria parked the red bicycle."),
            samples.Speech(12.0, "The train to Oxford leaves from platform seven."),
            samples.Speech(24.0, "The library closes at six."),
        ],
    )
    files = {LONG: long}
    for i, (text, words) in enumerate(
        [("NORTH GATE", "The delivery van is late again."),
         ("HARBOUR", "Two boats left the harbour at noon."),
         ("MARKET", "Fresh bread is sold at the market.")]
    ):
        p = root / f"{SHORT[i]}.mp4"
        samples.make_recording(p, [samples.Scene(6, seed=10 + i, text=text), samples.Scene(6, seed=20 + i)],
                               [samples.Speech(1.0, words)])
        files[SHORT[i]] = p
    return files


@pytest.fixture(scope="module")
def reference(tmp_path_factory, media) -> dict[str, Any]:
    """Embedded `episodic ingest` of every recording: the records the worker must match."""
    data = tmp_path_factory.mktemp("embedded")
    env = {"EPISODIC_CHECKPOINT_INTERVAL_S": str(CHECKPOINT_S)}
    run_cli("ingest", *(str(p) for p in media.values()), data=data, env=env)
    return _read_store(data, list(media))


@pytest.fixture()
def kafka(kafka_broker, request) -> Settings:
    return kafka_test_settings(kafka_broker, name=request.node.name, checkpoint_interval_s=CHECKPOINT_S)


def _push(path: Path, sid: str, s: Settings, data: Path, *extra: str) -> dict[str, Any]:
    out = run_cli("push", str(path), "--stream-id", sid, "--json", *extra, data=data, env=_kafka_env(s))
    return json.loads(out.stdout)


# -- push → worker = ingest ---------------------------------------------------------------------
def test_push_then_worker_stores_what_ingest_stores(kafka, media, reference, tmp_path):
    data = tmp_path / "worker"
    pushed = _push(media[LONG], LONG, kafka, data)
    assert pushed["stream_id"] == LONG and pushed["chunks"] >= 18 and abs(pushed["stream_s"] - 36) < 1
    # the same recording pushed twice: the worker must store it once
    assert _push(media[LONG], LONG, kafka, data)["chunks"] == pushed["chunks"]

    out = run_cli("worker", "--exit-when-idle", "3", data=data, env=_kafka_env(kafka))
    assert re.search(rf"worker stopped: {pushed['chunks']} chunks, 1 streams ended, {pushed['chunks']} skipped, 0 dead", out.stderr), out.stderr

    got = _read_store(data, [LONG])
    assert got[LONG] == reference[LONG]
    assert got[LONG][0] and any("platform" in m[3].lower() for m in got[LONG][0])
    info = got["_streams"][LONG]
    assert info.memories == len(reference[LONG][0]) and Checkpoint.of(info).ended
    assert info.source == str(media[LONG].resolve())  # the same provenance ingest writes
    events = json.loads(run_cli("events", "--stream-id", LONG, "--json", data=data).stdout)["events"]
    assert len(events) == len(reference[LONG][1])
    # now that the stream has ended and is stored, the producer is told instead of the worker
    again = run_cli("push", str(media[LONG]), "--stream-id", LONG, data=data, env=_kafka_env(kafka), check=False)
    assert again.returncode == 2 and "has ended and is stored" in again.stderr and "--append" in again.stderr


def test_a_phone_length_gop_is_pushed_re_encoded_and_remembered_as_ingest_does(kafka, tmp_path):
    """Keyframes 250 frames apart at 720p: too much between two keyframes for one Kafka chunk
    here, so push re-encodes the video (and says so) instead of refusing the recording; the
    worker remembers what embedded ingest of the same file remembers, its checkpoint (every
    10 s here) placed so that the scene cut at 8 s stays a memory's edge.

    The audio is AAC without noise substitution: with it, the worker's 1 s chunks and
    ingest's one 14 s chunk decode the noise bands from freshly seeded generators at
    different places, and Whisper hears the two slightly different waveforms differently."""
    path = tmp_path / "phone.mp4"
    samples.make_recording(
        path,
        [samples.Scene(8, seed=3, text="PLATFORM 7"), samples.Scene(6, seed=4, tint=(200, 60, 60))],
        [samples.Speech(1.0, "The train to Oxford leaves from platform seven.")],
        width=1280, height=720, keyframe_interval=250, audio_options={"aac_pns": "0"},
    )
    env = {**_kafka_env(kafka), "EPISODIC_CHUNK_MAX_BYTES": str(150 * 1024)}
    data = tmp_path / "worker"
    out = run_cli("push", str(path), "--stream-id", "phone", "--json", data=data, env=env)
    assert "re-encoding its video" in out.stderr and "640x360" in out.stderr
    pushed = json.loads(out.stdout)
    assert pushed["chunks"] >= 12 and abs(pushed["stream_s"] - 14) < 0.2
    run_cli("worker", "--exit-when-idle", "3", data=data, env=env)
    got = _read_store(data, ["phone"])["phone"][0]
    embedded = tmp_path / "embedded"
    run_cli("ingest", str(path), "--stream-id", "phone", data=embedded)
    want = _read_store(embedded, ["phone"])["phone"][0]
    said = " ".join(m[3] for m in got).split()  # (a visual cut may fall a frame apart: compare words)
    assert said == " ".join(m[3] for m in want).split() and "platform" in " ".join(said).lower()
    assert "PLATFORM" in " ".join(m[5] for m in got)
    assert (got[0][1], got[-1][2]) == pytest.approx((want[0][1], want[-1][2]), abs=0.1)
    assert any(m[2] == pytest.approx(8.0, abs=0.1) for m in want)  # the scene cut...
    assert any(m[2] == pytest.approx(8.0, abs=0.1) for m in got)  # ...kept across the checkpoint


# -- kill -9 in the middle of a stream ------------------------------------------------------------
def test_worker_killed_mid_stream_resumes_without_loss_or_duplicates(kafka, media, reference, tmp_path):
    data = tmp_path / "killed"
    _push(media[LONG], LONG, kafka, data)
    env = _kafka_env(kafka)
    metrics_port = free_port()
    first = start_cli("worker", data=data, env={**env, "EPISODIC_METRICS_PORT": str(metrics_port)})
    try:
        log = Lines(first)
        log.wait_for(r"checkpoint at chunk", count=2)  # 2 runs stored, the third one open
        # the worker's Prometheus endpoint, mid-stream: what an operator would scrape
        scraped = _scrape(metrics_port)
        assert scraped['episodic_chunks_total{outcome="used"}'] >= 2
        assert scraped["episodic_segments_stored_total"] >= 1
        assert scraped["episodic_ingest_lag_seconds_count"] >= 2  # one per stored checkpoint
        assert 0 < scraped["episodic_ingest_lag_last_seconds"] < 600
        assert scraped["episodic_open_streams"] == 1
        assert abs(time.time() - scraped["episodic_worker_heartbeat_seconds"]) < 120
        # (no "llm": on the local default summaries are composed, the model is not used at ingest)
        for role, op in (("asr", "transcribe"), ("embedder", "embed_texts"), ("describer", "describe")):
            assert scraped[f'episodic_model_latency_seconds_count{{operation="{op}",role="{role}"}}'] >= 1, role
        time.sleep(1.0)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        _stop(first)
    assert first.returncode == -signal.SIGKILL
    mid = _read_store(data, [LONG])
    cp = Checkpoint.of(mid["_streams"][LONG])
    assert cp is not None and cp.seq > 0 and not cp.ended  # killed mid-stream indeed

    second = run_cli("worker", "--exit-when-idle", "3", data=data, env=env)
    assert re.search(rf"{LONG}: resuming at chunk {cp.seq}\b", second.stderr), second.stderr
    final = _read_store(data, [LONG])
    assert final[LONG] == reference[LONG]  # none missing, none doubled, same content
    counts = final["_counts"]
    assert counts["memories"] == counts["events"] == len(reference[LONG][0]), counts
    info = final["_streams"][LONG]
    assert info.memories == len(reference[LONG][0]) == info.events and Checkpoint.of(info).ended


# -- two workers, three streams, three partitions -------------------------------------------------
@pytest.fixture()
def shared_milvus(tmp_path) -> Any:
    """A `milvus-lite server` on loopback: the store several worker processes share."""
    port = free_port()
    exe = Path(sys.executable).with_name("milvus-lite")
    proc = subprocess.Popen(
        [str(exe), "server", "--data-dir", str(tmp_path / "milvus"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        import socket

        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("milvus-lite server did not start") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_two_workers_share_three_streams(kafka, media, reference, tmp_path, shared_milvus):
    s = kafka.replace(kafka_partitions=3)
    data = tmp_path / "shared"
    env = {**_kafka_env(s), "EPISODIC_MILVUS_URI": shared_milvus}
    sids = SHORT  # one per partition of three
    sources = {sid: media[sid] for sid in sids}
    kafka_io.ensure_topics(s)
    # A worker with nothing to do for --exit-when-idle seconds after joining leaves, and the
    # other takes its partitions: the three streams are pushed from this process (no start-up
    # per push) and the idle limit leaves room for a loaded machine (three `episodic push`
    # processes one after another took longer than 6 s in CI: the worker whose stream came
    # last had already left, and the other did all the work)
    workers = [start_cli("worker", "--exit-when-idle", "20", data=data, env=env) for _ in range(2)]
    try:
        logs = [Lines(w) for w in workers]
        for log in logs:
            log.wait_for(r"assigned \[.+\]", timeout_s=180)
        for sid, path in sources.items():
            push_source(str(path), sid, s)
        texts = _finish_all(logs, timeout_s=360)
    finally:
        for w in workers:
            _stop(w)
    for w, text in zip(workers, texts, strict=True):
        assert w.returncode == 0, text
    done = [re.search(r"worker stopped: (\d+) chunks, (\d+) streams ended", t) for t in texts]
    assert all(done), texts
    ended = [int(m.group(2)) for m in done]
    assert sum(ended) == 3 and min(int(m.group(1)) for m in done) > 0, texts  # both did work

    got = _read_store(data, sids, milvus_uri=shared_milvus)
    for sid in sids:
        assert got[sid] == reference[sid], sid
    assert set(got["_streams"]) == set(sids)


def _drain_once(s: Settings, writes: list[tuple[str, bool]] | None = None) -> tuple[Components, Any]:
    """An in-process worker that runs until its topic has been idle for 3 s; the caller
    reads the store through the returned components and closes them. ``writes`` collects
    (event id, provisional) for every event written."""
    components = Components(s)
    if writes is not None:
        original = components.store.upsert_events

        def upsert_events(events: Any) -> None:
            original(events)
            writes.extend((e.id, bool(e.metadata.get("provisional"))) for e in events)

        components.store.upsert_events = upsert_events
    worker = Worker(components)
    try:
        return components, worker.run(idle_exit_s=3.0)
    finally:
        worker.close()


# -- fresh memories: provisional, then final -----------------------------------------------------
class _LiveSender(ChunkSender):
    """Marks every chunk as captured live, as a camera's push (or `push --realtime`) does."""

    def send(self, chunk: Any) -> int:
        chunk.live = True
        return super().send(chunk)


def test_a_live_stream_s_open_memory_is_answerable_before_consolidation_closes_it(kafka, media, reference, tmp_path):
    """Each segment's memory is stored (provisional) as soon as the segment closes, long before
    the next segment tells consolidation whether to merge; the final records replace those
    in place, and what remains is exactly what embedded ingest stores."""
    s = kafka.replace(data_dir=tmp_path / "fresh")
    kafka_io.ensure_topics(s)
    # sent as a camera sends it (each chunk marked live), without waiting the 36 s a paced
    # `push --realtime` would take
    with _LiveSender(s) as sender:
        push_source(str(media[LONG]), LONG, s, sender=sender)
    components = Components(s)
    # a standing query on this data directory: the worker evaluates it as memories form
    from episodic.core.watches import Watch
    from episodic.memory.watch_store import SqliteWatchStore

    watches = SqliteWatchStore(s.watches.resolved_watch_db(s.data_dir))
    watches.add_watch(Watch(id="w-oxford", query="the train to Oxford", key_id="local", created_at=time.time()))
    watches.close()
    fed = {"t": 0.0}
    writes: list[tuple[str, float, bool, float]] = []  # (event id, t_end, provisional, stream time fed)
    wall: dict[tuple[str, bool], float] = {}  # (event id, provisional) → first write time
    original = components.store.upsert_events

    def upsert_events(events: Any) -> None:
        original(events)
        writes.extend((e.id, e.t_end, bool(e.metadata.get("provisional")), fed["t"]) for e in events)
        for e in events:
            wall.setdefault((e.id, bool(e.metadata.get("provisional"))), time.time())

    components.store.upsert_events = upsert_events
    worker = Worker(components, on_chunk=lambda chunk, stats: fed.__setitem__("t", max(fed["t"], chunk.t_end)))
    try:
        worker.run(idle_exit_s=3.0)
        got = _records(components.store, LONG)
    finally:
        worker.close()
        components.close()
    assert got == reference[LONG]  # nothing doubled, lost or left provisional
    finals = {eid: t_end for eid, t_end, provisional, _ in writes if not provisional}
    assert set(finals) == {e[0] for e in reference[LONG][1]}
    first_seen = {}
    for eid, t_end, provisional, fed_t in writes:
        first_seen.setdefault(eid, (provisional, t_end, fed_t))
    for eid, (provisional, t_end, fed_t) in first_seen.items():
        assert provisional, f"{eid} was first written final"
        # stored when its first segment closed: the segmenter's look-ahead (at most
        # segment_min_s) and a chunk (2 s) later; a final write waits for the next segment too
        assert fed_t - t_end <= s.segment_min_s + 2.5, (eid, t_end, fed_t)
    # each memory was answerable (provisional) before it was final, and nothing provisional
    # was written after its final version (a preview may have differed in size: a held
    # segment merged, or re-split when the run closed)
    for eid in finals:
        last_final = max(i for i, w in enumerate(writes) if w[0] == eid and not w[2])
        assert not any(w[0] == eid and w[2] for w in writes[last_final + 1:]), eid
    # the watch fired once, on the memory that heard it, while that memory was still provisional,
    # and the alert went to the alerts topic as an episodic.v1.Alert
    from episodic.proto.episodic.v1 import episodic_pb2 as pb

    consumer = kafka_io.make_consumer(s, [s.kafka_alerts_topic], group_id=s.kafka_group_id + ".alerts")
    published: list[Any] = []
    try:
        deadline = time.monotonic() + 20
        while not published and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=300).values():
                published += [pb.Alert.FromString(r.value) for r in records]
    finally:
        consumer.close()
    assert len(published) == 1, published
    alert = published[0]
    assert alert.watch_id == "w-oxford" and alert.stream_id == LONG and 0 < alert.confidence <= 1
    (event,) = alert.event_ids
    heard = {m[0]: m[3].lower() for m in reference[LONG][0]}
    assert "train" in heard[alert.segment_ids[0]] or "oxford" in heard[alert.segment_ids[0]], (alert, heard)
    assert alert.created_at <= wall[(event, False)], "the alert waited for the final memory"


# -- dead letters, malformed and oversized messages -----------------------------------------------
def _dead_letters(s: Settings, want: int) -> list[Any]:
    consumer = kafka_io.make_consumer(s, [s.kafka_dlq_topic], group_id=s.kafka_group_id + ".dlq-reader")
    out: list[Any] = []
    try:
        deadline = time.monotonic() + 30
        while len(out) < want and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=300).values():
                out.extend(kafka_io.decode_dead_letter(r.value) for r in records)
    finally:
        consumer.close()
    return out


def test_bad_messages_go_to_the_dead_letter_topic_and_streams_go_on(kafka, media, reference, tmp_path):
    s = kafka.replace(data_dir=tmp_path / "dlq")
    kafka_io.ensure_topics(s)
    with Chunker(str(media[SHORT[0]]), "cam-bad", s) as chunker:
        bad_stream = list(chunker)
    assert len(bad_stream) >= 5
    broken = bad_stream[2]
    broken.payload = b"\x47" + bytes(range(256)) * 200  # an MPEG-TS sync byte, then noise
    with kafka_io.ChunkProducer(s) as producer:
        futures = [producer.send("cam-bad", c.to_bytes()) for c in bad_stream[:3]]
        futures.append(producer.send("cam-bad", b"\x08\x96\x01 this is not a MediaChunk \xff\xfe"))
        oversized = media_pb2.MediaChunk(
            schema_version=SCHEMA_VERSION, stream_id="cam-bad", seq=99, t_start=30.0, t_end=31.0,
            container="mpegts", video_codec="h264", payload=b"\x00" * (s.chunk_max_bytes + 1024),
        )
        futures.append(producer.send("cam-bad", oversized.SerializeToString()))
        futures += [producer.send("cam-bad", c.to_bytes()) for c in bad_stream[3:]]
        producer.flush()
        for i, f in enumerate(futures):
            kafka_io.delivery_result(f, f"message {i}", s)
    push_source(str(media[SHORT[1]]), SHORT[1], s)  # a neighbour on the same topic

    components, stats = _drain_once(s)
    try:
        assert stats.dead_lettered == 3 and stats.streams_ended == 2
        assert _records(components.store, SHORT[1]) == reference[SHORT[1]]
        bad = _records(components.store, "cam-bad")
        assert bad[0], "the stream went on after its corrupt chunk"
        assert max(m[2] for m in bad[0]) > bad_stream[-1].t_end - 1.0  # up to its end
    finally:
        components.close()

    letters = _dead_letters(s, 3)
    assert len(letters) == 3
    by_offset = sorted(letters, key=lambda d: d.offset)
    corrupt, malformed, big = by_offset
    assert corrupt.HasField("chunk") and corrupt.chunk.seq == broken.seq and corrupt.chunk.stream_id == "cam-bad"
    assert corrupt.reason and corrupt.topic == s.kafka_topic
    assert not malformed.HasField("chunk") and malformed.raw_value.startswith(b"\x08\x96\x01")
    assert "chunk_max_bytes" in big.reason or "too large" in big.reason, big.reason
    for d in letters:
        assert "\n" not in d.reason and d.worker_id


def test_a_stream_whose_first_chunk_is_garbage_does_not_pin_its_partition(kafka, media, tmp_path):
    """Issue 13: a new stream id whose only chunk does not decode used to stay open for good,
    holding its partition's committed offset at that chunk; an idle worker never exited."""
    s = kafka.replace(data_dir=tmp_path / "pin", kafka_topic="episodic.pin")
    kafka_io.ensure_topics(s)
    with Chunker(str(media[SHORT[0]]), "cam-dead", s) as chunker:
        first = next(iter(chunker))
    first.payload = b"\x47" + bytes(range(256)) * 200  # an MPEG-TS sync byte, then noise
    with kafka_io.ChunkProducer(s) as producer:
        kafka_io.delivery_result(producer.send("cam-dead", first.to_bytes()), "garbage", s)
    push_source(str(media[SHORT[1]]), SHORT[1], s)  # a clean stream after it
    components = Components(s)
    worker = Worker(components)
    done: list[Any] = []
    runner = threading.Thread(target=lambda: done.append(worker.run(idle_exit_s=3.0)), daemon=True)
    try:
        runner.start()
        runner.join(timeout=300)  # before the fix it never returned: the stream stayed open
        if runner.is_alive():
            worker.stop()
            runner.join(timeout=30)
        assert done, "the idle worker did not exit: the garbage stream stayed open"
        stats = done[0]
        assert stats.dead_lettered == 1 and stats.streams_ended == 1
        assert not worker.streams
        ends = worker.consumer.end_offsets(list(worker.committed))
        assert worker.committed == ends, (worker.committed, ends)  # every offset moved on
    finally:
        worker.close()
        components.close()


def test_a_poll_batch_that_outruns_the_poll_budget_is_left_for_the_next_poll(kafka, media, reference, tmp_path, caplog):
    """A member that does not poll within ``kafka_max_poll_interval_ms`` loses its partitions
    and two loaded workers then hand one backlog back and forth for good (seen in CI). The
    worker stops handling a poll's records after half the interval, moves the consumer back
    and polls again: with an 8 s interval the 36 s recording's batch is cut, and nothing is
    lost or doubled."""
    s = kafka.replace(data_dir=tmp_path / "budget", kafka_max_poll_interval_ms=8000)
    kafka_io.ensure_topics(s)
    sid = LONG
    push_source(str(media[sid]), sid, s)
    components = Components(s)
    for model in ("asr", "describer", "embedder", "llm"):  # loaded before the clock runs
        getattr(components, model)
    worker = Worker(components)
    try:
        with caplog.at_level(logging.INFO, logger="episodic.worker"):
            stats = worker.run(idle_exit_s=3.0)
        assert any("poll budget" in r.getMessage() for r in caplog.records), "no batch was cut"
        assert stats.streams_ended == 1 and stats.dead_lettered == 0
        assert _records(components.store, sid) == reference[sid]
    finally:
        worker.close()
        components.close()


def test_a_worker_put_out_of_its_group_mid_chunk_resumes_and_loses_nothing(kafka, media, reference, tmp_path, caplog):
    """One chunk outlasts ``kafka_max_poll_interval_ms`` (a stall): the group revokes the
    partitions on kafka-python's IO thread, where the worker used to commit and raise
    "User rebalance callback throws an error"; now the run thread drops them, rejoins,
    re-reads from the last commit and the stored records are still the reference's."""
    s = kafka.replace(data_dir=tmp_path / "stall", kafka_max_poll_interval_ms=4000)
    kafka_io.ensure_topics(s)
    sid = SHORT[1]
    push_source(str(media[sid]), sid, s)
    components = Components(s)
    stalled: list[int] = []

    def stall_once(chunk: Any, stats: Any) -> None:
        if chunk.seq == 2 and not stalled:
            stalled.append(chunk.seq)
            time.sleep(7)  # past the 4 s interval: the heartbeat thread leaves the group

    worker = Worker(components, on_chunk=stall_once)
    try:
        with caplog.at_level(logging.INFO):
            stats = worker.run(idle_exit_s=3.0)
        messages = [r.getMessage() for r in caplog.records]
        assert stalled and any("put out of the group" in m for m in messages), messages[-20:]
        assert not any("rebalance callback" in m for m in messages)
        assert stats.streams_ended == 1
        assert _records(components.store, sid) == reference[sid]
    finally:
        worker.close()
        components.close()


# -- the broker goes away while a push runs ------------------------------------------------------
def test_push_rides_out_a_broker_restart(media, tmp_path):
    """acks=all: the producer retries through a short broker outage and every chunk the
    broker acknowledges after it comes back is there, in order (this broker keeps messages
    in memory, so what it held before the restart is gone with it: a durable Kafka keeps
    those too); when the broker stays away, the push fails with one line naming the chunk."""
    with LocalBroker(log_dir=tmp_path / "tansu") as broker:  # its own log dir survives stop()
        s = kafka_test_settings(broker, name="restart", kafka_delivery_timeout_ms=30000, data_dir=tmp_path)
        kafka_io.ensure_topics(s)
        result: dict[str, Any] = {}
        sender = ChunkSender(s)

        def run() -> None:
            try:
                result["progress"] = push_source(str(media[SHORT[0]]), "cam-r", s, realtime=True, sender=sender)
            except Exception as exc:  # noqa: BLE001 - the test reports it
                result["error"] = exc

        t = threading.Thread(target=run)
        t.start()
        time.sleep(4.0)
        broker.stop()
        time.sleep(2.0)
        broker.start()
        kafka_io.ensure_topics(s)
        t.join(timeout=120)
        assert not t.is_alive()
        sender.close()
        assert "error" not in result, result.get("error")
        # this broker forgot the producer's id with everything else: a new producer took over
        assert sender.rebuilds >= 1
        progress = result["progress"]
        total = progress.chunks
        consumer = kafka_io.make_consumer(s, [s.kafka_topic])
        try:
            got: list[int] = []
            live: set[bool] = set()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and (not got or got[-1] != total - 1):
                for records in consumer.poll(timeout_ms=300).values():
                    sent = [media_pb2.MediaChunk.FromString(r.value) for r in records]
                    got += [c.seq for c in sent]
                    live |= {c.live for c in sent}
        finally:
            consumer.close()
        assert got and got == list(range(got[0], total)), got  # the tail is complete and ordered
        assert live == {True}  # a file paced like a camera is sent as live
        assert got[0] < total - 2  # chunks sent during and after the outage arrived

        # the broker does not come back: a clear failure within the delivery timeout
        s2 = s.replace(kafka_delivery_timeout_ms=5000, kafka_request_timeout_ms=3000)
        result.clear()

        def run2() -> None:
            try:
                push_source(str(media[SHORT[1]]), "cam-r2", s2, realtime=True)
            except Exception as exc:  # noqa: BLE001
                result["error"] = exc

        t2 = threading.Thread(target=run2)
        t2.start()
        time.sleep(2.0)
        broker.stop()
        t2.join(timeout=120)
        assert not t2.is_alive()
    err = result.get("error")
    assert err is not None and "chunk" in str(err) and "\n" not in str(err), err


# -- replay: a folder through the same path --------------------------------------------------------
def test_replay_a_folder_through_kafka(kafka, media, reference, tmp_path):
    folder = tmp_path / "archive"
    (folder / "day1").mkdir(parents=True)
    for sid in SHORT[:2]:
        (folder / "day1" / f"{sid}.mp4").write_bytes(media[sid].read_bytes())
    (folder / "day1" / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
    (folder / "notes.txt").write_text("not a recording")
    data = tmp_path / "replayed"
    env = _kafka_env(kafka)
    out = run_cli("replay", str(folder), "--json", data=data, env=env, check=False)
    assert out.returncode == 3, out.stderr  # one recording failed; the others went through
    report = json.loads(out.stdout)
    assert sorted(r["stream_id"] for r in report["replayed"]) == sorted(SHORT[:2])
    assert [f["stream_id"] for f in report["failed"]] == ["broken"] and report["failed"][0]["error"]
    assert report["stream_minutes"] > 0.3

    run_cli("worker", "--exit-when-idle", "3", data=data, env=env)
    got = _read_store(data, SHORT[:2])
    for sid in SHORT[:2]:
        assert got[sid] == reference[sid], sid


# -- a push killed mid-stream and started again ------------------------------------------------------
def test_a_restarted_push_with_other_content_keeps_both_recordings_in_order(kafka, media, tmp_path):
    """The first push of cam-r dies ~16 s into the long recording (no end-of-stream); a new
    push under the same id sends a short one from its chunk 0. Through Kafka the worker keeps
    both, the second after the first, and drops nothing as a duplicate."""
    s = kafka.replace(data_dir=tmp_path / "restart")
    kafka_io.ensure_topics(s)
    with Chunker(str(media[LONG]), "cam-r", s) as chunker:
        killed = list(chunker)[:8]
    with Chunker(str(media[SHORT[1]]), "cam-r", s) as chunker:  # HARBOUR
        again = list(chunker)
    with kafka_io.ChunkProducer(s) as producer:
        futures = [producer.send("cam-r", c.to_bytes()) for c in killed + again]
        producer.flush()
        for i, f in enumerate(futures):
            kafka_io.delivery_result(f, f"message {i}", s)
    components, stats = _drain_once(s)
    try:
        assert stats.streams_ended == 1 and stats.skipped == 0 and stats.chunks == len(killed) + len(again)
        memories, _ = _records(components.store, "cam-r")
        spliced_at = killed[-1].t_end
        assert abs(max(m[2] for m in memories) - (spliced_at + again[-1].t_end)) < 0.2
        assert any("bicycle" in m[3].lower() and m[1] < spliced_at for m in memories), memories
        # what the second recording shows and says lies after the splice (a segment may span it)
        harbour = [m for m in memories if "harbour" in (m[3] + " " + m[5]).lower()]
        assert harbour and all(m[2] > spliced_at for m in harbour), [(m[1], m[2], m[3], m[5]) for m in memories]
    finally:
        components.close()


def test_push_append_continues_an_ended_stream_and_a_plain_re_push_is_ignored(kafka, media, tmp_path):
    s = kafka.replace(data_dir=tmp_path / "append")
    kafka_io.ensure_topics(s)
    first = push_source(str(media[SHORT[0]]), "cam-ap", s)  # NORTH GATE, then it ends
    push_source(str(media[SHORT[0]]), "cam-ap", s)  # the same again: stored once
    push_source(str(media[SHORT[2]]), "cam-ap", s, append=True)  # MARKET, after the end
    writes: list[tuple[str, bool]] = []
    components, stats = _drain_once(s, writes)
    try:
        # recordings pushed as fast as they read: each memory is formed once, heard with its
        # minute, never previewed (a preview would hear every segment a second time)
        assert writes and not any(provisional for _, provisional in writes), writes
        assert stats.streams_ended == 2 and stats.skipped == first.chunks
        memories, _ = _records(components.store, "cam-ap")
        ended_at = first.stream_s
        gate = [m for m in memories if "NORTH GATE" in m[5]]
        market = [m for m in memories if "MARKET" in m[5]]
        assert gate and market and max(m[2] for m in gate) <= ended_at + 0.05 < min(m[1] for m in market) + 0.05
        info = components.store.get_stream("cam-ap")
        assert abs(info.t_end - (ended_at + 12.0)) < 0.2 and info.memories == len(memories)
        assert Checkpoint.of(info).ended and len(info.metadata["sessions"]) == 2
    finally:
        components.close()


# -- bad input on the command line (no models needed) -------------------------------------------------
def test_push_and_worker_bad_input_are_one_line_errors(kafka, media, tmp_path):
    env = _kafka_env(kafka)
    data = tmp_path / "d"
    cases = [
        (("push", str(tmp_path / "missing.mp4"), "--stream-id", "cam"), env, "not found"),
        (("push", str(media[SHORT[0]]), "--stream-id", "bad id'; drop"), env, "stream id"),
        (("push", str(media[SHORT[0]]), "--stream-id", "cam", "--option", "novalue"), env, "KEY=VALUE"),
        (("replay", str(tmp_path / "nothing-here")), env, "no recordings"),
        (("replay", str(media[SHORT[0]].parent), "--stream-id-from", "weird"), env, "filename or parent"),
    ]
    dead = {**env, "EPISODIC_KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{free_port()}",
            "EPISODIC_KAFKA_REQUEST_TIMEOUT_MS": "3000"}
    unreachable = [
        (("push", str(media[SHORT[0]]), "--stream-id", "cam"), dead, "cannot reach a Kafka broker"),
        (("worker", "--exit-when-idle", "1"), dead, "cannot reach a Kafka broker"),
    ]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:  # independent processes: mostly interpreter start-up
        runs = list(pool.map(lambda c: run_cli(*c[0], data=data, env=c[1], check=False, timeout=120),
                             cases + unreachable))
    for (args, _, words), out in zip(cases, runs[: len(cases)], strict=True):
        assert out.returncode == 2, (args, out.stderr)
        lines = [x for x in out.stderr.strip().splitlines() if x.strip()]
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in out.stderr, (args, out.stderr)
    for (args, _, words), out in zip(unreachable, runs[len(cases):], strict=True):
        assert out.returncode == 7, (args, out.stderr)
        assert words in out.stderr and "Traceback" not in out.stderr, out.stderr
