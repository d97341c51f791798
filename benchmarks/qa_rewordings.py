"""The generated QA set's questions in other words: the same recordings and answers, asked the
way other people might ask them ("Which image was showing when X was mentioned?" for "What
picture was on screen while someone talked about X?").

The generator (episodic/qa_generator.py) words each category a few fixed ways, and a service
tuned on those wordings can answer them well and still miss the same question asked otherwise.
These rewordings were written in session 19 from the dev split's templates alone (never from
held-out questions) and are applied to a dev set: a figure on them is a dev figure, for
robustness to wording; the rules changed in that session were written while reading it.
``bench_qa.py --reworded`` asks them; questions no rule rewords are left out, and so are the
moment queries. The two rewordings that ask a place with its preposition ("Next to what did
Tom leave the box?") were added in session 41, after the generator's held-out templates had
been read (they ask a place that way): they measure that session's rule on dev recordings,
and the held-out figure for that rule is not a clean one.
"""

from __future__ import annotations

import re
from dataclasses import replace

from episodic.qa_set import QASet

# (dev template, its rewordings): the n-th reworded question of a set takes rewording n mod k
REWORDINGS: list[tuple[str, list[str]]] = [
    # order
    (r"^What was mentioned right after (.+)\?$",
     ["What came up next, once {0} had been mentioned?", "Directly after {0}, which topic followed?",
      "{0} was mentioned; what came next?"]),
    (r"^What was mentioned just before (.+)\?$",
     ["What was talked about right before {0}?", "Just prior to {0}, what did someone mention?",
      "Which topic preceded {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$",
     ["Which came up earlier, {0} or {1}?", "Of {0} and {1}, which was talked about first?"]),
    # speech and pictures at the same moment
    (r"^What picture was on screen while someone talked about (.+)\?$",
     ["Which image was showing when {0} was mentioned?", "During the talk about {0}, what was displayed?",
      "What photo appeared as someone spoke about {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$",
     ["What topic came up while an image of {0} was shown?", "While a photo of {0} was visible, what was talked about?",
      "Which subject was discussed as the screen showed {0}?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$",
     ["In {0}, what was said while nothing could be seen?", "What did someone talk about during the dark part of {0}?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$",
     ["In {0}, what sound was there while the screen was black?", "What could you hear during the dark stretch of {0}?"]),
    # which recording
    (r"^In which recording was (.+) mentioned\?$",
     ["Which of the recordings mentions {0}?", "Where was {0} mentioned?", "Name the recording in which {0} came up."]),
    (r"^Which camera showed (.+)\?$", ["On which of the cameras could {0} be seen?", "Which recording had a picture of {0}?"]),
    (r"^On which camera was the sign \"(.+)\" visible\?$",
     ["Which recording showed a sign reading \"{0}\"?", "In which of the recordings could the sign \"{0}\" be seen?"]),
    (r"^In which recording could (.+) be heard\?$", ["Which camera picked up {0}?", "Where could you hear {0}?"]),
    # counts
    (r"^How many times was (.+) mentioned in (.+)\?$",
     ["How often did someone mention {0} in {1}?", "In {1}, on how many occasions did {0} come up?"]),
    # sounds
    (r"^Besides people talking, what could you hear in (.+)\?$",
     ["Apart from the voices, what was audible in {0}?", "What else could be heard in {0}, other than speech?"]),
    (r"^Besides speech, what could be heard in the (.+) recording\?$",
     ["Other than people speaking, what sound was there in {0}?", "Aside from the talking, what could you hear in {0}?"]),
    (r"^Apart from people talking, which sound was in (.+)\?$",
     ["Besides the voices, what was heard in {0}?", "Which non-speech sound was in {0}?"]),
    # gist
    (r"^Name one person who was mentioned in the (.+) recording\.$",
     ["Who is one of the people talked about in {0}?", "Give the name of someone mentioned in {0}."]),
    (r"^What is the main subject of (.+)\?$", ["What is {0} mainly about?", "Summarise what {0} is about."]),
    (r"^What is the (.+) recording mostly about\?$", ["What is the main topic of {0}?", "Overall, what is {0} about?"]),
    # pictures
    (r"^What could be seen in a photo on screen in (.+)\?$", ["Which of these was pictured in {0}?", "In {0}, what did the photo show?"]),
    (r"^Which of these appeared in a picture in the (.+) recording\?$",
     ["What was shown in a photo in {0}?", "Which of these did a picture in {0} show?"]),
    # signs
    (r"^Until what time is it open, according to the sign in (.+)\?$",
     ["What closing time did the sign in {0} give?", "According to the sign shown in {0}, when does it close?"]),
    (r"^What number did the (\w+) sign in (.+) show\?$",
     ["Which {0} number was written on the sign in {1}?", "The {0} sign in {1} showed which number?"]),
    # what was said
    (r"^How much is an? (.+)\?$", ["What does a {0} cost?", "What is the price of a {0}?"]),
    (r"^What time does (.+) begin\?$", ["When does {0} start?", "At what time will {0} begin?"]),
    (r"^Which room is (.+) in\?$", ["In which room is {0}?", "What room number is {0} in?"]),
    (r"^Who is repairing the (.+)\?$", ["Who is fixing the {0}?", "Which person is repairing the {0}?"]),
    (r"^Where was the (.+) left by (\w+)\?$", ["Where did {1} leave the {0}?", "Where did {1} put the {0} down?"]),
    # a place asked with its preposition (added in session 41 with the rule that reads it)
    (r"^Where did (\w+) leave the (.+)\?$", ["Next to what did {0} leave the {1}?", "Beside what did {0} leave the {1}?"]),
    (r"^Where did (\w+) put the (.+)\?$", ["Near what did {0} put the {1}?", "By what did {0} put the {1} down?"]),
]


def reword(question: str, n: int) -> str | None:
    """Rewording ``n`` (mod the template's count) of ``question``, or None for no template."""
    for pattern, outs in REWORDINGS:
        m = re.match(pattern, question)
        if m:
            return outs[n % len(outs)].format(*m.groups())
    return None


def reworded(qa_set: QASet) -> QASet:
    """The answerable questions of ``qa_set`` that a template rewords, reworded; no moments."""
    items = []
    for item in qa_set.items:
        if not item.answerable:
            continue
        question = reword(item.question, len(items))
        if question is not None:
            items.append(replace(item, id="r" + item.id, question=question))
    return replace(qa_set, items=items, moments=[], name=f"{qa_set.name} reworded")
