"""A recall request → its facet queries: explicit facets as given, the free text filling the
rest by the model (:mod:`retrieval.recall_model`) or the rules (:mod:`retrieval.recall_facets`),
and the checks that refuse a request naming nothing to look for. It sits above both ways of
reading a description, so neither needs the other."""

from __future__ import annotations

from dataclasses import dataclass, field

from episodic.core.errors import InputError
from episodic.core.llm import LanguageModel
from episodic.core.query import FACET_NAMES, RecallRequest
from episodic.retrieval.recall_facets import FacetQuery, _relation, facet_query, rule_facets
from episodic.retrieval.recall_model import model_facets

MAX_FIELD_CHARS = 2000  # per request field


@dataclass
class ParsedDescription:
    facets: dict[str, FacetQuery]  # at most one per facet name, in FACET_NAMES order
    source: str  # "explicit" | "rules" | "model": what made the facets
    notes: list[str] = field(default_factory=list)


_FIELDS = (("global_impression", "global"), ("key_moment", "key_moment"),
           ("temporal", "temporal"), ("audio", "audio"))


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def parse_description(req: RecallRequest, llm: LanguageModel | None = None,
                      use_model: bool = False) -> ParsedDescription:
    """The facet queries of a recall request: explicit facets as given, the free text filling
    the rest (by the model when ``use_model`` and one is given, else by the rules). Raises
    InputError for a request that names nothing to look for."""
    values: dict[str, str] = {}
    for attr in ("description", *(a for a, _ in _FIELDS)):
        value = getattr(req, attr)
        if not isinstance(value, str):
            raise InputError(f"recall: {attr} must be text, not {type(value).__name__}")
        if len(value) > MAX_FIELD_CHARS:
            raise InputError(f"recall: {attr} is {len(value)} characters; "
                             f"at most {MAX_FIELD_CHARS}")
        values[attr] = value.strip()
    if not any(values.values()):
        raise InputError("recall: nothing to look for; give a description or at least one facet "
                         "(global impression, key moment, temporal context or audio)")
    notes: list[str] = []
    facets: dict[str, FacetQuery] = {}
    position = ""  # an explicit temporal clue that only places the key moment ("late in it")
    for attr, name in _FIELDS:
        if values[attr]:
            query = facet_query(name, values[attr])
            if query is None and name == "temporal" and values["key_moment"]:
                position = _relation(values[attr])
                if position in ("start", "end"):
                    notes.append(f"the temporal clue places the key moment at the {position}")
                    continue
            if query is None:
                raise InputError(f"recall: the {attr.replace('_', ' ')} {_quote(values[attr])} "
                                 "names nothing to look for (no content words)")
            facets[name] = query
    if position in ("start", "end") and not facets["key_moment"].relation:
        facets["key_moment"].relation = position
    source = "explicit"
    if description := values["description"]:
        free = None
        if use_model and llm is None:
            notes.append("no language model was given; rules used")
        elif use_model and llm is not None:
            free = model_facets(description, llm, notes)
        kind = "rules" if free is None else "model"
        if free is None:
            free = rule_facets(description, notes, "key_moment" in facets)
        if not free and not facets:
            raise InputError(f"recall: the description {_quote(description)} names nothing to "
                             "look for; describe something seen or heard in the recording")
        if not free:
            notes.append("the description added no facet")
        for name, query in free.items():
            if name in facets:
                notes.append(f"the explicit {name} facet replaces the description's {query.text!r}")
            else:
                facets[name], source = query, kind
    temporal = facets.get("temporal")
    if (temporal and temporal.relation in ("before", "after", "") and "key_moment" not in facets
            and not values["temporal"]):
        # the free text's before/after clue has nothing to be before or after: search it as
        # the moment itself rather than refuse what a person wrote
        facets["key_moment"] = FacetQuery("key_moment", temporal.text, temporal.keywords,
                                          temporal.alternatives)
        del facets["temporal"]
        notes.append(f"no key moment for the before/after clue {temporal.text!r}: "
                     "searched as the moment itself")
        temporal = None
    if temporal and temporal.relation in ("before", "after", "") and "key_moment" not in facets:
        raise InputError(f"recall: the before/after clue {_quote(temporal.text)} needs a key "
                         "moment to be before or after; describe that moment too (--key-moment)")
    return ParsedDescription({n: facets[n] for n in FACET_NAMES if n in facets}, source, notes)
