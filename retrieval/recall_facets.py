"""Recall, the first step of fuzzy recall (issue 16; RACLO's Recall → Search → Verify): a
half-remembered description becomes facet queries, each with keywords and other hypotheses.

People remember a recording by RVMS-Bench's four facets: its global impression ("a cooking
vlog, cheerful"), a key moment ("a cat on the kitchen counter"), what came before or after it
or at the recording's start or end ("then they talked about the oven"), and what was heard
("someone said forty minutes"). Search and verification need each facet on its own: one
embedding of the whole description lands between them all.

**Explicit** facets of the :class:`RecallRequest` are taken as given (cleaned of filler). The
free text fills the facets not given, by **rules** (the default: deterministic, instant, never
inventing detail) or by a capable **model** asked for a JSON object that is validated
strictly, asked again once with the reason, then replaced by the rules; a failing model never
fails the request.
This module holds the facet queries and the rules; the model's way is
:mod:`retrieval.recall_model` and the request (explicit facets, the fallback, the checks)
:mod:`retrieval.recall_request`.

Rules: the text is cut at sentence ends, semicolons, "then", "after/before that", "while",
"when", "and" before a subject, and commas (a comma piece without a subject of its own and
without a concrete scene only continues the clause before: "a cooking vlog, cheerful"). A
clause with a before/after marker is *temporal* (relation "before"/"after" the key moment,
which it needs); one with sound words is *audio*, with relation "start"/"end" when it says "at
the start"/"at the end" (audio and temporal both may carry a relation); another start/end
clause is *temporal* ("start"/"end" of the recording); genre and whole-recording words make it
*global*, as do mood or occasion words unless it names a concrete place or action; what is
left is a *key moment*. A temporal relation of "" (an explicit temporal facet without marker)
means "next to the key moment, either side". "Before/after the cat jumped, X" and "X right
after the cat jumped" make the cat the key moment and X the temporal clue. A before/after clue
without a key moment takes the nearest sound clause as its moment ("a dog barked, then …").

Numbers: keywords hold digits, as :func:`query_analysis.tokens` folds number words ("forty" →
"40"), so they meet evidence tokenised the same way; the alternatives hold the text with the
number spelled the other way ("forty minutes" ↔ "40 minutes").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from episodic.core.query import FACET_NAMES, FacetName
from episodic.retrieval.query_analysis import COLOUR_WORDS, NUMBER_WORDS, STOPWORDS, tokens

MAX_ALTERNATIVES = 8  # per facet
RELATIONS = ("before", "after", "start", "end")
_TRIM = " \t,.;:!?-–—\"'()[]"


@dataclass
class FacetQuery:
    facet: FacetName
    text: str  # the clause as remembered, without filler or its temporal marker
    keywords: list[str]  # content words, lower case, in order, numbers as digits
    alternatives: list[str] = field(default_factory=list)  # other phrasings to search too
    # temporal/audio: before | after (the key moment), start | end (of the recording); a key
    # moment may carry start | end too ("it came late in the video")
    relation: str = ""


# -- lexicon (general-purpose, written for this module) ------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _pairs(text: str) -> dict[str, tuple[str, ...]]:
    """"cat=kitten,pet dog=puppy" → {"cat": ("kitten", "pet"), …}; "_" is a space."""
    pairs = (item.split("=") for item in text.split())
    return {word: tuple(alts.replace("_", " ").split(",")) for word, alts in pairs}


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("".join(parts), re.I)


# Verbs of remembering, perceiving and speaking: they say how it was met, not what it was.
_FILLER_WORDS = _words(
    "remember remembered recall think guess believe maybe probably saw see seen sees watched "
    "noticed heard hear hears said say says saying mention mentions mentioned talked talking "
    "talk talks spoke told tell um uh erm er oh okay ok clip video recording somewhere before "
    "after during while happened happens happen came comes appeared appears occurred part bit"
)
_AUDIO_WORDS = _words(
    "hear hears heard hearing listen listened said say says saying mention mentions mentioned "
    "talk talks talked talking spoke speak speaks speaking told tell tells telling voice voices "
    "narrator narration voiceover music musical song songs singing sang sing sings melody tune "
    "noise noises noisy sound sounds engine engines applause clapping clapped clap claps "
    "announced announce announces announcement quiet silence silent laugh laughed laughing "
    "laughter shout shouted shouting yelling yelled scream screamed whistle whistling bark "
    "barked barking siren bell bells ringing beeping beep cheering cheered"
)
_MOOD_WORDS = _words(
    "cheerful happy sad calm peaceful busy crowded relaxed relaxing funny hilarious serious "
    "dramatic tense scary creepy cosy cozy cute chaotic boring exciting energetic upbeat gloomy "
    "lively festive emotional romantic nostalgic birthday wedding party holiday vacation trip "
    "festival concert ceremony graduation picnic parade celebration christmas halloween"
)
_GENRE = _rx(
    r"\b(?:vlogs?|tutorials?|documentar(?:y|ies)|how-to|walkthrough|reviews?|unboxing|",
    r"interviews?|lectures?|podcasts?|tour\s+of|compilation|montage|trailer|livestream|",
    r"an?\s+(?:video|recording|clip|film|movie)\s+(?:about|of|on|from|where|showing|with)|",
    r"the\s+(?:whole|entire)\s+(?:thing|video|recording|clip)|overall|",
    r"the\s+(?:mood|tone|atmosphere|vibe)|(?:mostly|all)\s+about)\b",
)
_IT_WAS = _rx(r"\b(?:it|this)\s+was\s+(?:an?|so|very|really|quite|pretty|all|mostly)\b")
_CONCRETE = _rx(
    r"\b(?:on|under|behind|beside|next\s+to|near|inside|into|onto|in\s+front\s+of|",
    r"hold(?:s|ing)?|held|show(?:s|ing)?|point(?:s|ing|ed)?|pick(?:s|ed)?\s+up|jump(?:s|ed)?|",
    r"sit(?:s|ting)?|stand(?:s|ing)?|walk(?:s|ed|ing)?|open(?:s|ed)?|wav(?:es|ed|ing))\b",
)
# Before/after markers opening a clause ("then …", "before that …") or inside it ("… came
# after").
_LEAD = _rx(
    r"^(?:and\s+)?(?:then|after\s+that|afterwards?|later(?:\s+on)?|next|before\s+(?:that|this)|",
    r"(?:right|soon|just)\s+(?:after|before)(?:\s+that)?|earlier(?:\s+on)?|prior\s+to\s+that)\b[\s,]*",
)
_INNER = _rx(
    r"\b(?:(?:came|happened|comes|followed)\s+(?:right\s+|just\s+|soon\s+)?(?:after|before)",
    r"(?:wards?)?|(?:just|right)\s+(?:before|after)|before\s+that|afterwards?|earlier)\b",
)
_START = _rx(
    r"\b(?:(?:at|in|near|from)\s+the\s+(?:very\s+)?(?:start|beginning|opening)|at\s+first|",
    r"early\s+(?:in|on)|(?:it\s+)?(?:start|open|begin|began)(?:s|ed)?\s+with|the\s+opening",
    r"(?:\s+scene|\s+shot)?|intro)\b",
)
_END = _rx(
    r"\b(?:(?:at|towards?|near|by|in)\s+the\s+(?:very\s+)?end(?:ing)?|finally|late\s+in|",
    r"(?:it\s+)?end(?:s|ed)\s+with|the\s+(?:closing|final)\s+(?:scene|shot)|outro)\b",
)
# Leading filler and glue: "so I remember that", "there was", "it was", "while", "when".
_FILLER = _rx(
    r"^(?:um+|uh+|erm|er|so|and|but|also|well|like|oh|okay|ok|maybe|probably|somewhere|while|",
    r"when|i\s+(?:think|believe|guess)|i\s+(?:also\s+)?(?:remember|recall)(?:\s+that)?|",
    r"i\s+(?:also\s+)?(?:saw|see|heard|hear|noticed)|we\s+(?:saw|heard)|",
    r"you\s+(?:could\s+|can\s+)?(?:see|hear)|there\s+(?:was|were|is|are)|there's|",
    r"(?:it|this)\s+(?:showed|shows|had|has|was)|something\s+(?:like|about)|kind\s+of|",
    r"sort\s+of|at\s+one\s+point|(?:there\s+(?:was|is)\s+)?an?\s+moment\s+(?:with|when|where)|",
    r"the\s+(?:whole\s+|entire\s+)?(?:thing|video|recording|clip)\s+",
    r"(?:was|is|showed|shows|had))\b[\s,]*",
)
# "someone said X", "they talked about X": X is what to listen for.
_SPEECH = _rx(
    r"\b(?:said|says|say|saying|mention(?:s|ed|ing)?|announc(?:ed|es)|",
    r"(?:talk(?:s|ed|ing)?|spoke|speaking)\s+about|(?:told|tell(?:s|ing)?)\s+",
    r"(?:us|them|him|her|me|everyone))\s+(?:that\s+|something\s+(?:like|about)\s+|about\s+|",
    r"like\s+)?(?P<core>.+)$",
)
_SUBJECT = r"(?:i|we|you|someone|somebody|they|he|she|there|it|everyone)"
_SENTENCES = re.compile(r"(?<=[.!?])\s+|[;\n]+")
_CLAUSES = _rx(  # new clauses: "then", "after/before that", "while", "when", "and" + subject
    r"\s*,?\s*(?<!\band\s)(?<!\bjust\s)(?<!\bright\s)\b(?=(?:and\s+)?then\b|",
    r"(?:just\s+|right\s+)?(?:after|before)\s+that\b|while\b|when\b)|\s+and\s+(?=",
    _SUBJECT, r"\b)",
)
# "before the cat jumped, …" / "… after the cat jumped": the other side is the key moment.
_SUB_LEAD = _rx(r"^(?:just\s+|right\s+|soon\s+)?(before|after)\s+(?!that\b|this\b)(\S.*)$")
_SUB_MID = _rx(
    r"^(.+?)\s+(?:just\s+|right\s+|soon\s+)?(before|after)\s+",
    r"((?:the|a|an|someone|somebody|they|he|she|we|i|it|his|her|their)\b.+)$",
)
_OWN_SUBJECT = _rx(r"^(?:(?:and|so|but)\s+)?", _SUBJECT, r"\b")

# Everyday synonyms and broader words, to search as well: general, not tuned to any data.
_SYNONYMS = _pairs("""
    cat=kitten,pet kitten=cat dog=puppy,pet puppy=dog car=vehicle truck=lorry,vehicle bus=vehicle
    bike=bicycle bicycle=bike motorbike=motorcycle kid=child kids=children child=kid baby=infant
    phone=smartphone,mobile laptop=computer tv=television sofa=couch couch=sofa counter=worktop
    oven=stove stove=oven cup=mug mug=cup shop=store store=shop road=street street=road sea=ocean
    ocean=sea movie=film film=movie vlog=video_blog music=song,melody song=music singing=song
    applause=clapping clapping=applauding noise=sound talk=say,mention talked=said,mentioned
    talking=saying said=mentioned,told mentioned=said cheerful=happy happy=cheerful calm=peaceful
    busy=crowded crowded=busy birthday=party party=celebration food=meal meal=food map=chart
    sign=signboard bird=animal""")
_DETERMINERS = _words(
    "a an the some two three four five six seven eight nine ten his her their my our your this "
    "that these those several many few"
)
_ADJECTIVES = COLOUR_WORDS | _words(
    "big small little large huge tiny old new young tall short long wide narrow round empty"
)
# Words that may follow a head noun ("a cat on …", "a sign near …", "a dog and …").
_AFTER_NOUN = _words(
    "on in at by for with from into onto over under about of to and or but near behind beside "
    "next inside outside across along towards toward while when that which who"
)
_NUMBER_RUN = _rx(
    r"\b(?:", "|".join(NUMBER_WORDS), r")(?:[\s-]+(?:and\s+)?(?:", "|".join(NUMBER_WORDS), r"))*\b"
)
_DIGIT_WORD = {v: k for k, v in NUMBER_WORDS.items()}


# -- clauses --------------------------------------------------------------------------------


def split_clauses(text: str) -> list[tuple[str, bool]]:
    """The free text's clauses in order, each with whether it only continues the one before
    (it followed a comma and has no subject of its own: "a cooking vlog, cheerful")."""
    out: list[tuple[str, bool]] = []
    carry = ""  # a marker alone before a comma ("Before that, they …") opens the next piece
    for sentence in _SENTENCES.split(text):
        for clause in _CLAUSES.split(sentence):
            for i, piece in enumerate(clause.split(",")):
                piece = " ".join(piece.split()).strip(_TRIM)
                if not piece:
                    continue
                if _LEAD.search(piece) and not _strip(_LEAD, _strip(_FILLER, piece)):
                    carry = f"{carry} {piece}".strip()
                    continue
                if carry:
                    piece, carry = f"{carry} {piece}", ""
                    out.append((piece, False))
                    continue
                out.append((piece, i > 0 and not _OWN_SUBJECT.search(piece)))
    return out


def _strip(pattern: re.Pattern[str], text: str) -> str:
    prev = None
    while prev != text:  # "so then I remember that …": several in a row
        prev = text
        text = pattern.sub("", text, count=1).strip(_TRIM)
    return text


def _relation(clause: str) -> str:
    lead = _strip(_FILLER, clause)
    marker = _LEAD.search(lead) or _INNER.search(lead)
    if marker:
        return "before" if re.search(r"before|earlier|prior", marker.group(), re.I) else "after"
    if _START.search(lead):
        return "start"
    return "end" if _END.search(lead) else ""


# "a sign that said …", "a board reading …": words that were read, not heard
_WRITTEN = _rx(
    r"\b(?:sign|signs|board|poster|banner|slide|label|card|screen|notice|note|placard|caption|",
    r"title|menu|headline)\s+(?:\w+\s+){0,2}?(?:that\s+|which\s+)?(?:said|says|saying|read|reads|reading)\b",
)


def classify(clause: str) -> tuple[FacetName, str]:
    """A clause's facet and relation (the rules of the module doc). A genre named before any
    sound word wins over it ("a cooking vlog with music" is an impression)."""
    relation = _relation(clause)
    words = tokens(clause)
    audio_at = None if _WRITTEN.search(clause) else next(
        (i for i, w in enumerate(words) if w in _AUDIO_WORDS), None)
    genre = _GENRE.search(clause)
    genre_at = len(tokens(clause[: genre.start()])) if genre else None
    if relation in ("before", "after"):
        return "temporal", relation
    if genre_at is not None and (audio_at is None or genre_at < audio_at):
        return "global", ""
    if audio_at is not None:
        return "audio", relation
    if relation:
        return "temporal", relation
    moody = any(w in _MOOD_WORDS for w in words) or _IT_WAS.search(clause)
    return ("global", "") if moody and not _CONCRETE.search(clause) else ("key_moment", "")


def clean(text: str, facet: FacetName) -> str:
    """The clause without filler, temporal markers or (audio) the speech verb before what was
    said: "I heard someone say forty minutes at the end" → "forty minutes"."""
    text = _strip(_FILLER, _strip(_LEAD, _strip(_FILLER, " ".join(text.split()))))
    if facet in ("temporal", "audio"):
        text = _START.sub(" ", _END.sub(" ", _INNER.sub(" ", text)))
        text = _strip(_FILLER, " ".join(text.split()))
    said = _SPEECH.search(text) if facet == "audio" else None
    if said and keywords_of(said.group("core")):
        text = said.group("core").strip(_TRIM)
    return " ".join(text.split())


def keywords_of(text: str) -> list[str]:
    """Content words in order without repeats: no function words, no remembering, perceiving
    or speaking verbs; number words as digits ("one" alone is a pronoun and is dropped)."""
    digit_one = re.search(r"\b1\b", text) is not None
    out: list[str] = []
    for tok in tokens(text):
        if tok in STOPWORDS or tok in _FILLER_WORDS or (len(tok) < 2 and not tok.isdigit()):
            continue
        if (tok != "1" or digit_one) and tok not in out:
            out.append(tok)
    return out


# -- alternatives ---------------------------------------------------------------------------


def _number_in_words(digits: str) -> str | None:
    if digits in _DIGIT_WORD:
        return _DIGIT_WORD[digits]
    if 20 < int(digits) < 100:
        return f"{_DIGIT_WORD[digits[0] + '0']}-{_DIGIT_WORD[digits[1]]}"
    return None


def _is_head_noun(word: str, head: str, tail: str) -> bool:
    """Whether ``word`` ends a noun phrase opened by a determiner, with at most one adjective
    between ("a cat on", "a red sign near"): a cautious guess, for a verb ("a cat sat on")
    must not be put in the plural."""
    if not word.isalpha() or len(word) < 3 or word in STOPWORDS or word in _MOOD_WORDS:
        return False
    if word.endswith(("ing", "ed", "ly", "us", "ss")):
        return False
    following = re.match(r"\s*([A-Za-z]+)", tail)
    if following and following.group(1).lower() not in _AFTER_NOUN:
        return False
    before = [w.lower() for w in re.findall(r"[A-Za-z]+|\d+", head)[-2:]]
    if before and (before[-1] in _DETERMINERS or before[-1].isdigit()):
        return True
    return len(before) == 2 and before[0] in _DETERMINERS and (
        before[1] in _ADJECTIVES or before[1].endswith(("ful", "ous", "ish")))


def _other_number(head: str, word: str, tail: str) -> str:
    """The phrase with ``word`` singular if it was plural, plural if it was singular."""
    if word.endswith("ies"):
        return head + word[:-3] + "y" + tail
    if re.search(r"(?:ch|sh|x|z|ss)es$", word):
        return head + word[:-2] + tail
    if word.endswith("s"):
        return head + word[:-1] + tail
    head = re.sub(r"\b(?:a|an)\s+((?:[A-Za-z]+\s+)?)$", r"\1", head, flags=re.I)  # "a cat"
    if re.search(r"[^aeiou]y$", word):
        return head + word[:-1] + "ies" + tail
    return head + word + ("es" if re.search(r"(?:ch|sh|x|z|s)$", word) else "s") + tail


def _swap(head: str, word: str, tail: str) -> str:
    """``word`` between ``head`` and ``tail``, with "a"/"an" before it agreeing ("an animal")."""
    article = re.search(r"\b(an?)\s+$", head, re.I)
    if article:
        wanted = "an" if word[:1].lower() in "aeiou" else "a"
        wanted = wanted.capitalize() if article.group(1)[0].isupper() else wanted
        head = head[: article.start(1)] + wanted + head[article.end(1) :]
    return head + word + tail


def alternatives_of(text: str) -> list[str]:
    """Other phrasings of ``text``, one change each: synonyms and broader words first, then
    numbers spelled the other way, then head nouns in the other number."""
    synonyms: list[str] = []
    numbers: list[str] = []
    plurals: list[str] = []
    for m in re.finditer(r"[A-Za-z]+|\d+", text):
        word, head, tail = m.group().lower(), text[: m.start()], text[m.end() :]
        synonyms += [_swap(head, alt, tail) for alt in _SYNONYMS.get(word, ())]
        if word.isdigit() and (spelled := _number_in_words(word)):
            numbers.append(head + spelled + tail)
        if _is_head_noun(word, head, tail):
            plurals.append(_other_number(head, m.group(), tail))
    for run in _NUMBER_RUN.finditer(text):
        folded = tokens(run.group())
        if run.group().lower() != "one" and len(folded) == 1 and folded[0][:1].isdigit():
            numbers.append(text[: run.start()] + folded[0] + text[run.end() :])
    out = [" ".join(a.split()) for a in synonyms + numbers + plurals]
    return [a for a in dict.fromkeys(out) if a.lower() != text.lower()][:MAX_ALTERNATIVES]


# -- facets ---------------------------------------------------------------------------------


def facet_query(facet: FacetName, text: str, relation: str = "",
                extra: list[str] | None = None) -> FacetQuery | None:
    """A facet query from one clause, or None when it has no content words. Temporal and audio
    clauses take their relation from their markers when none is given."""
    if not relation and facet in ("temporal", "audio"):
        relation = _relation(text)
        if facet == "audio" and relation in ("before", "after"):
            relation = ""  # a heard thing is placed in the recording, not against the moment
    cleaned = clean(text, facet)
    words = keywords_of(cleaned)
    if not words:
        return None
    alts = [a for a in (extra or []) if a.lower() != cleaned.lower()] + alternatives_of(cleaned)
    return FacetQuery(facet, cleaned, words, list(dict.fromkeys(alts))[:MAX_ALTERNATIVES], relation)


def _join(parts: list[FacetQuery]) -> FacetQuery:
    """Clauses of one facet as one query; the first relation given wins."""
    return FacetQuery(
        parts[0].facet,
        "; ".join(p.text for p in parts),
        list(dict.fromkeys(w for p in parts for w in p.keywords)),
        list(dict.fromkeys(a for p in parts for a in p.alternatives))[:MAX_ALTERNATIVES],
        next((p.relation for p in parts if p.relation), ""),
    )


# "I'm looking for X", "I'm after X", "some recording, X": X is what the whole recording was.
_REQUEST = _rx(
    r"^\s*(?:(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:after|looking\s+for|searching\s+for|",
    r"trying\s+to\s+find)|looking\s+for|(?:i\s+)?(?:want|need)\s+to\s+find|",
    r"find\s+(?:me\s+)?|(?:some|a|the|that|this)\s+(?:recording|video|clip)\s*,)\s+(?P<what>.+)$",
)
# "… where there's a sign", "… in which someone …": the rest is a moment inside it
_WHERE = _rx(
    r"\s+(?:where|in\s+which|with\s+a\s+(?:moment|part|bit|scene)\s+(?:where|when|with))\s+",
    r"(?=(?:there|someone|somebody|they|you|a|an|the|he|she|it)\b)",
)


def _requests(description: str) -> tuple[list[str], str]:
    """The whole-recording impressions introduced by a request phrase, and the rest of the
    text (what follows "where …" in such a sentence stays there as a clause of its own)."""
    impressions: list[str] = []
    rest: list[str] = []
    for sentence in _SENTENCES.split(description):
        m = _REQUEST.match(sentence)
        if m is None:
            rest.append(sentence)
            continue
        what, *inside = _WHERE.split(m.group("what"), maxsplit=1)
        impressions.append(what)
        rest += [x.strip() for x in inside if x.strip()]
    return impressions, " ".join(x if re.search(r"[.!?]$", x) else x + "." for x in rest if x.strip())


# "a busy market with a sign about tomatoes somewhere in it": the impression holds a moment
# (also a clause: "a science video with what Saturn's rings are made of somewhere in it")
_WITH_MOMENT = _rx(
    r"^(?P<whole>.+?)\s+with\s+(?P<moment>(?:a|an|the|some|someone|somebody|people|two|three"
    r"|what|where|how|who|when|why)\b.+?)",
    r"(?:\s+(?:somewhere\s+in\s+(?:it|there)|at\s+some\s+point|in\s+it))?$",
)


def _moment_inside(clauses: list[tuple[FacetName, str, str]]) -> None:
    """Split a global impression that carries a moment ("… with a sign advertising fresh
    tomatoes somewhere in it") into the impression and a key moment, when there is no other
    key moment and the moment part names something seen (two content words, no sound)."""
    if any(c[0] == "key_moment" for c in clauses):
        return
    for i, (facet, _, clause) in enumerate(clauses):
        if facet != "global":
            continue
        parts = _WHERE.split(clause, maxsplit=1)
        m = None if len(parts) > 1 else _WITH_MOMENT.match(clause)
        whole, moment = (parts[0], parts[1]) if len(parts) > 1 else (
            (m.group("whole"), m.group("moment")) if m else ("", ""))
        if moment and len(keywords_of(moment)) >= 2 and not set(tokens(moment)) & _AUDIO_WORDS:
            clauses[i] = ("global", "", whole)
            clauses.insert(i + 1, ("key_moment", "", moment))
            return


def rule_facets(description: str, notes: list[str], has_key_moment: bool = False,
                ) -> dict[str, FacetQuery]:
    """The free text's facets by the rules, clauses of one facet joined. A before/after clue
    without a key moment (nor an explicit one, ``has_key_moment``) takes the nearest sound
    clause as its moment: in "a dog barked, then they left" the bark is the anchor."""
    impressions, description = _requests(description)
    clauses: list[tuple[FacetName, str, str]] = [("global", "", x) for x in impressions]
    pieces = split_clauses(description)
    for n, (clause, continues) in enumerate(pieces):
        mid = _SUB_MID.search(clause)
        if mid and not (_SUB_LEAD.search(clause) or _SPEECH.search(mid.group(1))
                        or _GENRE.search(mid.group(1))):  # not "said they left after the party"
            clauses += [("temporal", mid.group(2).lower(), mid.group(1)),
                        ("key_moment", "", mid.group(3))]
            continue
        if (sub := _SUB_LEAD.search(clause)) and n + 1 < len(pieces):
            clauses.append(("key_moment", "", sub.group(2)))
            pieces[n + 1] = ("after that " if sub.group(1).lower() == "after" else
                             "before that ") + pieces[n + 1][0], False
            continue
        facet, relation = classify(clause)
        if continues and clauses and facet == "key_moment" and not _CONCRETE.search(clause):
            facet, relation = clauses[-1][:2]  # "someone said forty, maybe forty-five"
        clauses.append((facet, relation, clause))
    if not has_key_moment:
        _moment_inside(clauses)
    kinds = [c[0] for c in clauses]
    heard = [i for i, k in enumerate(kinds) if k == "audio"]
    if not has_key_moment and "key_moment" not in kinds and len(heard) >= 2:
        # two things heard and no moment seen: the one not quoted as speech is the moment
        # ("an announcement about platform nine. Someone said two hours.")
        first = next((i for i in heard if not _SPEECH.search(clauses[i][2])
                      and any(w in _AUDIO_WORDS for w in tokens(clauses[i][2]))), None)
        if first is not None:
            clauses[first] = ("key_moment", clauses[first][1], clauses[first][2])
            kinds[first] = "key_moment"
    anchored = [i for i, c in enumerate(clauses) if c[1] in ("before", "after")]
    if anchored and not has_key_moment and "key_moment" not in kinds:
        i = anchored[0]
        order = [*range(i - 1, -1, -1), *range(i + 1, len(kinds))]  # nearest before, then after
        if near := [j for j in order if kinds[j] == "audio"]:
            clauses[near[0]] = ("key_moment", "", clause := clauses[near[0]][2])
            notes.append(f"taken as the key moment of the before/after clue: {clause!r}")
    grouped: dict[str, list[FacetQuery]] = {}
    position = ""  # "it came late in the video": where the key moment was, nothing else
    for facet, relation, clause in clauses:
        if (query := facet_query(facet, clause, relation)) is not None:
            grouped.setdefault(facet, []).append(query)
        elif relation in ("start", "end"):
            position = relation
    out = {name: _join(grouped[name]) for name in FACET_NAMES if name in grouped}
    if position and "key_moment" in out and not out["key_moment"].relation:
        out["key_moment"].relation = position
    return out
