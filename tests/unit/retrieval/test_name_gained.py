"""A person's name heard again where ingest heard no one (retrieval/listen_targets.py
``name_gained``, used by retrieval/relisten.py).

End to end (slow): a generated recording says "Tom wants the library card to be purple."; its
stored words are overwritten with a hearing that lost the name ("Someone's the library card to
the purple."). "Name one person who was mentioned in the library recording." names no one in
the memory's words and adds no word of the question, yet re-listening must hear Tom and answer
with him; a recording that names no one must still be answered with a refusal, not a name.
"""

from __future__ import annotations

import pytest

from episodic.config import load_settings
from tests.misheard_audio import misheard_recording

GARBLED = "Someone's the library card to the purple."
QUESTION = "Name one person who was mentioned in the {stream} recording."


@pytest.fixture(scope="module")
def components(tmp_path_factory):
    from episodic.components import Components

    c = Components(load_settings(data_dir=tmp_path_factory.mktemp("name-gained") / "data"))
    yield c
    c.close()


def _ask(components, stream: str):
    from episodic import api_convert
    from episodic.services.qa import MemoryQA

    qa = MemoryQA(components, warm_after_request=False)
    qa.prepare()
    return qa.ask(api_convert.ask_request(QUESTION.format(stream=stream), [], [stream], None, None, 5))


@pytest.mark.slow
def test_a_name_lost_by_ingest_is_heard_again_for_a_question_about_people(components, tmp_path):
    misheard_recording(components, tmp_path, "library", "Tom wants the library card to be purple.", GARBLED)
    result = _ask(components, "library")
    assert result.answer.startswith("Tom"), result.answer


@pytest.mark.slow
def test_no_name_is_invented_where_the_audio_says_none(components, tmp_path):
    misheard_recording(components, tmp_path, "reading", "Someone wants the library card to be purple.", GARBLED,
                       tint=(150, 90, 120))
    result = _ask(components, "reading")
    assert result.confidence == 0.0 and "nothing" in result.answer.lower(), result.answer
