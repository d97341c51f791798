"""Multi-video articles end to end: two generated camera recordings with known spoken facts
→ in-process ingest (real models, Milvus Lite) → the MARQUIS pipeline.

Facts (episodic/labelled_set.py): on "bridge-cam" a delivery truck (≈1.5–5 s) and two cyclists
(≈9.5–13 s) are mentioned; on "market-cam" the cake shop (≈1.5–5 s) and a violinist
(≈9.5–13 s). Keywords allow for what Whisper tiny.en mishears.
"""

from __future__ import annotations

import json
import re
import types

import pytest

from episodic.components import Components
from episodic.config import load_settings
from episodic.core.article import ArticleRequest, ArticleStyle, Claim, Fusion
from episodic.core.errors import InputError
from episodic.core.query import Scope
from episodic.evaluation import evaluate
from episodic.labelled_set import ARTICLE_QUERIES, build_article_set, load_labelled_set
from episodic.reasoning.openai_llm import OpenAICompatibleLLM
from episodic.retrieval.decomposition import QueryDecomposer, parse_sub_queries, rule_sub_queries
from episodic.retrieval.detailed import MemoryReader
from episodic.services.articles import ArticleService
from tests.openai_standin import ChatStandIn, chat_reply

pytestmark = pytest.mark.slow

BOTH = ARTICLE_QUERIES[0].request
FACTS = {  # keyword pattern → (stream, window in which its citation must lie)
    r"truck": ("bridge-cam", (1.0, 6.5)),
    r"cyclist": ("bridge-cam", (8.5, 15.0)),
    r"cake": ("market-cam", (1.0, 6.5)),
    r"violin|musician": ("market-cam", (8.5, 15.0)),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("articles")
    components = Components(load_settings(data_dir=root / "data"))
    labels = build_article_set(root, components)
    service = ArticleService(components)
    yield service, labels, root
    components.close()


@pytest.fixture(scope="module")
def service(built) -> ArticleService:
    return built[0]


def _overlaps(a0: float, a1: float, b0: float, b1: float) -> bool:
    return a0 <= b1 and b0 <= a1


def _sentences(article):
    return [s for sec in article.sections for s in sec.sentences]


@pytest.mark.parametrize("style", list(ArticleStyle))
def test_article_reports_both_streams_with_the_right_citations(service, style):
    progress = []
    article = service.write(ArticleRequest(BOTH, style=style), progress.append)
    assert [p.stage for p in progress][0] == "decompose" and progress[-1].stage == "write"
    assert any(p.stage == "retrieve" for p in progress)
    assert 2 <= len(article.sub_queries) <= 25 and not article.thin_evidence
    by_n = {c.n: c for c in article.citations}
    found = {}
    for sen in _sentences(article):
        assert sen.citations, f"uncited sentence: {sen.text}"
        for pattern, (stream, window) in FACTS.items():
            if re.search(pattern, sen.text, re.I):
                cites = [by_n[n] for n in sen.citations]
                ok = any(c.stream_id == stream and _overlaps(c.t_start, c.t_end, *window) for c in cites)
                assert ok, (pattern, sen.text, cites)
                found[pattern] = True
    # GINGER keeps the top facets only: at least three of the four facts, from both streams
    need = 4 if style is not ArticleStyle.GINGER else 3
    assert len(found) >= need, (style, found, article.markdown())
    assert {by_n[n].stream_id for s in _sentences(article) for n in s.citations} == {"bridge-cam", "market-cam"}
    md = article.markdown()
    assert md.startswith("# ") and "[1]" in md and "## Sources" in md


def test_every_citation_resolves_to_a_stored_segment(service):
    article = service.write(ArticleRequest(BOTH, style=ArticleStyle.CAG))
    store = service.c.store
    assert article.citations
    for c in article.citations:
        m = store.get_memory(c.segment_id, with_vectors=False)
        assert m is not None and m.stream_id == c.stream_id
        assert m.t_start - 1e-6 <= c.t_start <= c.t_end <= m.t_end + 1e-6
    used = {n for s in _sentences(article) for n in s.citations}
    assert used == {c.n for c in article.citations}
    # the grounded multi-step form: one step per cited sentence, grounded in the citations
    assert len(article.steps) == len(_sentences(article))
    assert all(st.groundings for st in article.steps)
    assert all(c.support >= 0.5 for c in article.claims)


def test_scope_keeps_the_article_to_the_named_stream(service):
    article = service.write(ArticleRequest(BOTH, style=ArticleStyle.BULLET, scope=Scope(stream_ids=("market-cam",))))
    assert article.citations and {c.stream_id for c in article.citations} == {"market-cam"}
    assert not re.search(r"truck|cyclist", " ".join(s.text for s in _sentences(article)), re.I)


def test_nothing_relevant_gives_a_short_honest_article(service):
    article = service.write(ArticleRequest("Report on the snowfall forecast for the alpine ski resorts and avalanche warnings."))
    assert article.thin_evidence
    text = article.markdown().lower()
    assert "nothing" in text or "holds little" in text
    assert len(article.citations) <= 1
    assert not re.search(r"snow|avalanche|ski", " ".join(s.text for s in _sentences(article)[1:]), re.I)


def test_calibration_drops_a_planted_unsupported_claim(service):
    store = service.c.store
    seg = next(m for m in store.list_memories("bridge-cam", t_min=0, t_max=6) if m.transcript)
    real_text = seg.transcript[0].text
    common = dict(stream_id="bridge-cam", segment_id=seg.id, t_start=seg.t_start, t_end=seg.t_end, modality="speech")
    real = Claim(id="real", text=real_text, **common)
    planted = Claim(id="planted", text="A red fire engine blocked the harbour road at noon.", **common)
    twisted = Claim(id="twisted", text=re.sub(r"truck", "tractor", real_text) + " Twelve people were hurt.", **common)
    kept, dropped = service.calibrate([real, planted, twisted], MemoryReader(store))
    assert [c.id for c in kept] == ["real"] and dropped == 2
    assert real.support >= 0.8 and planted.support < 0.2 and twisted.support < 0.5


def test_request_validation(service):
    for bad, msg in [
        (ArticleRequest("   "), "empty"),
        (ArticleRequest("x" * 5000), "characters"),
        (ArticleRequest("ok", style="poem"), "style"),
        (ArticleRequest("ok", fusion="best"), "fusion"),
        (ArticleRequest("ok", max_sub_queries=0), "max_sub_queries"),
        (ArticleRequest("ok", scope=Scope(stream_ids=('cam" or 1==1',))), "stream"),
        (ArticleRequest("ok", scope=Scope(t_min=10, t_max=2)), "reversed"),
    ]:
        with pytest.raises(InputError, match=msg):
            service.write(bad)


@pytest.mark.parametrize("fusion", list(Fusion))
def test_every_fusion_method_runs(service, fusion):
    article = service.write(ArticleRequest(ARTICLE_QUERIES[2].request, style=ArticleStyle.BULLET, fusion=fusion))
    assert {c.stream_id for c in article.citations} == {"market-cam"}


# -- decomposition -----------------------------------------------------------------------------
def test_rule_decomposition():
    subs = rule_sub_queries(BOTH, 25)
    low = [s.lower() for s in subs]
    assert "write" not in low[0] and "all cameras" not in low[0]
    for facet in ("north bridge", "cyclists", "shops sold", "music"):
        assert any(facet in s for s in low[1:]), (facet, subs)
    assert len(rule_sub_queries(BOTH, 3)) == 3
    assert rule_sub_queries("What happened?", 25) == ["What happened"]
    assert parse_sub_queries('Sure! ```json\n["truck on bridge", "cyclists", 3]\n```') == ["truck on bridge", "cyclists"]
    assert parse_sub_queries("here are some phrases: truck, cyclists") is None


def test_model_output_that_is_not_json_degrades_to_the_rules(built):
    service, _, _ = built
    standin = ChatStandIn()
    try:
        settings = service.settings.replace(llm="openai", openai_base_url=standin.url, openai_model="m")
        llm = OpenAICompatibleLLM(settings, timeout_s=5, backoff_s=0.01)
        standin.script[:] = [(200, chat_reply("I will split it: vans, cyclists")), (200, chat_reply("{not json"))]
        d = QueryDecomposer(lambda: llm, settings).decompose(BOTH)
        assert d.method.startswith("rules") and d.sub_queries == rule_sub_queries(BOTH, 25)
        assert len(standin.requests) == 2  # retried once, then degraded

        # a capable model writes CAG prose: a good sentence is kept, an invented one and an
        # uncited one are dropped, and the article never crashes on them
        c = service.c
        comps = types.SimpleNamespace(settings=settings, store=c.store, embedder=c.embedder, llm=llm)
        llm_service = ArticleService(comps, qa=service.qa)
        standin.requests.clear()
        replies = [
            '["delivery truck on the north bridge", "cyclists crossing the bridge"]',
            "A delivery truck stopped on the north bridge [1][2][3][4]. "
            "The truck then caught fire and three people were arrested [1][2][3][4]. "
            "It was a busy morning.",
        ]
        standin.script[:] = [(200, chat_reply(r)) for r in replies]
        article = llm_service.write(ArticleRequest("What happened on the bridge?", style=ArticleStyle.CAG))
        text = " ".join(s.text for s in _sentences(article))
        assert [s.text for s in _sentences(article)] == ["A delivery truck stopped on the north bridge."]
        assert "fire" not in text and "busy morning" not in text
        assert article.sub_queries[1:] == ["delivery truck on the north bridge", "cyclists crossing the bridge"]
        assert all(s.citations for s in _sentences(article))
    finally:
        standin.close()


# -- evaluation ----------------------------------------------------------------------------------
def test_evaluation_on_the_generated_labelled_set(built, tmp_path):
    service, labels, _ = built
    path = tmp_path / "labels.json"
    path.write_text(labels.to_json())
    again = load_labelled_set(path)
    assert [q.request for q in again.queries] == [q.request for q in labels.queries]
    report = evaluate(service, again, style=ArticleStyle.BULLET)
    means = report.means()
    assert means["citation_validity"] == 1.0
    assert means["citation_precision"] >= 0.9
    assert means["recall"] >= 0.75 and means["ndcg"] >= 0.6
    assert means["mtgs"] > 0.2 and means["fact_recall"] >= 0.75
    assert 0.0 <= means["stem_missing"] <= 0.5
    json.dumps(report.to_dict())
    bad = tmp_path / "bad.json"
    bad.write_text('{"queries": [{"request": "x", "relevant": [{"stream_id": "a", "t_start": 5, "t_end": 1}]}]}')
    with pytest.raises(InputError, match="ends before"):
        load_labelled_set(bad)
