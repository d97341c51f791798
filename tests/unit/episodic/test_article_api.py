"""The Article API surface: the proto ⇄ record conversions, the streaming servicer method, the
``episodic article`` command, and the whole path against a real server on loopback.

The conversion, servicer and CLI tests use hand-built Articles and a stand-in ArticleService,
so they are fast and pin the contract (field for field, status codes, cancellation) whatever
the pipeline writes. The end-to-end tests reuse tests/unit/episodic/test_server.py's store (one generated
recording ingested as streams "kitchen" and "station") and server, and run the real MARQUIS
pipeline (services.articles): the tests that check the server's article share one Article
call, and the CLI tests compare their output with it.
"""

# ruff: noqa: F811 - the store and server fixtures come from tests.test_server by import, and
# pytest hands them to the tests as parameters of the same names

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from episodic import api_article, servicer_articles
from episodic import servicer as servicer_mod
from episodic.core.article import (
    Article,
    ArticleProgress,
    ArticleRequest,
    ArticleStyle,
    Citation,
    Claim,
    Fusion,
    Grounding,
    Section,
    Sentence,
    Step,
)
from episodic.core.errors import InputError
from episodic.core.query import Scope
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from tests.cli_runner import run_cli
from tests.unit.episodic.test_server import (  # noqa: F401 - store and server are fixtures
    KEY_A,
    KEY_ALL,
    SEG_K0,
    SEG_K1,
    SEG_S0,
    FakeContext,
    _servicer,
    _serving,
    md,
    rpc_error,
    server,
    store,
)

slow = pytest.mark.slow
Code = grpc.StatusCode


def _article(style: ArticleStyle = ArticleStyle.GINGER, stream: str = "kitchen") -> Article:
    """An article with every field set to something that would show a dropped field."""
    seg0, seg1 = f"{stream}@000000000000", f"{stream}@000000008000"
    return Article(
        request="What happened in the kitchen?",
        style=style,
        title="What happened in the kitchen",
        sections=[
            Section("", [Sentence("Tom put three green apples in a bowl.", [1]), Sentence("Nothing else.", [])]),
            Section("The train", [Sentence("It leaves from platform seven.", [2, 1])]),
        ],
        citations=[
            Citation(1, stream, seg0, 0.0, 8.0, "file:///snips/a.mp4"),
            Citation(2, stream, seg1, 8.0, 16.0, ""),
        ],
        claims=[
            Claim("c1", "Tom put apples in the bowl", "speech", stream, seg0, 1.0, 4.5, "claim",
                  "what did Tom do", 0.8125, 0.9375, "file:///snips/a.mp4"),
            Claim("n2", "A sign reads PLATFORM 7", "ocr", stream, seg1, 8.0, 16.0, "note", "", 0.25, 0.5),
        ],
        dropped_claims=3,
        sub_queries=["what did Tom do", "where does the train leave from"],
        steps=[Step("Tom fills the bowl.", [Grounding(stream, 1.0, 4.5)]), Step("No grounding.", [])],
        thin_evidence=True,
        timings_ms={"decompose": 1.25, "write": 30.5},
    )


# -- conversions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("style", list(ArticleStyle))
def test_article_round_trips_through_proto(style):
    article = _article(style)
    msg = api_article.article_to_proto(article)
    assert msg.markdown == article.markdown()
    back = api_article.article_from_proto(pb.ArticleResult.FromString(msg.SerializeToString()))
    assert back == article
    assert back.style is style


def test_empty_article_round_trips():
    article = Article(request="r", style=ArticleStyle.BULLET, title="R")
    assert api_article.article_from_proto(api_article.article_to_proto(article)) == article


def test_article_dict_has_the_message_fields():
    """The --json document speaks the proto's field names, nested too, and is plain JSON."""
    article = _article()
    doc = api_article.article_to_dict(article)

    def names(descriptor: Any) -> set[str]:
        return {f.name for f in descriptor.fields}

    assert set(doc) == names(pb.ArticleResult.DESCRIPTOR)
    assert set(doc["sections"][0]) == names(pb.Section.DESCRIPTOR)
    assert set(doc["sections"][0]["sentences"][0]) == names(pb.Sentence.DESCRIPTOR)
    assert set(doc["citations"][0]) == names(pb.Citation.DESCRIPTOR)
    assert set(doc["claims"][0]) == names(pb.Claim.DESCRIPTOR)
    assert set(doc["steps"][0]) == names(pb.Step.DESCRIPTOR)
    assert set(doc["steps"][0]["groundings"][0]) == names(pb.Grounding.DESCRIPTOR)
    assert doc["style"] == "ginger" and doc["markdown"] == article.markdown()
    assert doc["sections"][1]["sentences"][0]["citations"] == [2, 1]
    assert doc["dropped_claims"] == 3 and doc["thin_evidence"] is True
    assert json.loads(json.dumps(doc)) == doc


def test_progress_round_trips_and_clamps():
    p = ArticleProgress("retrieve", 2, 5, "where does the train leave from")
    assert api_article.article_progress_from_proto(api_article.article_progress_to_proto(p)) == p
    odd = api_article.article_progress_to_proto(ArticleProgress("extract", -1, -3))
    assert (odd.done, odd.total, odd.message) == (0, 0, "")


@pytest.mark.parametrize("style", list(ArticleStyle))
@pytest.mark.parametrize("fusion", list(Fusion))
def test_article_request_round_trips(style, fusion):
    req = api_article.article_request("What happened?", style.value, ["kitchen", "station"], 1.5, None,
                                      fusion.value, 4, 30.0)
    assert req.scope == Scope(("kitchen", "station"), 1.5, None)
    assert (req.style, req.fusion, req.max_sub_queries) == (style, fusion, 4)
    msg = pb.ArticleRequest.FromString(api_article.article_request_to_proto(req).SerializeToString())
    assert msg.HasField("t_min") and not msg.HasField("t_max")
    assert api_article.article_request_from_proto(msg, 30.0) == req


def test_article_request_defaults():
    """Unset enums and max_sub_queries 0 are the server's defaults: GINGER, RRF, configured."""
    req = api_article.article_request_from_proto(pb.ArticleRequest(request="What happened?"))
    assert req == ArticleRequest("What happened?", ArticleStyle.GINGER, Scope(), None, None, None)
    assert api_article.article_request("x", fusion="weighted_rrf").fusion is Fusion.WEIGHTED_RRF
    assert api_article.article_request("x", style="CAG").style is ArticleStyle.CAG
    msg = api_article.article_request_to_proto(api_article.article_request("x"))
    assert msg.max_sub_queries == 0 and not msg.stream_ids


BAD_REQUESTS = [
    ("empty", dict(request=""), "request is empty"),
    ("blank", dict(request=" \n\t"), "request is empty"),
    ("long", dict(request="why " * 1001), "characters"),
    ("reversed-range", dict(t_min=10.0, t_max=2.0), "t_min (10) is after t_max (2)"),
    ("nan-time", dict(t_min=float("nan")), "t_min"),
    ("injected-stream", dict(stream_ids=['cam" or 1==1']), "invalid stream id"),
    ("bracket-stream", dict(stream_ids=["[kitchen]"]), "invalid stream id"),
    ("unknown-style", dict(style="fancy"), "style must be one of bullet, cag, ginger"),
    ("unknown-fusion", dict(fusion="median"), "fusion must be one of"),
    ("negative-sub-queries", dict(max_sub_queries=-1), "max_sub_queries"),
    ("float-sub-queries", dict(max_sub_queries=2.5), "max_sub_queries"),
]


@pytest.mark.parametrize(("fields", "needle"), [c[1:] for c in BAD_REQUESTS], ids=[c[0] for c in BAD_REQUESTS])
def test_bad_article_requests_are_input_errors(fields, needle):
    args = {"request": "What happened?", **fields}
    with pytest.raises(InputError) as info:
        api_article.article_request(**args)
    assert needle in str(info.value)


def test_unknown_enum_numbers_are_input_errors():
    """proto3 enums are open: a number from a newer client is refused, not defaulted."""
    with pytest.raises(InputError, match="style 99"):
        api_article.article_request_from_proto(pb.ArticleRequest(request="x", style=99))
    with pytest.raises(InputError, match="fusion 42"):
        api_article.article_request_from_proto(pb.ArticleRequest(request="x", fusion=42))
    with pytest.raises(ValueError, match="unknown article style"):
        api_article.article_from_proto(pb.ArticleResult(title="t"))  # UNSPECIFIED is never sent


def test_the_service_limits_apply_before_sending():
    """max_sub_queries' upper bound is the kernel validator's; the CLI checks it before a call."""
    from episodic.core.validation import MAX_SUB_QUERIES

    assert api_article.article_request("x", max_sub_queries=MAX_SUB_QUERIES).max_sub_queries == MAX_SUB_QUERIES
    with pytest.raises(InputError, match="max_sub_queries"):
        api_article.article_request("x", max_sub_queries=MAX_SUB_QUERIES + 1)


# -- the servicer, with a stand-in ArticleService -------------------------------------------------------
class FakeArticles:
    """Reports three stages, then returns ``article`` (or raises ``fail``)."""

    def __init__(self, article: Article | None = None, fail: BaseException | None = None) -> None:
        self.article = article or _article()
        self.fail = fail
        self.requests: list[ArticleRequest] = []

    def write(self, req: ArticleRequest, progress: Any = None) -> Article:
        self.requests.append(req)
        for i, stage in enumerate(("decompose", "retrieve", "write")):
            progress(ArticleProgress(stage, i + 1, 3, stage))
        if self.fail is not None:
            raise self.fail
        return self.article


def _article_servicer(articles: Any) -> servicer_mod.EpisodicServicer:
    servicer = _servicer(None)
    servicer._articles = articles
    return servicer


def _free(servicer: servicer_mod.EpisodicServicer) -> bool:
    """The model semaphore is free again (waiting a moment for the worker to let go)."""
    if servicer._asks.acquire(timeout=5):
        servicer._asks.release()
        return True
    return False


def test_servicer_streams_progress_then_the_article():
    articles = FakeArticles()
    servicer = _article_servicer(articles)
    request = pb.ArticleRequest(request="What happened?", style=pb.ARTICLE_STYLE_BULLET, max_sub_queries=3)
    updates = list(servicer.Article(request, FakeContext(key=KEY_A, remaining=20.0)))
    kinds = [u.WhichOneof("update") for u in updates]
    assert kinds == ["progress"] * 3 + ["article"]
    assert [u.progress.stage for u in updates[:3]] == ["decompose", "retrieve", "write"]
    assert api_article.article_from_proto(updates[-1].article) == articles.article
    (req,) = articles.requests
    assert req.scope.stream_ids == ("kitchen",)  # no streams named: everything the key may see
    assert req.style is ArticleStyle.BULLET and req.max_sub_queries == 3
    assert req.deadline_s is not None and 0 < req.deadline_s <= 20.0
    assert _free(servicer)


def test_servicer_refuses_streams_outside_the_key():
    articles = FakeArticles()
    servicer = _article_servicer(articles)
    ctx = FakeContext(key=KEY_A)
    with pytest.raises(FakeContext.Aborted):
        list(servicer.Article(pb.ArticleRequest(request="What?", stream_ids=["station"]), ctx))
    assert ctx.code == Code.PERMISSION_DENIED and "station" in ctx.details
    assert articles.requests == [] and _free(servicer)


def test_servicer_refuses_articles_citing_other_streams():
    servicer = _article_servicer(FakeArticles(_article(stream="station")))
    ctx = FakeContext(key=KEY_A)
    with pytest.raises(FakeContext.Aborted):
        list(servicer.Article(pb.ArticleRequest(request="What happened?"), ctx))
    assert ctx.code == Code.INTERNAL and "station" not in ctx.details
    leaky = _article()
    leaky.steps = [Step("elsewhere", [Grounding("station", 0.0, 8.0)])]  # a grounding leaks too
    servicer = _article_servicer(FakeArticles(leaky))
    ctx = FakeContext(key=KEY_A)
    with pytest.raises(FakeContext.Aborted):
        list(servicer.Article(pb.ArticleRequest(request="What happened?"), ctx))
    assert ctx.code == Code.INTERNAL and _free(servicer)


@pytest.mark.parametrize(
    ("fail", "code"),
    [
        (InputError("request is empty"), Code.INVALID_ARGUMENT),
        (RuntimeError("bug at /secret/path"), Code.INTERNAL),
    ],
)
def test_servicer_maps_failures_after_progress(fail, code):
    servicer = _article_servicer(FakeArticles(fail=fail))
    ctx = FakeContext()
    got: list[pb.ArticleUpdate] = []
    with pytest.raises(FakeContext.Aborted):
        for update in servicer.Article(pb.ArticleRequest(request="What happened?"), ctx):
            got.append(update)
    assert ctx.code == code and "/secret" not in ctx.details
    assert [u.WhichOneof("update") for u in got] == ["progress"] * 3
    assert _free(servicer)


def test_servicer_deadline_exceeded_from_the_service():
    from episodic.core.errors import DeadlineExceeded

    servicer = _article_servicer(FakeArticles(fail=DeadlineExceeded("too slow")))
    ctx = FakeContext(remaining=5.0)
    with pytest.raises(FakeContext.Aborted):
        list(servicer.Article(pb.ArticleRequest(request="What happened?"), ctx))
    assert ctx.code == Code.DEADLINE_EXCEEDED
    ctx = FakeContext(remaining=0.0)  # no time left: refused before any work
    with pytest.raises(FakeContext.Aborted):
        list(servicer.Article(pb.ArticleRequest(request="What happened?"), ctx))
    assert ctx.code == Code.DEADLINE_EXCEEDED


class CancellableArticles:
    """Reports once, then waits for ``go`` and reports again: that report must raise once
    the call is gone, and the model must be free afterwards."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.stopped: BaseException | None = None
        self.finished = threading.Event()

    def write(self, req: ArticleRequest, progress: Any = None) -> Article:
        try:
            progress(ArticleProgress("decompose", 1, 1))
            self.go.wait(10)
            progress(ArticleProgress("retrieve", 1, 1))
            return _article()
        except BaseException as exc:
            self.stopped = exc
            raise
        finally:
            self.finished.set()


class CancelledContext(FakeContext):
    def __init__(self) -> None:
        super().__init__()
        self.active = True

    def is_active(self) -> bool:
        return self.active


@pytest.mark.parametrize("how", ["client-cancels", "consumer-stops"])
def test_cancelling_the_call_stops_the_work(how):
    work = CancellableArticles()
    servicer = _article_servicer(work)
    ctx = CancelledContext()
    stream = servicer.Article(pb.ArticleRequest(request="What happened?"), ctx)
    assert next(stream).progress.stage == "decompose"
    if how == "client-cancels":  # the handler notices while waiting for the next report
        ctx.active = False
        assert list(stream) == []
    else:  # gRPC stops iterating and closes the generator
        stream.close()
    work.go.set()
    assert work.finished.wait(10)
    assert isinstance(work.stopped, servicer_articles.ArticleCancelled)
    assert _free(servicer)


# -- the CLI, with a stand-in server --------------------------------------------------------------------
def _fake_stream(article: Article, sent: list[Any]) -> Any:
    def stream(client: Any, method: str, request: Any, *rest: Any) -> Iterator[pb.ArticleUpdate]:
        sent.append((client.server, method, request))
        yield pb.ArticleUpdate(progress=api_article.article_progress_to_proto(ArticleProgress("retrieve", 1, 2)))
        yield pb.ArticleUpdate(article=api_article.article_to_proto(article))

    return stream


def test_cli_article_through_a_server(monkeypatch):
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.client import Client

    article = _article()
    sent: list[Any] = []
    monkeypatch.setattr(Client, "_stream", _fake_stream(article, sent))
    args = ["article", "What happened?", "--style", "cag", "--fusion", "wrrf", "--stream-id", "kitchen",
            "--t-max", "12", "--max-sub-queries", "3", "--server", "host:1"]
    out = CliRunner().invoke(cli.app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == api_article.article_to_dict(article)
    (server_addr, method, request) = sent[0]
    assert (server_addr, method) == ("host:1", "Article")
    assert (request.style, request.fusion) == (pb.ARTICLE_STYLE_CAG, pb.FUSION_METHOD_WEIGHTED_RRF)
    assert list(request.stream_ids) == ["kitchen"] and request.t_max == 12.0 and not request.HasField("t_min")
    assert request.max_sub_queries == 3
    out = CliRunner().invoke(cli.app, [*args, "--markdown"])
    assert out.exit_code == 0, out.output
    assert out.stdout == article.markdown()
    out = CliRunner().invoke(cli.app, args)  # not a terminal: the Markdown, plainly
    assert out.exit_code == 0 and out.stdout == article.markdown()


def test_cli_article_stream_without_an_article_is_an_error(monkeypatch):
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.client import Client
    from episodic.core.errors import EpisodicError

    def no_article(*args: Any) -> Iterator[pb.ArticleUpdate]:
        yield pb.ArticleUpdate(progress=pb.ArticleProgress(stage="decompose", done=1, total=1))

    monkeypatch.setattr(Client, "_stream", no_article)
    out = CliRunner().invoke(cli.app, ["article", "What happened?", "--server", "host:1", "--json"])
    assert isinstance(out.exception, EpisodicError) and "without an article" in str(out.exception)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["article", ""], "request is empty"),
        (["article", "x", "--style", "fancy"], "style must be one of"),
        (["article", "x", "--stream-id", 'cam" or 1==1'], "invalid stream id"),
        (["article", "x", "--t-min", "5", "--t-max", "1", "--server", "127.0.0.1:9"], "after t_max"),
        (["article", "x", "--json", "--markdown"], "give one of them"),
    ],
    ids=["empty", "style", "stream", "range", "two-outputs"],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, args, needle):
    proc = run_cli(*args, data=tmp_path, check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert needle in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "Traceback" not in proc.stderr


# -- end to end: a real server, the real pipeline --------------------------------------------------------
REQUEST = "Write a report on what happened: the apples and the train to Oxford."


@pytest.fixture(scope="module")
def article_updates(server) -> list[pb.ArticleUpdate]:
    """The one real Article call the end-to-end tests share (kitchen's key, all its streams)."""
    return list(server.stub.Article(pb.ArticleRequest(request=REQUEST), metadata=md(KEY_A), timeout=300))


@slow
def test_article_streams_progress_then_one_article(article_updates):
    kinds = [u.WhichOneof("update") for u in article_updates]
    assert kinds[0] == "progress" and kinds.count("article") == 1 and kinds[-1] == "article", kinds
    stages = [u.progress.stage for u in article_updates[:-1]]
    assert stages[0] == "decompose" and "write" in stages
    result = article_updates[-1].article
    assert result.style == pb.ARTICLE_STYLE_GINGER and result.request == REQUEST
    assert result.title and result.sub_queries and result.sections
    article = api_article.article_from_proto(result)
    assert result.markdown == article.markdown()


@slow
def test_article_citations_resolve_through_get_segment(server, article_updates):
    result = article_updates[-1].article
    assert result.citations, result.markdown
    numbers = {c.n for c in result.citations}
    for section in result.sections:
        for sentence in section.sentences:
            assert set(sentence.citations) <= numbers
    for c in result.citations:
        seg = server.stub.GetSegment(pb.GetSegmentRequest(id=c.segment_id), metadata=md(KEY_A), timeout=30)
        assert seg.stream_id == c.stream_id == "kitchen"
        assert seg.t_start - 1e-6 <= c.t_start <= c.t_end <= seg.t_end + 1e-6
    for claim in result.claims:
        assert claim.stream_id == "kitchen" and claim.segment_id in (SEG_K0, SEG_K1)
    for step in result.steps:
        assert all(g.stream_id == "kitchen" for g in step.groundings)


@slow
def test_article_outside_the_key_scope_is_permission_denied(server):
    for request in (
        pb.ArticleRequest(request=REQUEST, stream_ids=["station"]),
        pb.ArticleRequest(request=REQUEST, stream_ids=["kitchen", "station"]),
    ):
        err = rpc_error(server.stub.Article, request, metadata=md(KEY_A), timeout=30)
        assert err.code() == Code.PERMISSION_DENIED and "station" in err.details()
    hidden = rpc_error(server.stub.GetSegment, pb.GetSegmentRequest(id=SEG_S0), metadata=md(KEY_A), timeout=30)
    assert hidden.code() == Code.NOT_FOUND
    err = rpc_error(server.stub.Article, pb.ArticleRequest(request=REQUEST), metadata=(), timeout=30)
    assert err.code() == Code.UNAUTHENTICATED
    _serving(server)


@slow
@pytest.mark.parametrize(
    "request_",
    [
        pb.ArticleRequest(request=""),
        pb.ArticleRequest(request="  \n"),
        pb.ArticleRequest(request="x" * 4001),
        pb.ArticleRequest(request="What?", t_min=10, t_max=2),
        pb.ArticleRequest(request="What?", stream_ids=['cam" or 1==1']),
        pb.ArticleRequest(request="What?", style=99),
        pb.ArticleRequest(request="What?", max_sub_queries=10_000),
    ],
    ids=["empty", "blank", "long", "reversed", "injected-stream", "unknown-style", "too-many-sub-queries"],
)
def test_bad_article_request_is_invalid_argument(server, request_):
    err = rpc_error(server.stub.Article, request_, metadata=md(KEY_ALL), timeout=30)
    assert err.code() == Code.INVALID_ARGUMENT, err.details()
    assert err.details() and "Traceback" not in err.details()
    _serving(server)


@slow
def test_cli_article_json_in_process_matches_the_server(store, article_updates):
    """`episodic article --json` in-process prints the document the server's article makes
    (the api_convert promise; timings aside, which are measured per run). In this process,
    as test_server's in-process test does: Milvus Lite lets one process at a time open it."""
    from typer.testing import CliRunner

    from episodic import cli

    out = CliRunner().invoke(
        cli.app, ["article", REQUEST, "--stream-id", "kitchen", "--json", "--data", str(store.settings.data_dir)]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)  # exactly one JSON document
    remote = api_article.article_to_dict(api_article.article_from_proto(article_updates[-1].article))
    assert {k: v for k, v in doc.items() if k != "timings_ms"} == {
        k: v for k, v in remote.items() if k != "timings_ms"
    }
    assert set(doc["timings_ms"]) == set(remote["timings_ms"])


@slow
def test_cli_article_through_the_server(server, article_updates, tmp_path):
    """The real client side: one JSON document on stdout, no display on a piped stderr, the
    server's article; and a scope error is one line with exit code 2."""
    proc = run_cli("article", REQUEST, "--server", server.address, "--api-key", KEY_A, "--json",
                   data=tmp_path, timeout=300)
    doc = json.loads(proc.stdout)
    remote = api_article.article_to_dict(api_article.article_from_proto(article_updates[-1].article))
    assert {k: v for k, v in doc.items() if k != "timings_ms"} == {
        k: v for k, v in remote.items() if k != "timings_ms"
    }
    assert proc.stderr == ""
    proc = run_cli("article", REQUEST, "--server", server.address, "--api-key", KEY_A, "--stream-id", "station",
                   data=tmp_path, check=False, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "PERMISSION_DENIED" in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr


@slow
def test_article_with_a_deadline_too_short(server):
    """A deadline shorter than the work: DEADLINE_EXCEEDED (or, on a very fast machine, an
    article in time); never another error, and the server keeps serving."""
    started = time.monotonic()
    try:
        updates = list(server.stub.Article(pb.ArticleRequest(request=REQUEST), metadata=md(KEY_A), timeout=0.05))
    except grpc.RpcError as err:
        assert err.code() == Code.DEADLINE_EXCEEDED, err.details()
    else:
        assert updates[-1].WhichOneof("update") == "article"
    assert time.monotonic() - started < 30
    _serving(server)

