"""Fuzzy recall (issue 16) wherever the other queries are exposed: the proto messages and their
conversions, the servicer's scoping, the Python client, and ``episodic recall`` in-process and
through a server.

Fast throughout: a real gRPC server on loopback over the in-memory store, with the hashing
embedder and the scripted language model of tests/fakes.py (the rule parser needs no model).
The store holds two recordings of two memories each, built with tests/store_fixtures.py and
given words to find: "kitchen" (a cat jumps onto the counter, then the oven is talked about)
and "garage" (a red car with flat tyres, then the floor is swept). Keys: one sees "kitchen",
one "garage", one everything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import grpc
import numpy as np
import pytest

from episodic import api_recall, server_auth
from episodic import servicer as servicer_mod
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.query import RecalledStream, RecallRequest, RecallResult, Scope
from episodic.core.records import EmbeddingEntry, FrameObservation, StreamInfo, TranscriptPiece
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.services.local import LocalMemoryService
from tests.fakes import HashEmbedder, ScriptedLLM
from tests.store_fixtures import FEATURE_DIM, make_event, make_memory

KEY_K = "kitchen-key-0123456789abcdef"  # sees "kitchen"
KEY_G = "garage-key-0123456789abcdef0"  # sees "garage"
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
Code = grpc.StatusCode

# stream → (what was seen, what was said) per memory, 10 s apart
SCENES = {
    "kitchen": [
        ("a cat jumps onto the kitchen counter", "the bread needs forty minutes"),
        ("a woman chops onions on a board", "we talk about the oven and the bread"),
    ],
    "garage": [
        ("a red car with flat tyres in the workshop", "the tyres need changing before Friday"),
        ("someone sweeps the workshop floor", "the engine is running loudly"),
    ],
}
CAT_THEN_OVEN = "a cat jumps onto the kitchen counter, then they talk about the oven"

RESULT = RecallResult(
    results=[
        RecalledStream(
            "kitchen",
            3.875,
            0.5,
            7.25,
            0.9,
            {"key_moment": 1.0, "temporal": 0.8},
            "key moment: a cat; after: the oven",
            "kitchen@000000000000",
        ),
        RecalledStream("garage", 14.0, 10.0, 18.0, 0.4, {"key_moment": 0.4}, "", ""),
    ],
    facets={
        "key_moment": "a cat jumps onto the kitchen counter",
        "temporal": "they talk about the oven",
    },
    rejected=["cam2: key_moment held, but not temporal (0.10)"],
    elapsed_s=0.25,
)


def md(key: str | None) -> tuple[tuple[str, str], ...]:
    return () if key is None else (("authorization", f"Bearer {key}"),)


def rpc_error(fn: Any, request: Any, **kwargs: Any) -> grpc.RpcError:
    """Call a unary method and return the error it must raise."""
    with pytest.raises(grpc.RpcError) as info:
        fn(request, **kwargs)
    return info.value


# -- conversions (no server) ---------------------------------------------------------------------
def test_recall_request_round_trips_and_zero_means_the_default():
    req = api_recall.recall_request(
        "a cat, then the oven",
        "a cooking vlog",
        "a cat on the counter",
        "then the oven",
        "music at the end",
        ["kitchen", "garage"],
        1.0,
        9.0,
        3,
        30.0,
    )
    assert req == RecallRequest(
        "a cat, then the oven",
        "a cooking vlog",
        "a cat on the counter",
        "then the oven",
        "music at the end",
        Scope(("kitchen", "garage"), 1.0, 9.0),
        3,
        30.0,
    )
    msg = api_recall.recall_request_to_proto(req)
    assert (msg.key_moment, msg.audio, msg.top_k, msg.t_min, msg.t_max) == (
        "a cat on the counter",
        "music at the end",
        3,
        1.0,
        9.0,
    )
    # the deadline travels as the call's gRPC deadline, not in the message
    assert api_recall.recall_request_from_proto(msg, deadline_s=30.0) == req
    # proto3 cannot tell unset from 0: top_k 0 is 5, unset times are unbounded, facets optional
    bare = api_recall.recall_request_from_proto(
        pb.RecallRequest(key_moment="  a cat  on the counter ")
    )
    assert bare == RecallRequest(key_moment="a cat on the counter", scope=Scope(), top_k=5)
    assert not api_recall.recall_request_to_proto(bare).HasField("t_min")


@pytest.mark.parametrize(
    ("msg", "needle"),
    [
        (pb.RecallRequest(), "the description is empty"),
        (pb.RecallRequest(description=" \n", audio="\t"), "the description is empty"),
        (pb.RecallRequest(description="x" * 2001), "at most 2000"),
        (
            pb.RecallRequest(key_moment="a cat", temporal="y" * 2001),
            "temporal clue is 2001 characters",
        ),
        (pb.RecallRequest(description="a cat", top_k=101), "top_k"),
        (pb.RecallRequest(description="a cat", t_min=9, t_max=1), "reversed"),
        (pb.RecallRequest(description="a cat", stream_ids=['a" or 1==1']), "stream"),
    ],
)
def test_bad_recall_requests_are_input_errors(msg, needle):
    """The kernel's validator (core.validation.recall_request), so a bad request gets the same
    message through the server as from the CLI."""
    with pytest.raises(InputError, match=needle):
        api_recall.recall_request_from_proto(msg)


def test_recall_result_round_trips_and_has_one_json_shape():
    assert api_recall.recall_result_from_proto(api_recall.recall_result_to_proto(RESULT)) == RESULT
    doc = api_recall.recall_result_to_dict(RESULT)
    assert list(doc) == ["results", "facets", "rejected", "elapsed_s"]
    assert doc["results"][0] == {
        "stream_id": "kitchen",
        "t": 3.875,
        "t_start": 0.5,
        "t_end": 7.25,
        "confidence": 0.9,
        "facets": {"key_moment": 1.0, "temporal": 0.8},
        "why": "key moment: a cat; after: the oven",
        "segment_id": "kitchen@000000000000",
    }
    assert list(doc["facets"]) == ["key_moment", "temporal"] and doc["rejected"] == RESULT.rejected
    # the JSON names are the message's field names
    assert set(doc) == {f.name for f in pb.RecallResponse.DESCRIPTOR.fields}
    assert set(doc["results"][0]) == {f.name for f in pb.RecalledStream.DESCRIPTOR.fields}
    # a proto map has no order: facets come back in the canonical one
    shuffled = pb.RecalledStream(
        stream_id="s", facets={"audio": 0.5, "global": 0.25, "key_moment": 1.0}
    )
    back = api_recall.recalled_stream_from_proto(shuffled)
    assert (
        list(back.facets)
        == list(api_recall.recalled_stream_to_dict(back)["facets"])
        == ["global", "key_moment", "audio"]
    )


# -- a real server over the in-memory store with fake models ---------------------------------------
def _vec(embedder: HashEmbedder, text: str) -> np.ndarray:
    return embedder.embed_texts([text])[0]


def _fill(components: Components, embedder: HashEmbedder) -> None:
    """The store_fixtures records, with the words of SCENES in place of their generic ones."""
    store = components.store
    store.ensure_schema(embedder.dim, FEATURE_DIM, models={"embedder": embedder.model_id})
    rng = np.random.default_rng(16)
    memories, events = [], []
    for sid, scenes in SCENES.items():
        for i, (seen, said) in enumerate(scenes):
            m = make_memory(rng, sid, 10.0 * i)
            a, b = m.t_start, m.t_end
            m = replace(
                m,
                vector=_vec(embedder, f"{seen} {said}"),
                embeddings=[
                    EmbeddingEntry(a, b, "visual", seen, _vec(embedder, seen)),
                    EmbeddingEntry(a, b, "speech", said, _vec(embedder, said)),
                ],
                transcript=[TranscriptPiece(a + 0.5, b - 0.5, said)],
                frames=[FrameObservation(a + 0.5, description=seen)],
            )
            e = replace(
                make_event(rng, m),
                summary=f"{seen}; someone says {said}",
                vector=m.vector,
                summary_vector=_vec(embedder, f"{seen} {said}"),
                visual_context=[seen],
                audio_context=[said],
            )
            memories.append(m)
            events.append(e)
        store.upsert_stream(
            StreamInfo(
                sid, f"{sid}.mp4", 10.0 * len(scenes) - 2.75, len(scenes), len(scenes), 1.7e9
            )
        )
    store.upsert_memories(memories)
    store.upsert_events(events)


@dataclass
class Server:
    address: str
    stub: pb_grpc.EpisodicMemoryStub
    components: Components


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    from episodic import server as server_mod

    tmp = tmp_path_factory.mktemp("recall-store")
    keys_file = tmp / "api-keys.toml"
    keys_file.write_text(f'"{KEY_K}" = ["kitchen"]\n"{KEY_G}" = ["garage"]\n"{KEY_ALL}" = ["*"]\n')
    keys_file.chmod(0o600)
    settings = Settings(
        data_dir=tmp / "data",
        store="memory",
        relisten_max_memories=0,
        grpc_host="127.0.0.1",
        grpc_port=0,
        api_keys_file=str(keys_file),
    )
    components = Components(settings)
    embedder = HashEmbedder()
    components.embedder = embedder  # cached properties: the fakes stand in for the models
    components.llm = ScriptedLLM()
    _fill(components, embedder)
    handle = server_mod.create_server(settings, components)
    handle.server.start()
    channel = grpc.insecure_channel(handle.address)
    grpc.channel_ready_future(channel).result(timeout=10)
    try:
        yield Server(handle.address, pb_grpc.EpisodicMemoryStub(channel), components)
    finally:
        channel.close()
        handle.server.stop(0).wait()
        components.close()


def test_recall_over_the_wire_finds_the_recording_and_the_moment(server):
    from episodic.client import Client

    reply = server.stub.Recall(
        pb.RecallRequest(description=CAT_THEN_OVEN), metadata=md(KEY_ALL), timeout=30
    )
    result = api_recall.recall_result_from_proto(reply)
    assert result.results, result
    best = result.results[0]
    assert best.stream_id == "kitchen" and best.segment_id == "kitchen@000000000000"
    assert best.t_start <= best.t <= best.t_end <= 10.0 and 0 < best.confidence <= 1
    assert set(best.facets) == set(result.facets) == {"key_moment", "temporal"}
    assert "cat" in result.facets["key_moment"] and "oven" in result.facets["temporal"]
    assert "cat" in best.why and result.elapsed_s >= 0
    # the Python client: the same typed result
    with Client(server.address, api_key=KEY_ALL, timeout_s=30) as client:
        again = client.recall(RecallRequest(CAT_THEN_OVEN))
    assert replace(again, elapsed_s=0.0) == replace(result, elapsed_s=0.0)


def test_recall_scope_over_the_wire(server):
    """A key scoped to one stream never sees another, named or not; naming one outside the key
    is refused exactly as Search refuses it."""
    stub = server.stub
    for text in (
        "a red car with flat tyres in the workshop",
        CAT_THEN_OVEN,
        "someone sweeps the floor",
    ):
        for key, mine, other in ((KEY_K, "kitchen", "garage"), (KEY_G, "garage", "kitchen")):
            reply = stub.Recall(
                pb.RecallRequest(description=text, top_k=5), metadata=md(key), timeout=30
            )
            assert all(r.stream_id == mine for r in reply.results), (key, text, reply)
            assert not any(line.startswith(other) for line in reply.rejected), (key, text, reply)
    garage = stub.Recall(
        pb.RecallRequest(key_moment="a red car with flat tyres"), metadata=md(KEY_G), timeout=30
    )
    assert [r.stream_id for r in garage.results] == ["garage"]
    denied = rpc_error(
        stub.Recall,
        pb.RecallRequest(description="a red car", stream_ids=["garage"]),
        metadata=md(KEY_K),
        timeout=30,
    )
    search = rpc_error(
        stub.Search,
        pb.SearchRequest(query="a red car", stream_ids=["garage"]),
        metadata=md(KEY_K),
        timeout=30,
    )
    assert denied.code() == search.code() == Code.PERMISSION_DENIED
    assert denied.details() == search.details()
    err = rpc_error(
        stub.Recall, pb.RecallRequest(description="a red car"), metadata=md(None), timeout=30
    )
    assert err.code() == Code.UNAUTHENTICATED


def test_bad_recall_requests_over_the_wire(server):
    for request, needle in [
        (pb.RecallRequest(), "the description is empty: say what you remember"),
        (pb.RecallRequest(description="   ", global_impression=""), "the description is empty"),
        (pb.RecallRequest(description="a cat " * 400), "at most 2000 are allowed"),
        (pb.RecallRequest(audio="music", top_k=-1), "top_k"),
        (pb.RecallRequest(key_moment="a cat", t_min=5, t_max=1), "reversed"),
    ]:
        err = rpc_error(server.stub.Recall, request, metadata=md(KEY_ALL), timeout=30)
        assert err.code() == Code.INVALID_ARGUMENT and needle in err.details(), err.details()


# -- the servicer over a fake recall (what the scope guard does when the service leaks) ------------
class FakeContext:
    """Just enough of grpc.ServicerContext to call a servicer method directly."""

    class Aborted(Exception):
        pass

    def __init__(self, key: str | None = KEY_ALL, remaining: float = 30.0) -> None:
        self.metadata = md(key)
        self.remaining = remaining
        self.code: grpc.StatusCode | None = None
        self.details = ""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def time_remaining(self) -> float:
        return self.remaining

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code, self.details = code, details
        raise self.Aborted()


class FakeRecall:
    """FuzzyRecall.recall that records its requests and answers ``result``."""

    def __init__(self, result: RecallResult) -> None:
        self.result = result
        self.requests: list[RecallRequest] = []

    def recall(self, req: RecallRequest) -> RecallResult:
        self.requests.append(req)
        return replace(
            self.result, results=list(self.result.results), rejected=list(self.result.rejected)
        )


def test_servicer_recall_scopes_the_request_and_never_returns_streams_outside_it(caplog):
    leaky = replace(
        RESULT,
        rejected=[
            "garage: key_moment held, but not temporal (0.10)",
            "kitchen: not verified (recall_budget_s=2 s spent)",
        ],
    )
    keys = server_auth.ApiKeys({KEY_ALL: ["*"], KEY_K: ["kitchen"], KEY_G: ["garage"]})
    servicer = servicer_mod.EpisodicServicer(components=None, keys=keys)
    fake = servicer._recall = FakeRecall(leaky)
    ctx = FakeContext(KEY_K, remaining=12.0)
    reply = servicer.Recall(pb.RecallRequest(description="a cat", top_k=3), ctx)
    (req,) = fake.requests
    assert req.scope.stream_ids == ("kitchen",)  # none named: the key's streams
    assert req.deadline_s is not None and 0 < req.deadline_s <= 12.0 and req.top_k == 3
    assert [r.stream_id for r in reply.results] == ["kitchen"]
    assert list(reply.rejected) == ["kitchen: not verified (recall_budget_s=2 s spent)"]
    assert "outside the scope" in caplog.text
    # refused before the service is asked: out of scope, bad input, no key, no time left
    for request, context, code in [
        (
            pb.RecallRequest(description="a cat", stream_ids=["garage"]),
            FakeContext(KEY_K),
            Code.PERMISSION_DENIED,
        ),
        (pb.RecallRequest(), FakeContext(KEY_K), Code.INVALID_ARGUMENT),
        (pb.RecallRequest(description="a cat"), FakeContext(None), Code.UNAUTHENTICATED),
        (
            pb.RecallRequest(description="a cat"),
            FakeContext(KEY_K, remaining=0.0),
            Code.DEADLINE_EXCEEDED,
        ),
    ]:
        with pytest.raises(FakeContext.Aborted):
            servicer.Recall(request, context)
        assert context.code == code, (request, context.details)
    assert len(fake.requests) == 1


# -- the CLI, in-process and through the server --------------------------------------------------
class _KeptOpen(LocalMemoryService):
    """The in-process service over the module's components, which must outlive one command."""

    def close(self) -> None:
        pass


@pytest.fixture()
def in_process(server, monkeypatch) -> None:
    """``episodic recall`` without --server answers from the fixture's store (a real --data would
    open a store of its own); with --server it is the real client."""
    from episodic import cli_recall

    real = cli_recall._service

    def service(srv: str | None, *args: Any) -> Any:
        return real(srv, *args) if srv else _KeptOpen(server.components)

    monkeypatch.setattr(cli_recall, "_service", service)


def _invoke(*args: str) -> Any:
    from typer.testing import CliRunner

    from episodic import cli

    return CliRunner().invoke(cli.app, ["recall", *args])


def test_cli_recall_in_process_and_through_the_server_agree(server, in_process):
    args = [CAT_THEN_OVEN, "--top-k", "2", "--json"]
    local = _invoke(*args)
    remote = _invoke(*args, "--server", server.address, "--api-key", KEY_ALL)
    assert local.exit_code == 0 and remote.exit_code == 0, (local.output, remote.output)
    here, there = json.loads(local.stdout), json.loads(remote.stdout)
    assert list(here) == list(there) == ["results", "facets", "rejected", "elapsed_s"]
    assert here["results"] and here["results"][0]["stream_id"] == "kitchen"
    assert {k: v for k, v in here.items() if k != "elapsed_s"} == {
        k: v for k, v in there.items() if k != "elapsed_s"
    }
    # facet options alone (no description), and a scoped key through the server
    facets = [
        "--key-moment",
        "a red car with flat tyres",
        "--temporal",
        "then someone sweeps the floor",
        "--json",
    ]
    scoped = _invoke(*facets, "--server", server.address, "--api-key", KEY_K)
    assert scoped.exit_code == 0, scoped.output
    assert all(r["stream_id"] == "kitchen" for r in json.loads(scoped.stdout)["results"])
    whole = json.loads(_invoke(*facets).stdout)
    assert whole["results"][0]["stream_id"] == "garage" and set(whole["facets"]) == {
        "key_moment",
        "temporal",
    }


def test_cli_recall_human_output_and_refusals(server, in_process):
    from episodic.cli_recall import _m_ss

    out = _invoke(CAT_THEN_OVEN)
    assert out.exit_code == 0, out.output
    block = out.stdout
    assert block.startswith("1. kitchen") and "confidence" in block
    best = api_recall.recall_result_from_proto(
        server.stub.Recall(
            pb.RecallRequest(description=CAT_THEN_OVEN), metadata=md(KEY_ALL), timeout=30
        )
    ).results[0]
    assert f"at {_m_ss(best.t)} ({best.t:.1f} s)" in block
    assert (_m_ss(3.875), _m_ss(65.4), _m_ss(3725.0)) == ("0:04", "1:05", "1:02:05")
    assert "facets: key moment" in block and "temporal" in block and "why: key moment" in block
    assert (
        "searched for:" in out.stderr
        and "key moment: a cat jumps onto the kitchen counter" in out.stderr
    )
    # nothing found is said plainly and is not an error (as for `episodic search`)
    empty = _invoke("a cat", "--stream-id", "attic")
    assert empty.exit_code == 0 and empty.stdout == "" and "no recording matches" in empty.stderr
    empty_json = _invoke("a cat", "--stream-id", "attic", "--json")
    assert json.loads(empty_json.stdout)["results"] == []
    # refused before anything is asked, with the validator's message
    for args, needle in [
        ([], "the description is empty"),
        (["  ", "--audio", " "], "the description is empty"),
        (["a cat", "--t-min", "9", "--t-max", "1"], "reversed"),
        (["x" * 2001], "at most 2000"),
        (["a cat", "--top-k", "0"], None),  # 0 is the default, as in the proto
    ]:
        res = _invoke(*args)
        if needle is None:
            assert res.exit_code == 0, res.output
        else:
            assert isinstance(res.exception, InputError) and needle in str(res.exception), (
                res.output
            )


def test_cli_recall_help_explains_the_four_facets():
    out = _invoke("--help")
    assert out.exit_code == 0
    text = " ".join(out.stdout.split())
    for flag in ("--global", "--key-moment", "--temporal", "--audio"):
        assert flag in text
    assert "a cat jumps onto the kitchen counter" in text and "someone says forty minutes" in text
