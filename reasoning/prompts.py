"""Prompt texts, written for this project (structure after HippoMM Tables 5–11)."""

from __future__ import annotations

from episodic.core.llm import ChatMessage

# -- question answering (structure after HippoMM Tables 7, 10 and 11) ----------------------
#
# Written for a very small local model: short instructions, the question last, and a
# "Short answer:" cue, because SmolLM2-135M copies the relevant note far more reliably in
# that shape than when asked for structured output. Stronger backends follow the optional
# CONFIDENCE line; answer.py treats a missing one as "not reported", never as certainty
# alone (retrieval evidence caps every confidence).

FAST_SYSTEM = (
    "You answer questions about recordings using only the log entries you are given. Reply "
    "in a few words. If the entries do not contain the answer, say: not stated. You may add "
    "a last line CONFIDENCE: <0 to 1> saying how sure you are that the entries answer it."
)

ANSWER_SYSTEM = (
    "You answer questions about recordings using only the notes you are given: what was "
    "heard, what was seen and what was written on screen at the relevant moments. Reply in "
    "a few words, copying the words of the note that answers the question. If no note "
    "answers it, say: not stated."
)


def _options_block(options: list[str] | tuple[str, ...]) -> str:
    if not options:
        return ""
    letters = "ABCDEFGHIJ"
    lines = "\n".join(f"{letters[i]}. {o}" for i, o in enumerate(options))
    return f"\nOptions:\n{lines}\nReply with the letter of the right option."


def fast_answer_messages(
    question: str, entries: list[str], options: list[str] | tuple[str, ...] = ()
) -> list[ChatMessage]:
    """Fast retrieval (Φ_fast): answer from ThetaEvent summaries, or say they do not tell."""
    notes = "\n".join(f"- {e}" for e in entries) if entries else "- (none)"
    user = f"Log entries:\n{notes}\n\nQuestion: {question}{_options_block(options)}\nShort answer:"
    return [ChatMessage("system", FAST_SYSTEM), ChatMessage("user", user)]


def detailed_answer_messages(
    question: str,
    notes: list[str],
    overview: list[str] = (),  # type: ignore[assignment]
    options: list[str] | tuple[str, ...] = (),
) -> list[ChatMessage]:
    """Answer synthesis (Γ): the question, the detailed notes, and the gist around them."""
    parts = []
    if overview:
        parts.append("Overview:\n" + "\n".join(f"- {o}" for o in overview))
    parts.append("Notes:\n" + ("\n".join(f"- {n}" for n in notes) if notes else "- (none)"))
    user = "\n\n".join(parts) + f"\n\nQuestion: {question}{_options_block(options)}\nShort answer:"
    return [ChatMessage("system", ANSWER_SYSTEM), ChatMessage("user", user)]


# -- multi-video articles (MARQUIS, seed 000) ---------------------------------------------
#
# Used only with a capable model (llm = openai, e.g. Qwen2.5 on vLLM): every reply is
# validated (JSON shape, citation numbers, support of each sentence by the claims it cites)
# and degrades to the extractive writers when it fails.

ARTICLE_SYSTEM = (
    "You write short factual reports from numbered evidence taken from video recordings. "
    "Use only the evidence. Every sentence must end with the numbers of the evidence items it "
    "rests on, in square brackets, like [2] or [1][4]. Do not add facts, names, numbers or "
    "causes that the evidence does not state. If items disagree, say so."
)


def numbered_evidence(items: list[str]) -> str:
    return "\n".join(f"[{i + 1}] {text}" for i, text in enumerate(items))


def article_user(request: str, items: list[str], sentences: str = "several") -> str:
    """CAG (one synthesis pass) and GINGER's per-cluster summaries."""
    return (
        f"Evidence:\n{numbered_evidence(items)}\n\n"
        f"Request: {request}\n"
        f"Write {sentences} sentences of a report that answers the request. Plain text, no "
        "headings, no list."
    )


def fluency_user(text: str) -> str:
    """GINGER's last pass: smoother prose, the same facts and the same [n] markers."""
    return (
        "Rewrite the report below so it reads as fluent connected prose. Keep every fact and "
        "keep each sentence's [n] markers on that sentence. Do not add anything.\n\n"
        f"Report:\n{text}"
    )
