"""Standing queries (issue 17, item 2): each kind fires once, at the right memory, with its
citations; nothing fires again after a restart (a new evaluator on the same watch store);
webhooks are signed and retried against a real HTTP receiver on loopback; the Watch RPCs
keep to the caller's API key over a real gRPC server.

Fast: the hashing embedder of tests/fakes.py, memories built in code, SQLite on disk.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest

from episodic import api_watch
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    normalise,
)
from episodic.core.watches import Watch, parse_duration, validate_watch
from episodic.memory.watch_store import SqliteWatchStore
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.services.alert_delivery import SIGNATURE_HEADER, TIMESTAMP_HEADER, WebhookSender, sign
from episodic.services.watching import WatchEvaluator
from tests.fakes import HashEmbedder

EMB = HashEmbedder()

# one yard camera, 8 s memories: (what was said, what a sign read)
YARD = [
    ("good morning, the gate is open", "NORTH GATE"),
    ("two boats left the harbour at noon", "HARBOUR"),
    ("the delivery van is parked by the gate", "DELIVERIES"),
    ("nothing much happening here", ""),
    ("the delivery van came back again", "DELIVERIES"),
    ("quiet afternoon in the yard", ""),
]


def memory(stream: str, i: int, said: str, sign_text: str) -> tuple[ShortTermMemory, ThetaEvent]:
    t0 = 8.0 * i
    mid = memory_id(stream, t0)
    vec = normalise(EMB.embed_texts([said])[0])
    m = ShortTermMemory(
        id=mid, stream_id=stream, t_start=t0, t_end=t0 + 8.0, vector=vec,
        transcript=[TranscriptPiece(t0 + 1.0, t0 + 4.0, said)],
        frames=[FrameObservation(t0 + 2.0, [], ["grey"], sign_text, "a yard")] if sign_text else [],
        snippets=[SnippetRef(f"file:///snips/{stream}/{i}.mp4", t0, t0 + 8.0)],
        metadata={"ingested_at": 1.7e9 + t0},
    )
    e = ThetaEvent(id=event_id(stream, t0), stream_id=stream, memory_id=mid, t_start=t0, t_end=t0 + 8.0,
                   summary=said, summary_vector=vec, vector=vec)
    return m, e


def feed(ev: WatchEvaluator, stream: str = "yard", rows: list[tuple[str, str]] = YARD) -> list[Any]:
    out = []
    for i, (said, sign_text) in enumerate(rows):
        m, e = memory(stream, i, said, sign_text)
        out += ev.on_memory(m, e)
    return out


@pytest.fixture()
def store(tmp_path) -> Iterator[SqliteWatchStore]:
    s = SqliteWatchStore(tmp_path / "watches.sqlite3")
    yield s
    s.close()


def add(store: SqliteWatchStore, query: str, **kw: Any) -> Watch:
    w = validate_watch(Watch(id=f"w{len(store.list_watches())}", query=query, key_id="k", **kw))
    store.add_watch(w)
    return w


def evaluator(store: SqliteWatchStore) -> WatchEvaluator:
    return WatchEvaluator(store, EMB, clock=lambda: 1.7e9 + 100)


def test_each_kind_fires_once_at_the_right_memory_with_citations(store):
    match = add(store, "boats in the harbour")
    first = add(store, "the delivery van", period="ever")
    again = add(store, "the delivery van", kind="again", cooldown_s=5)
    absent = add(store, "a fire alarm", kind="absent", within_s="20s")
    order = add(store, "boats in the harbour", kind="order", then="the delivery van")
    never = add(store, "a dog barking loudly")
    other_stream = add(store, "boats in the harbour", stream_ids=["garage"])
    alerts = feed(evaluator(store))
    by_watch: dict[str, list[Any]] = {}
    for a in alerts:
        by_watch.setdefault(a.watch_id, []).append(a)
    assert never.id not in by_watch and other_stream.id not in by_watch
    (m,) = by_watch[match.id]
    assert 8.0 <= m.t_start < m.t_end <= 16.0
    assert (m.event_ids, m.segment_ids) == (["yard@000000008000.e"], ["yard@000000008000"])
    assert m.snippet_uris == ["file:///snips/yard/1.mp4"] and 0 < m.confidence <= 1 and "harbour" in m.message
    (f,) = by_watch[first.id]
    assert f.segment_ids == ["yard@000000016000"]  # the first van, not the second
    (g,) = by_watch[again.id]
    assert g.segment_ids == ["yard@000000032000"] and g.count == 2 and "2nd time" in g.message
    (q,) = by_watch[absent.id]
    assert q.t_start == 0.0 and q.t_end == 24.0  # the first memory ending 20 s after the start
    (o,) = by_watch[order.id]
    assert o.event_ids == ["yard@000000008000.e", "yard@000000016000.e"] and 8.0 <= o.t_start < 16.0
    # every alert is in the log once, in order
    assert [a.id for a in store.alerts_since(0)] == [a.id for a in alerts]


def test_nothing_fires_again_after_a_restart_or_a_rewrite(store):
    add(store, "the delivery van")
    add(store, "a fire alarm", kind="absent", within_s="20s")
    first = feed(evaluator(store))
    assert len(first) == 2  # the van once (the second sighting is within the 60 s cooldown)
    # a provisional memory rewritten as final, and a worker restarted from a checkpoint that
    # stores the same memories again: a new evaluator on the same store raises nothing
    assert feed(evaluator(store)) == []
    assert len(store.alerts_since(0)) == 2


def test_match_cooldown_counts_a_long_sighting_once(store):
    w = add(store, "the delivery van", cooldown_s="60s")
    rows = [("the delivery van is here", ""), ("the delivery van is unloading", ""), ("the delivery van leaves", "")]
    alerts = feed(evaluator(store), rows=rows)
    assert [a.watch_id for a in alerts] == [w.id]


def test_absent_by_a_time_of_day_fires_once_per_day(store, monkeypatch):
    import datetime as dt

    w = add(store, "the shop opens", kind="absent", by_time="09:00", stream_ids=["shop"])
    w2 = add(store, "the delivery van", kind="absent", by_time="09:00", stream_ids=["yard"])
    # tomorrow 08:00: a deadline before the watch was made (now) never fires, whatever today is
    day = (dt.datetime.now() + dt.timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
    ev = evaluator(store)
    ev.clock = lambda: day.timestamp()
    # the yard saw the van at 08:00; the shop saw nothing
    m, e = memory("yard", 0, "the delivery van arrives", "")
    m.metadata["ingested_at"] = day.timestamp()
    store.put_state(w.id, "shop", {})
    ev.on_memory(m, e)
    assert ev.tick(day.timestamp()) == []  # not 09:00 yet
    late = day.replace(hour=9, minute=5).timestamp()
    alerts = ev.tick(late)
    assert [(a.watch_id, a.stream_id) for a in alerts] == [(w.id, "shop")]
    assert w2.id not in {a.watch_id for a in alerts}
    assert ev.tick(late + 60) == [] and evaluator(store).tick(late + 120) == []


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"query": ""}, "query is empty"),
        ({"query": "x" * 100_000}, "at most 500"),
        ({"query": "a van", "kind": "sometimes"}, "unknown watch kind"),
        ({"query": "a van", "kind": "absent"}, "needs --within"),
        ({"query": "a van", "kind": "again", "within_s": "400d"}, "between 1 s and 366 days"),
        ({"query": "a van", "within_s": "soon"}, "must be a duration"),
        ({"query": "a van", "webhook_url": "ftp://example.org/x"}, "http:// or https://"),
        ({"query": "a van", "webhook_url": "http://"}, "http:// or https://"),
        ({"query": "a van", "kind": "order"}, "then (the query"),
        ({"query": "a van", "by_time": "25:00", "kind": "absent"}, "HH:MM"),
        ({"query": "a van", "stream_ids": ["../etc"]}, "invalid stream id"),
    ],
)
def test_bad_watches_are_refused_with_a_clear_message(kw, needle):
    from episodic.core.records import validate_stream_id

    with pytest.raises(InputError, match=None) as info:
        validate_watch(Watch(id="w", **kw), check_stream=validate_stream_id)
    assert needle in str(info.value)
    assert len(str(info.value)) < 300  # never echoes a 100 kB value


def test_durations():
    assert [parse_duration(x) for x in ("90", "90s", "10m", "1.5h", "7d", "1w")] == [90, 90, 600, 5400, 604800, 604800]


# -- webhooks against a real receiver -------------------------------------------------------------
class _Receiver(http.server.BaseHTTPRequestHandler):
    fail_first = 1
    got: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).got.append((dict(self.headers), body))
        status = 500 if len(type(self).got) <= type(self).fail_first else 204
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_webhooks_are_signed_retried_with_backoff_and_delivered_once(store):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _Receiver.got = []
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        w = add(store, "boats in the harbour", webhook_url=url)
        w.webhook_secret = "s3cret"
        store.remove_watch(w.id)
        store.add_watch(w)
        alerts = feed(evaluator(store))
        assert len(alerts) == 1
        sender = WebhookSender(store, backoff_base_s=0.05, timeout_s=2)
        assert sender.deliver_due() == 0  # HTTP 500: retried later
        assert store.webhook_state(alerts[0].id) == ("pending", 1)
        assert sender.deliver_due() == 0  # not due yet (backoff)
        time.sleep(0.1)
        assert sender.deliver_due() == 1
        assert store.webhook_state(alerts[0].id) == ("delivered", 2)
        assert sender.deliver_due() == 0 and len(_Receiver.got) == 2
        headers, body = _Receiver.got[-1]
        stamp = headers[TIMESTAMP_HEADER]
        expected = "sha256=" + hmac.new(b"s3cret", stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        assert headers[SIGNATURE_HEADER] == expected == sign("s3cret", stamp, body)
        assert json.loads(body)["id"] == alerts[0].id and json.loads(body)["segment_ids"] == ["yard@000000008000"]
    finally:
        server.shutdown()


def test_a_webhook_that_points_nowhere_gives_up_and_never_blocks(store):
    w = add(store, "boats in the harbour", webhook_url="http://127.0.0.1:9/nothing-listens")
    started = time.perf_counter()
    alerts = feed(evaluator(store))  # evaluation only writes the alert
    assert time.perf_counter() - started < 5 and len(alerts) == 1 and alerts[0].watch_id == w.id
    sender = WebhookSender(store, backoff_base_s=0.0, max_attempts=2, timeout_s=1)
    sender.deliver_due()
    sender.deliver_due()
    assert store.webhook_state(alerts[0].id) == ("failed", 2)


# -- the Watch RPCs over a real server ------------------------------------------------------------
KEY_Y = "yard-key-0123456789abcdef01"
KEY_ALL = "admin-key-0123456789abcdef01"


@pytest.fixture()
def server(tmp_path) -> Iterator[tuple[pb_grpc.EpisodicMemoryStub, Components]]:
    from episodic import server as server_mod

    keys_file = tmp_path / "api-keys.toml"
    keys_file.write_text(f'"{KEY_Y}" = ["yard"]\n"{KEY_ALL}" = ["*"]\n')
    keys_file.chmod(0o600)
    settings = Settings(data_dir=tmp_path / "data", store="memory", grpc_host="127.0.0.1", grpc_port=0,
                        api_keys_file=str(keys_file))
    components = Components(settings)
    components.embedder = EMB
    handle = server_mod.create_server(settings, components)
    handle.server.start()
    channel = grpc.insecure_channel(handle.address)
    grpc.channel_ready_future(channel).result(timeout=10)
    try:
        yield pb_grpc.EpisodicMemoryStub(channel), components
    finally:
        channel.close()
        handle.server.stop(0).wait()
        components.close()


def md(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


def test_watch_rpcs_keep_to_the_caller_s_key(server):
    stub, components = server
    added = stub.AddWatch(pb.AddWatchRequest(watch=pb.Watch(query="boats in the harbour", webhook_url="http://127.0.0.1:9/x")),
                          metadata=md(KEY_Y), timeout=10)
    assert added.watch.stream_ids == ["yard"] and added.watch.kind == "match" and len(added.webhook_secret) > 20
    with pytest.raises(grpc.RpcError) as info:
        stub.AddWatch(pb.AddWatchRequest(watch=pb.Watch(query="a van", stream_ids=["garage"])), metadata=md(KEY_Y), timeout=10)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as info:
        stub.AddWatch(pb.AddWatchRequest(watch=pb.Watch(query="q" * 20_000)), metadata=md(KEY_Y), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and len(info.value.details()) < 300
    admin = stub.AddWatch(pb.AddWatchRequest(watch=pb.Watch(query="a fire alarm", kind="absent", within_s=30)),
                          metadata=md(KEY_ALL), timeout=10)
    mine = stub.ListWatches(pb.ListWatchesRequest(), metadata=md(KEY_Y), timeout=10)
    assert [w.id for w in mine.watches] == [added.watch.id]
    assert {w.id for w in stub.ListWatches(pb.ListWatchesRequest(), metadata=md(KEY_ALL), timeout=10).watches} == {
        added.watch.id, admin.watch.id}
    # another key's watch and a missing one: the same NOT_FOUND
    errors = []
    for wid in (admin.watch.id, "w-000000000000"):
        with pytest.raises(grpc.RpcError) as info:
            stub.RemoveWatch(pb.RemoveWatchRequest(id=wid), metadata=md(KEY_Y), timeout=10)
        errors.append((info.value.code(), info.value.details()))
    assert errors[0] == errors[1] == (grpc.StatusCode.NOT_FOUND, "no such watch for this API key")

    # memories form (as a worker on this data directory would): alerts stream to their owner
    evaluator = components.watcher()
    assert evaluator is not None
    feed(evaluator)
    feed(evaluator, stream="garage")
    got = list(stub.WatchAlerts(pb.WatchAlertsRequest(), metadata=md(KEY_Y), timeout=10))
    assert [(a.watch_id, a.stream_id, a.segment_ids[0]) for a in got] == [(added.watch.id, "yard", "yard@000000008000")]
    everything = list(stub.WatchAlerts(pb.WatchAlertsRequest(), metadata=md(KEY_ALL), timeout=10))
    assert len(everything) > len(got) and {a.stream_id for a in everything} == {"yard", "garage"}
    # follow: an alert raised while the call is open arrives on it
    call = stub.WatchAlerts(pb.WatchAlertsRequest(after_seq=max(a.seq for a in everything), follow=True),
                            metadata=md(KEY_Y), timeout=20)
    m, e = memory("yard", 40, "boats in the harbour again today", "")
    threading.Timer(0.5, lambda: evaluator.on_memory(m, e)).start()
    first = next(iter(call))
    call.cancel()
    assert first.segment_ids == [m.id] and first.watch_id == added.watch.id
    assert api_watch.alert_from_proto(first).to_dict()["segment_ids"] == [m.id]
    stub.RemoveWatch(pb.RemoveWatchRequest(id=added.watch.id), metadata=md(KEY_Y), timeout=10)
    assert stub.ListWatches(pb.ListWatchesRequest(), metadata=md(KEY_Y), timeout=10).watches == []
    assert np.isfinite(first.confidence)


def test_forgetting_a_stream_or_a_stretch_forgets_its_alerts(store):
    add(store, "the delivery van", cooldown_s="1s")
    add(store, "a fire alarm", kind="absent", within_s="20s")
    feed(evaluator(store))
    feed(evaluator(store), stream="garage")
    yard = [a for a in store.alerts_since(0) if a.stream_id == "yard"]
    assert len(yard) == 3  # the van at 16 s and 32 s, the quiet stretch 0-24 s
    assert store.forget_alerts("yard", 30.0, 40.0) == 1  # the van at 32 s
    assert {(a.t_start < 30) for a in store.alerts_since(0) if a.stream_id == "yard"} == {True}
    assert store.forget_alerts("yard", 30.0, 40.0) == 0  # idempotent
    assert store.forget_alerts("yard") == 2 and store.get_state("w0", "yard") == {}
    assert {a.stream_id for a in store.alerts_since(0)} == {"garage"}  # other streams untouched
    assert store.get_state("w0", "garage") != {}
