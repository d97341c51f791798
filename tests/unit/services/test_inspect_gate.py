"""Which questions the offline eyes are worth asking (the inspect pathway's gate): writing on
screen, read by OCR; not a kitchen's cutting board, which looking again for 6 s never read."""

from __future__ import annotations

import pytest

from episodic.services.qa import about_writing


@pytest.mark.parametrize("question, writing", [
    ("Which plot number was shown on a sign in garden-cam?", True),
    ("What did the departure board show?", True),
    ("What was written on the whiteboard?", True),
    ("What was on the notice board?", True),
    ("Which person is fixing the cutting board?", False),
    ("Where did Tom leave the cutting board?", False),
    ("Who is on the board of the museum?", False),
    ("Where did Sofia put the reading lamp?", False),
])
def test_writing_on_screen_is_told_from_things_called_board(question, writing):
    assert about_writing(question) is writing
