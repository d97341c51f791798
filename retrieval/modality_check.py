"""Letting the memory correct a question's modality: what was only ever *said* is not looked
for among key frames.

The question classifier (retrieval/query_analysis.py) reads words: "which colour is the
watering can…", "who is fixing the wheelbarrow?", "in what room is the flower show?" carry
visual cues (a colour, an action, "show") and are typed VIDEO, so detailed recall searches
key-frame vectors only. On the embedded default a key frame rarely names a thing (memory/
vision.py says a word only when nearly sure), while the transcript does: a spoken fact then
goes unfound. HippoMM's query analysis picks the pathway from the question alone; here a
cheap probe over every modality (one more nearest-neighbour search, tens of milliseconds)
checks where the things the question is about actually occur. When they occur in speech
and in no frame description or on-screen text, the question is about something said, unless
it asks in so many words what was shown ("picture", "photo", "shown", "appeared", "on screen").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from episodic.core.query import QueryType
from episodic.retrieval.detailed import Recall, Unit
from episodic.retrieval.guess_match import asks_what_was_shown
from episodic.retrieval.query_analysis import QueryAnalysis, term_set


def said_not_seen(things: Sequence[str], units: Sequence[Unit]) -> bool:
    """Whether some speech unit holds one of ``things`` (stems) and no visual or on-screen text
    unit holds any of them."""
    wanted = set(things)
    if not wanted:
        return False
    said = seen = False
    for u in units:
        hit = bool(wanted & (u.terms | u.fuzzy_terms))
        if not hit:
            continue
        if u.modality == "speech":
            said = True
        elif u.modality in ("visual", "ocr"):
            seen = True
    return said and not seen


def retype_by_evidence(
    analysis: QueryAnalysis, probe: Callable[[QueryAnalysis], Recall]
) -> QueryAnalysis:
    """``analysis`` typed AUDIO when it is a VIDEO question about things only said (see the
    module doc), else unchanged. ``probe`` recalls units for an analysis over all modalities."""
    if analysis.query_type is not QueryType.VIDEO or analysis.asks_text:
        return analysis
    if asks_what_was_shown(analysis):
        # "Which camera showed a cup of coffee?" asks what was seen, in so many words: that
        # coffee was said somewhere ("Ravi ordered 17 coffees") does not make it a sighting
        return analysis
    things = analysis.object_terms
    if not things:
        return analysis
    recall = probe(replace(analysis, query_type=QueryType.SUMMARY))
    if not said_not_seen(things, recall.units):
        return analysis
    return replace(
        analysis,
        query_type=QueryType.AUDIO,
        why=f"{analysis.why}; evidence: {', '.join(things)} said, never seen → audio",
    )


def without_place_words(analysis: QueryAnalysis, stream_id: str | None) -> QueryAnalysis:
    """``analysis`` without the words of the stream its question names among the things it
    asks about: "…a picture in the library-cam recording" says where, not what about, and
    "library" said in that stream ("the library card") would make it a question about speech."""
    if not stream_id or not analysis.object_terms:
        return analysis
    place = term_set(stream_id.replace("-", " ").replace("_", " "))
    kept = [t for t in analysis.object_terms if t not in place]
    return analysis if kept == analysis.object_terms else replace(analysis, object_terms=kept)
