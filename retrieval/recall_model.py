"""Recall's facets by a capable (OpenAI-compatible) model: the prompt, the strict check of its
JSON reply and one corrective retry. Split from :mod:`retrieval.recall_facets` (the rules and
the facet queries they share) because talking to a model and validating what it says is an
idea of its own; :mod:`retrieval.recall_request` falls back to the rules whenever this gives
nothing usable."""

from __future__ import annotations

import logging

from episodic.core.llm import ChatMessage, LanguageModel, json_in_reply
from episodic.core.query import FACET_NAMES
from episodic.retrieval.recall_facets import RELATIONS, FacetQuery, facet_query

log = logging.getLogger(__name__)

MAX_MODEL_CHARS = 200  # per string in the model's reply

RECALL_SYSTEM = (
    "Someone is trying to find a recording they only half remember. Sort the clues in their "
    "description into up to four kinds and reply with one JSON object, nothing else, with "
    'these keys: "global": what the whole recording was like (its kind, topic, mood or '
    'occasion), or null; "key_moment": one concrete thing seen at some moment, or null; '
    '"temporal": {"text": what happened, "relation": "before" or "after" (that moment) or '
    '"start" or "end" (of the recording)}, or null; "audio": what was heard (the words said, '
    'music, sounds), or null; "alternatives": an object from those key names to lists of other '
    "ways to say that clue (synonyms, broader words, likely misrememberings). Use their own "
    "words where you can, keep every string under 200 characters and add nothing they did "
    "not say."
)


def recall_user(description: str) -> str:
    return f"Description: {description}\n\nJSON object:"


def parse_model_reply(reply: str) -> tuple[dict[str, tuple[str, str, list[str]]], str]:
    """The model's clues as facet → (text, relation, alternatives), or ({}, why not). A
    ```json fence, prose around the object and unknown keys are tolerated; wrong types,
    over-long strings and unknown relations are not."""
    obj = json_in_reply(reply, dict)
    if obj is None:
        return {}, "was not valid JSON"

    def is_text(value: object) -> bool:
        return isinstance(value, str) and len(value) <= MAX_MODEL_CHARS

    out: dict[str, tuple[str, str, list[str]]] = {}
    for name in ("global", "key_moment", "audio"):
        value = obj.get(name)
        if value is not None and not is_text(value):
            return {}, f'gave "{name}" that is neither null nor a string of at most 200 characters'
        if value and value.strip():
            out[name] = (value, "", [])
    temporal = obj.get("temporal")
    if temporal is not None:
        if not (isinstance(temporal, dict) and is_text(temporal.get("text"))
                and temporal.get("relation") in RELATIONS):
            return {}, 'gave "temporal" that is neither null nor {"text", "relation"} as asked'
        if temporal["text"].strip():
            out["temporal"] = (temporal["text"], temporal["relation"], [])
    alternatives = obj.get("alternatives") or {}
    if not isinstance(alternatives, dict):
        return {}, 'gave "alternatives" that is not an object'
    for name, items in alternatives.items():
        if name in FACET_NAMES and not (isinstance(items, list) and all(map(is_text, items))):
            return {}, f'gave "alternatives.{name}" that is not a list of short strings'
        if name in out:
            out[name][2].extend(x.strip() for x in items if x.strip())
    return (out, "") if out else ({}, "named no clue")


def model_facets(description: str, llm: LanguageModel, notes: list[str],
                 ) -> dict[str, FacetQuery] | None:
    """The free text's facets by the model, or None (with a note) when it gave none usable."""
    messages = [ChatMessage("system", RECALL_SYSTEM), ChatMessage("user", recall_user(description))]
    why = ""
    for attempt in range(2):
        try:
            reply = str(llm.generate(messages, max_tokens=400, temperature=0.0, seed=attempt))
        except Exception as exc:  # whatever the model does, the rules can answer
            log.warning("recall facets: the model failed (%s); using the rules", exc)
            notes.append(f"the model failed ({exc}); rules used")
            return None
        parsed, why = parse_model_reply(reply)
        facets = {name: q for name in FACET_NAMES if name in parsed
                  and (q := facet_query(name, *parsed[name])) is not None}
        if facets:
            return facets
        why = why or "named no clue with content words"
        log.warning("recall facets: model reply %d %s", attempt + 1, why)
        messages += [ChatMessage("assistant", reply), ChatMessage(
            "user", f"That reply {why}. Answer again with only the JSON object described.")]
    notes.append(f"the model's reply {why}; rules used")
    return None
