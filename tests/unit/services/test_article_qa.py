"""QA evidence and reranking for articles (issue 16 item 7; MARQUIS SS-QA / ITER-QA, §3.2),
in seconds: the in-memory store, a hashing embedder and a scripted language model
(tests/fakes.py), as tests/unit/services/test_query_unit.py builds them.

What is pinned: the reranker's order on hand-made candidates; the rule questions made from
sub-queries; the model path's JSON validation, one retry and fallback to the rules; a fact
only Ask reaches (its segment is fused below ``article_max_segments``) becomes a cited claim
with QA on and is missing with QA off; ITER-QA asks follow-ups only for the gaps and stops
after ``article_qa_rounds``; the request's deadline stops the questions.
"""

from __future__ import annotations

import time
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from episodic.components import Components
from episodic.config import Settings
from episodic.core.article import ArticleRequest, ArticleStyle
from episodic.core.errors import DeadlineExceeded, EpisodicError
from episodic.core.llm import ChatMessage
from episodic.core.query import AskRequest, AskResult, Evidence, Pathway, QueryType
from episodic.core.records import (
    EmbeddingEntry,
    ShortTermMemory,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
)
from episodic.reasoning.answer import NOTHING_FOUND
from episodic.reasoning.qa_questions import (
    Question,
    QuestionMaker,
    parse_questions,
    rule_forms,
    rule_questions,
)
from episodic.retrieval.detailed import MemoryReader, TextScorer, Unit
from episodic.retrieval.query_analysis import QueryAnalyzer
from episodic.retrieval.rerank import RerankCandidate, RerankQuery, TextReranker, reorder
from episodic.services.articles import ArticleService
from episodic.services.qa import MemoryQA
from tests.fakes import HashEmbedder, ScriptedLLM

KITCHEN_DISHES = "The kitchen sink is full of dirty dishes and the kitchen tap drips."
KITCHEN_TRAIN = "The train to Oxford leaves at twenty past eleven from platform four."
SAID = {
    ("kitchen", 0.0): KITCHEN_DISHES,
    ("kitchen", 10.0): KITCHEN_TRAIN,
    ("garage", 0.0): "The red car needs new tyres before Friday morning.",
    ("garage", 10.0): "Someone is sweeping the floor of the workshop.",
}
REQUEST = "Write a report about the kitchen: the dirty dishes and the dripping tap, and the train."


def _memory(embedder: HashEmbedder, stream_id: str, t0: float, text: str) -> tuple[ShortTermMemory, ThetaEvent]:
    vec = embedder.embed_texts([text])[0]
    mid = memory_id(stream_id, t0)
    m = ShortTermMemory(
        id=mid, stream_id=stream_id, t_start=t0, t_end=t0 + 8.0, vector=vec,
        embeddings=[EmbeddingEntry(t0 + 0.5, t0 + 7.5, "speech", text, vec)],
        transcript=[TranscriptPiece(t0 + 0.5, t0 + 7.5, text)],
    )
    e = ThetaEvent(event_id(stream_id, t0), stream_id, mid, t0, t0 + 8.0, text, vec, vec, audio_context=[text])
    return m, e


@pytest.fixture()
def components(tmp_path: Path) -> Components:
    settings = Settings(data_dir=tmp_path, store="memory", relisten_max_memories=0, inspect_enabled=False)
    c = Components(settings)
    embedder = HashEmbedder()
    c.embedder = embedder  # cached properties: the fakes stand in for the models
    c.llm = ScriptedLLM()
    c.store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    pairs = [_memory(embedder, s, t, text) for (s, t), text in SAID.items()]
    c.store.upsert_memories([m for m, _ in pairs])
    c.store.upsert_events([e for _, e in pairs])
    return c


def _service(components: Components, qa: MemoryQA | None = None, **changes) -> ArticleService:
    base = dict(article_max_segments=1, article_qa="off", article_rerank=False)
    settings = components.settings.replace(**{**base, **changes})
    return ArticleService(components, qa=qa or MemoryQA(components, warm_after_request=False), settings=settings)


def _text(article) -> str:
    return " ".join(s.text for sec in article.sections for s in sec.sentences)


# -- the reranker ------------------------------------------------------------------------------
def _candidate(sid: str, rank: int, fused: float, text: str) -> RerankCandidate:
    unit = Unit(stream_id=sid.split("@")[0], memory_id=sid, t_start=0.0, t_end=8.0, modality="speech", text=text)
    return RerankCandidate(sid, unit.stream_id, 0.0, 8.0, fused, rank, units=[unit])


def test_reranker_puts_the_segment_that_answers_a_sub_query_first() -> None:
    embedder = HashEmbedder()
    reranker = TextReranker(TextScorer(embedder), QueryAnalyzer(embedder))
    candidates = [
        _candidate("a@0", 1, 0.20, "People talked in the hall about the weather."),
        _candidate("b@0", 2, 0.19, "Music played somewhere in the building."),
        _candidate("c@0", 3, 0.18, "The red car needs new tyres before Friday morning."),
    ]
    query = RerankQuery("Report on the garage", ("Report on the garage", "red car tyres"))
    ranked = reranker.rerank(query, candidates)
    assert [c.segment_id for c in ranked][0] == "c@0"
    assert ranked[0].text_score > max(c.text_score for c in ranked[1:])
    assert all(a.score >= b.score for a, b in zip(ranked, ranked[1:], strict=False))
    # all weight on the fused score: the first stage's order stands
    fused_only = TextReranker(TextScorer(embedder), QueryAnalyzer(embedder), text_weight=0.0)
    assert [c.segment_id for c in fused_only.rerank(query, candidates)] == ["a@0", "b@0", "c@0"]
    # the tail the reranker did not see keeps its fused order after the reranked head
    assert [s for s, _ in reorder([("a@0", 3), ("b@0", 2), ("c@0", 1), ("z@0", 0.5)], ranked)][-1] == "z@0"
    assert reranker.rerank(query, []) == []


def test_the_article_reads_the_reranked_list_and_any_reranker_can_take_the_place(components: Components) -> None:
    class Reverse:
        """A stand-in for a video reranker: the fused head, worst first."""

        def __init__(self) -> None:
            self.seen: list[str] = []

        def rerank(self, query: RerankQuery, candidates):
            self.seen = [c.segment_id for c in candidates]
            return [replace(c, score=-float(i)) for i, c in enumerate(reversed(candidates))]

    req = ArticleRequest(f"{REQUEST[:-1]} to Oxford.", style=ArticleStyle.BULLET, max_sub_queries=4)
    progress = []
    service = _service(components, article_rerank=True)
    article = service.write(req, progress.append)
    assert "rerank" in [p.stage for p in progress] and "rerank" in article.timings_ms
    assert {c.segment_id for c in article.citations} == {memory_id("kitchen", 0.0)}
    reverse = Reverse()
    service.reranker = reverse
    article = service.write(req)
    assert reverse.seen[:2] == [memory_id("kitchen", 0.0), memory_id("kitchen", 10.0)]
    # one segment is read: the reranker's first (the fused list's last), which holds nothing
    # on the kitchen: the article says so instead of citing the fused list's best
    assert reverse.seen[-1].startswith("garage@") and article.thin_evidence
    assert all(c.segment_id == reverse.seen[-1] for c in article.citations)


# -- rule questions -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("facet", "first", "follow_up"),
    [
        ("traffic on the north bridge", "What happened with traffic on the north bridge?",
         "What was said about traffic on the north bridge?"),
        ("the cyclists", "What did the cyclists do?", "What was said about the cyclists?"),
        ("when did the bus leave", "When did the bus leave?", "What was said about the bus leave?"),
        ("music at the market?", "Music at the market?", "What was said about music at the market?"),
    ],
)
def test_rule_questions_from_sub_queries(facet: str, first: str, follow_up: str) -> None:
    forms = rule_forms(facet)
    assert forms[:2] == [first, follow_up]
    assert all(f.endswith("?") for f in forms) and len(set(forms)) == len(forms)


def test_rule_questions_take_the_next_form_and_respect_the_count() -> None:
    facets = ["the dirty dishes", "the dripping tap", "the train to Oxford"]
    first = rule_questions(facets, 2)
    assert [q.facet for q in first] == facets[:2]
    assert first[0].text == "What happened with the dirty dishes?"
    asked = {"what happened with the dirty dishes"}
    again = rule_questions(facets[:1], 2, asked)
    assert [q.text for q in again] == ["What was said about the dirty dishes?"]
    forms = rule_forms("Who was there when the lights went out?")
    assert forms[0] == "Who was there when the lights went out?"
    assert "When was traffic?" in rule_forms("traffic") and "Who was involved in traffic?" in rule_forms("traffic")


# -- the model path --------------------------------------------------------------------------------
def _maker(replies: list[object]) -> tuple[QuestionMaker, ScriptedLLM]:
    script = list(replies)

    def reply(_messages: list[ChatMessage]) -> str:
        item = script.pop(0)
        if isinstance(item, Exception):
            raise item
        return str(item)

    llm = ScriptedLLM(reply=reply)
    return QuestionMaker(lambda: llm, types.SimpleNamespace(llm="openai")), llm


def test_model_questions_are_validated_retried_once_then_the_rules_take_over() -> None:
    facets = ["the dirty dishes", "the train to Oxford"]
    maker, llm = _maker(["Here you go: dishes? train?", '```json\n["Who washed the dishes", "When did the train to Oxford leave?", 7]\n```'])
    made = maker.first(REQUEST, facets, 4)
    assert made.method == "llm" and len(llm.calls) == 2  # the first reply retried once
    assert [q.text for q in made.questions] == ["Who washed the dishes?", "When did the train to Oxford leave?"]
    assert [q.facet for q in made.questions] == facets  # by shared words
    maker, llm = _maker(["no list here", '{"questions": 1}'])
    made = maker.first(REQUEST, facets, 4)
    assert made.method.startswith("rules") and len(llm.calls) == 2
    assert [q.text for q in made.questions] == [q.text for q in rule_questions(facets, 4)]
    maker, llm = _maker([EpisodicError("endpoint down")])
    assert maker.first(REQUEST, facets, 4).method.startswith("rules") and len(llm.calls) == 1
    # a follow-up may say there is nothing more to ask; questions asked before are not repeated
    maker, _ = _maker(["[]"])
    assert maker.follow_up(REQUEST, facets[1:], [("What happened with the train to Oxford?", "")], 4).questions == []
    maker, _ = _maker(['["What happened with the train to Oxford?", "Which platform did the Oxford train use?"]'])
    made = maker.follow_up(REQUEST, facets[1:], [("What happened with the train to Oxford?", "")], 4)
    assert [q.text for q in made.questions] == ["Which platform did the Oxford train use?"]
    assert parse_questions('["ok?", ""]') == ["Ok?"] and parse_questions("[1, 2]") is None


# -- QA evidence in the article ---------------------------------------------------------------------
def _reader_llm(messages: list[ChatMessage]) -> str:
    """A model that reads its evidence: it answers about the train when the train is there."""
    return "The train to Oxford leaves at twenty past eleven." if "Oxford" in messages[-1].content else "not stated"


def test_a_fact_only_ask_reaches_gets_a_cited_claim_with_qa_on(components: Components) -> None:
    components.llm = ScriptedLLM(reply=_reader_llm)
    # four sub-queries: the request, "kitchen", "dirty dishes and the dripping tap", "train to
    # Oxford"; the dishes segment wins the fusion, the train segment is second, below the cut
    req = ArticleRequest(f"{REQUEST[:-1]} to Oxford.", style=ArticleStyle.BULLET, max_sub_queries=4)
    off = _service(components)
    article = off.write(req)
    train_segment = memory_id("kitchen", 10.0)
    assert "Oxford" not in _text(article)  # its segment is fused below article_max_segments
    assert all(c.segment_id != train_segment for c in article.citations) and article.citations

    progress = []
    # the hashing embedder caps Ask's confidence near 0.5 (its cosines are low), hence 0.4 here
    on = _service(components, article_qa="single", article_qa_min_confidence=0.4)
    article = on.write(req, progress.append)
    sentences = [s for sec in article.sections for s in sec.sentences if "Oxford" in s.text]
    assert sentences, article.markdown()
    by_n = {c.n: c for c in article.citations}
    cited = [by_n[n] for n in sentences[0].citations]
    assert any(c.segment_id == train_segment and c.stream_id == "kitchen" for c in cited)
    assert components.store.get_memory(train_segment, with_vectors=False) is not None
    qa_claims = [c for c in article.claims if c.kind == "qa"]
    assert qa_claims and all(c.support >= on.settings.article_support_min for c in qa_claims)
    assert any(p.stage == "qa" for p in progress) and "qa" in article.timings_ms
    assert [p.stage for p in progress][-1] == "write"
    assert on.last_qa is not None and on.last_qa.asked >= 1


class _ScriptedQA:
    """Answers Ask with a script (question → (answer, segment) or None) and records the calls,
    around a real MemoryQA for the scorer and the analyser."""

    def __init__(self, real: MemoryQA, answers: dict[str, tuple[str, str] | None], delay_s: float = 0.0) -> None:
        self.real = real
        self.scorer, self.analyzer = real.scorer, real.analyzer
        self.answers = answers
        self.delay_s = delay_s
        self.calls: list[AskRequest] = []

    def ask(self, req: AskRequest) -> AskResult:
        self.calls.append(req)
        time.sleep(self.delay_s)
        hit = next((v for k, v in self.answers.items() if k.lower() in req.question.lower()), None)
        if hit is None:
            return AskResult(NOTHING_FOUND, 0.0, Pathway.DETAILED, QueryType.AUDIO)
        text, segment = hit
        stream = segment.split("@")[0]
        m = self.real.c.store.get_memory(segment, with_vectors=False)
        ev = Evidence(stream, segment, m.t_start + 0.5, m.t_end - 0.5, "speech", text)
        return AskResult(f'{text} (heard, {stream})', 0.9, Pathway.DETAILED, QueryType.AUDIO, evidence=[ev])


def test_iterative_qa_follows_up_only_on_gaps_and_stops_after_the_rounds(components: Components) -> None:
    real = MemoryQA(components, warm_after_request=False)
    # questions about the tap are answered (from the dishes segment); nothing else ever is
    fake = _ScriptedQA(real, {"dripping tap": (KITCHEN_DISHES, memory_id("kitchen", 0.0))})
    request = "Report on the kitchen: the dripping tap and the train to Oxford."
    service = _service(components, qa=fake, article_qa="iterative", article_qa_rounds=3,
                       article_qa_streams=1, article_max_segments=1)
    service.write(ArticleRequest(request, style=ArticleStyle.BULLET))
    report = service.last_qa
    assert report is not None and report.rounds == 3  # gaps remain: every round is asked
    by_round = {r: [(facet, q, got) for rr, facet, q, got in report.log if rr == r] for r in (1, 2, 3)}
    assert all(by_round[r] for r in (1, 2, 3)) and max(rr for rr, *_ in report.log) == 3
    answered = {facet for facet, _, got in by_round[1] if got}
    assert answered and all("dripping tap" in f for f in answered)
    for r in (2, 3):  # follow-ups only for facets still without a claim, never the answered one
        assert not {facet for facet, _, _ in by_round[r]} & answered
        assert len(by_round[r]) <= service.settings.article_qa_questions
    questions = [q for _, _, q, _ in report.log]
    assert len(questions) == len(set(questions)) == len(fake.calls)  # a question is asked once
    # a gap asked in every round gets a new form each time
    gap = next(f for f, _, _ in by_round[1] if f not in answered)
    forms = [q for _, f, q, _ in report.log if f == gap]
    assert len(forms) == 3 and forms[:2] == rule_forms(gap)[:2]
    assert all(r.scope.stream_ids == ("kitchen",) for r in fake.calls)

    fake.calls.clear()
    single = _service(components, qa=fake, article_qa="single", article_qa_streams=1)
    single.write(ArticleRequest(request, style=ArticleStyle.BULLET))
    assert single.last_qa is not None and single.last_qa.rounds == 1
    assert 1 <= len(fake.calls) <= single.settings.article_qa_questions

    # no gap left after the first round: iterative mode stops there
    everything = _ScriptedQA(real, {"": (KITCHEN_DISHES, memory_id("kitchen", 0.0))})
    done = _service(components, qa=everything, article_qa="iterative", article_qa_rounds=3,
                    article_qa_streams=1, article_qa_questions=10)
    done.write(ArticleRequest("Report on the dirty dishes in the kitchen sink.", style=ArticleStyle.BULLET))
    assert done.last_qa is not None and done.last_qa.rounds == 1


def test_answers_that_are_no_evidence_are_dropped(components: Components) -> None:
    real = MemoryQA(components, warm_after_request=False)
    service = _service(components, qa=real, article_qa="single")
    train = memory_id("kitchen", 10.0)
    m = components.store.get_memory(train, with_vectors=False)
    question = Question("What happened with the train to Oxford?", "the train to Oxford")
    reader = MemoryReader(components.store)
    vec = np.asarray(real.scorer.embed(["the train to Oxford"])[0], dtype=np.float32)
    prepared = {"the train to Oxford": ("the train to Oxford", real.analyzer.analyze("the train to Oxford", vec), vec)}
    ev = Evidence("kitchen", train, m.t_start + 0.5, m.t_end - 0.5, "speech", KITCHEN_TRAIN)

    def claim(answer: str, confidence: float, evidence: list[Evidence], stream: str = "kitchen"):
        result = AskResult(answer, confidence, Pathway.DETAILED, QueryType.AUDIO, evidence=evidence)
        return service._answer_claim(question, result, stream, reader, ArticleRequest(REQUEST).scope, prepared)

    good = claim(f"{KITCHEN_TRAIN} (heard, kitchen)", 0.9, [ev])
    assert good is not None and good.segment_id == train and good.kind == "qa" and good.text == KITCHEN_TRAIN
    assert claim(NOTHING_FOUND, 0.0, []) is None
    assert claim("not stated", 0.9, [ev]) is None  # an abstention
    assert claim(KITCHEN_TRAIN, 0.2, [ev]) is None  # not confident enough
    assert claim(KITCHEN_TRAIN, 0.9, [ev], stream="garage") is None  # outside the stream asked
    gone = Evidence("kitchen", "kitchen@999999999999", 0.0, 1.0, "speech", KITCHEN_TRAIN)
    assert claim(KITCHEN_TRAIN, 0.9, [gone]) is None  # never cite what is not stored
    dishes = Evidence("kitchen", memory_id("kitchen", 0.0), 0.5, 7.5, "speech", KITCHEN_DISHES)
    assert claim(KITCHEN_DISHES, 0.9, [dishes]) is None  # does not bear on the question
    # a stream's name in the question is no evidence: the question was asked of that stream
    sweeping = memory_id("garage", 10.0)
    about_garage = Question("What happened with the bicycle in the garage?", "the bicycle in the garage")
    vec = np.asarray(real.scorer.embed([about_garage.facet])[0], dtype=np.float32)
    prepared[about_garage.facet] = (about_garage.facet, real.analyzer.analyze(about_garage.facet, vec), vec)
    said = SAID[("garage", 10.0)]
    result = AskResult(said, 0.9, Pathway.DETAILED, QueryType.AUDIO,
                       evidence=[Evidence("garage", sweeping, 10.5, 17.5, "speech", said)])
    assert service._answer_claim(about_garage, result, "garage", reader, ArticleRequest(REQUEST).scope, prepared) is None


def test_the_deadline_stops_the_questions(components: Components) -> None:
    real = MemoryQA(components, warm_after_request=False)
    fake = _ScriptedQA(real, {}, delay_s=0.3)
    service = _service(components, qa=fake, article_qa="iterative", article_qa_rounds=5, article_qa_streams=2,
                       article_max_segments=4)
    started = time.perf_counter()
    with pytest.raises(DeadlineExceeded, match="question"):
        service.write(ArticleRequest(REQUEST, style=ArticleStyle.BULLET, deadline_s=0.5))
    assert time.perf_counter() - started < 1.5
    assert 1 <= len(fake.calls) <= 3
    assert all(r.deadline_s is not None and r.deadline_s <= 0.5 for r in fake.calls)


def test_settings_are_checked() -> None:
    from episodic.config.serving import ArticleSettings

    assert ArticleSettings().problems() == []
    bad = ArticleSettings(article_qa="always", article_qa_questions=0, article_qa_rounds=0,
                          article_qa_streams=0, article_qa_min_confidence=2.0, article_rerank_depth=0)
    assert len(bad.problems()) == 6
