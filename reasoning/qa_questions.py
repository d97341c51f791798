"""Questions for QA evidence (MARQUIS §4.3, Appendix F: SS-QA and ITER-QA).

MARQUIS adds a third evidence family beside notes and claims: the request's sub-queries are
turned into questions, each answered over the retrieved videos, and the grounded answers
become evidence. The single-shot variant (SS-QA) asks a fixed set once; the iterative one
(ITER-QA) asks follow-ups on what is still missing, given the question–answer history. In
the paper QA-based articles had the best human scores (ITER-QA-BASE 3.83 against the CAG
baseline's 3.09), while their automatic precision was lower: a QA failure leaves a facet
empty rather than wrong.

This module only makes the questions; :mod:`services.articles` answers them with Ask.

* **rules** (the default with the local model): each facet (sub-query) becomes a question in
  a fixed form: "What happened with X?" ("What did X do?" when X names people); a follow-up
  round asks the facets still without evidence in the next form ("What was said about X?",
  "Who was involved in X?", "When was X?"), which steers Ask's query analysis to another
  modality. A facet that is a question already is asked as written first.
* **model** (``llm = "openai"``): the model writes the questions as a JSON list, for the first
  round from the request and its facets, for a follow-up from the history and the facets
  still open (``[]`` means nothing more is worth asking: the loop stops, as the paper's
  "NONE"). A reply that is not a valid list is retried once, then the rules take over, so a
  bad model never fails an article. A 135M local model cannot write useful questions (it
  restates the request), hence the rule default.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from episodic.core.errors import EpisodicError
from episodic.core.llm import ChatMessage, LanguageModel, json_in_reply
from episodic.retrieval.query_analysis import content_terms, tokens

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 200


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_QUESTION_WORDS = _words(
    "what which who whom whose where when why how whether did does do is are was were can could "
    "will would has have had"
)
# Head nouns that name people: such a facet is asked what they did, not what happened "with" them.
_PEOPLE = _words(
    "people person man men woman women child children kid kids boy boys girl girls someone "
    "somebody driver drivers cyclist cyclists musician musicians seller sellers porter porters "
    "tourist tourists crowd staff worker workers police officer officers customer customers "
    "passenger passengers visitor visitors friend friends speaker speakers jogger joggers player "
    "players pedestrian pedestrians shopper shoppers guard guards teacher teachers student students"
)
_TRIM = " \t,.;:!?-–—\"'()[]"

# The model's instructions (a capable model only; its reply is validated).
QUESTIONS_SYSTEM = (
    "You write questions that can be answered from recorded video: what was said, shown or "
    "written, who was there, what they did and when. Each question asks for one thing, in "
    "plain words, and never about the report itself. Reply with a JSON list of strings and "
    "nothing else."
)


def first_user(request: str, facets: Sequence[str], n: int) -> str:
    listed = "\n".join(f"{i}. {f}" for i, f in enumerate(facets, 1))
    return (
        f"Request: {request}\n\nParts of the request:\n{listed}\n\n"
        f"Write at most {n} questions, one for each part in the order given. JSON list:"
    )


def follow_up_user(request: str, gaps: Sequence[str], history: Sequence[tuple[str, str]], n: int) -> str:
    asked = "\n".join(f"Q: {q}\nA: {a or 'no answer found'}" for q, a in history) or "(none yet)"
    open_ = "\n".join(f"- {g}" for g in gaps)
    return (
        f"Request: {request}\n\nQuestions asked so far and their answers:\n{asked}\n\n"
        f"Parts of the request still without an answer:\n{open_}\n\n"
        f"Write at most {n} new questions, different from those asked, that could find what "
        "is still missing. If nothing more is worth asking, reply []. JSON list:"
    )


@dataclass(frozen=True)
class Question:
    """A question and the facet (sub-query) it serves: an answer to it fills that facet."""

    text: str
    facet: str


@dataclass(frozen=True)
class QuestionSet:
    questions: list[Question]
    method: str  # "rules" | "llm" | "rules (llm reply unusable)" | "llm: nothing more to ask"


def _clean(text: str) -> str:
    return " ".join(text.split()).strip(_TRIM)[:MAX_QUESTION_CHARS].strip(_TRIM)


def _question(text: str) -> str:
    """One line, capitalised, ending in a question mark."""
    text = _clean(text)
    return (text[:1].upper() + text[1:] + "?") if text else ""


def norm(question: str) -> str:
    """A question's identity for "asked already": its lower-case words."""
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))


def _is_question(facet: str) -> bool:
    words = tokens(facet)
    return facet.rstrip().endswith("?") or bool(words and words[0] in _QUESTION_WORDS)


def _names_people(facet: str) -> bool:
    return any(w in _PEOPLE for w in tokens(facet))


def _about(facet: str) -> str:
    """What a facet is about, for the follow-up forms: a question facet loses its question
    word and verb ("what the shops sold" → "the shops sold")."""
    text = _clean(facet)
    if _is_question(text):
        words = text.split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        text = " ".join(words) or text
    return text


def rule_forms(facet: str) -> list[str]:
    """The questions the rules ask about one facet, in round order."""
    about = _about(facet)
    if not about:
        return []
    first = _question(facet) if _is_question(facet) else (
        f"What did {about} do?" if _names_people(facet) else f"What happened with {about}?"
    )
    forms = [first, f"What was said about {about}?"]
    if not _names_people(facet):
        forms.append(f"Who was involved in {about}?")
    forms.append(f"When was {about}?" if not _names_people(facet) else f"When were {about} seen?")
    return [_question(f) for f in dict.fromkeys(forms)]


def rule_questions(facets: Sequence[str], n: int, asked: Collection[str] = ()) -> list[Question]:
    """Up to ``n`` questions, one per facet in order, each in the first form not asked yet."""
    out: list[Question] = []
    taken = set(asked)
    for facet in facets:
        if len(out) >= n:
            break
        for form in rule_forms(facet):
            key = norm(form)
            if key and key not in taken:
                out.append(Question(form, facet))
                taken.add(key)
                break
    return out


def parse_questions(reply: str) -> list[str] | None:
    """The questions of a model reply: a JSON list of strings (a ```json fence and prose
    around it are tolerated), each cleaned and ending in "?"; ``[]`` for an explicit empty
    list; None when the reply is not such a list."""
    items = json_in_reply(reply, list)
    if items is None:
        return None
    if not items:
        return []
    out = [_question(x) for x in items if isinstance(x, str)]
    out = [q for q in dict.fromkeys(out) if q and content_terms(q)]
    return out or None


def facet_of(question: str, facets: Sequence[str], index: int) -> str:
    """The facet a model question serves: the one sharing most of its content words; a tie
    (or no shared word) goes to the facet at the question's position."""
    words = set(content_terms(question))
    default = facets[min(index, len(facets) - 1)]
    best, best_n = default, 0
    for f in facets:
        shared = len(words & set(content_terms(f)))
        if shared > best_n:
            best, best_n = f, shared
    return best


class QuestionMaker:
    """Questions from the model when it is capable (``llm = "openai"``), else from the rules."""

    def __init__(self, llm: Callable[[], LanguageModel], settings) -> None:
        self._llm = llm
        self.settings = settings

    @property
    def uses_llm(self) -> bool:
        return self.settings.llm == "openai"

    def first(self, request: str, facets: Sequence[str], n: int) -> QuestionSet:
        """The first round: one question per facet (in the order given), at most ``n``."""
        facets = list(facets)[:n]
        if not facets or n < 1:
            return QuestionSet([], "rules")
        if not self.uses_llm:
            return QuestionSet(rule_questions(facets, n), "rules")
        messages = [ChatMessage("system", QUESTIONS_SYSTEM), ChatMessage("user", first_user(request, facets, n))]
        return self._ask(messages, facets, n, set(), lambda: rule_questions(facets, n))

    def follow_up(
        self,
        request: str,
        gaps: Sequence[str],
        history: Sequence[tuple[str, str]],
        n: int,
    ) -> QuestionSet:
        """Another round for the facets still without evidence (ITER-QA): never a question
        asked before; the model may answer ``[]`` to stop."""
        asked = {norm(q) for q, _ in history}
        gaps = list(gaps)
        if not gaps or n < 1:
            return QuestionSet([], "rules")
        if not self.uses_llm:
            return QuestionSet(rule_questions(gaps, n, asked), "rules")
        messages = [
            ChatMessage("system", QUESTIONS_SYSTEM),
            ChatMessage("user", follow_up_user(request, gaps, history, n)),
        ]
        return self._ask(messages, gaps, n, asked, lambda: rule_questions(gaps, n, asked))

    def _ask(
        self,
        messages: list[ChatMessage],
        facets: list[str],
        n: int,
        asked: set[str],
        rules: Callable[[], list[Question]],
    ) -> QuestionSet:
        for attempt in range(2):
            try:
                reply = self._llm().generate(messages, max_tokens=48 * n, temperature=0.0, seed=attempt)
            except EpisodicError as exc:
                log.warning("QA questions: the model failed (%s); using the rules", exc)
                break
            parsed = parse_questions(reply)
            if parsed == []:
                return QuestionSet([], "llm: nothing more to ask")
            if parsed:
                fresh = [q for q in parsed if norm(q) not in asked][:n]
                if fresh:
                    return QuestionSet([Question(q, facet_of(q, facets, i)) for i, q in enumerate(fresh)], "llm")
            log.warning("QA questions: reply %d was not a usable JSON list of questions", attempt + 1)
        return QuestionSet(rules(), "rules (llm reply unusable)")
