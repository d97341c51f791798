"""Several recalled clips heard in one recogniser pass (retrieval/joint_hearing.py): the clips
laid end to end with silence between them, and every word the recogniser wrote put back into
the clip it was heard in, in that clip's stream time."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.records import TranscriptPiece
from episodic.retrieval.joint_hearing import Clip, join_clips, split_pieces
from episodic.retrieval.listen_targets import _words_added, without_cut_off_sentence

SR = 16_000


def _clips() -> list[Clip]:
    # 2 s of memory A from stream time 10 s, 3 s of memory B from 40 s, 1 s of C from 100 s
    return [Clip("a", 10.0, np.full(2 * SR, 0.1, np.float32)),
            Clip("b", 40.0, np.full(3 * SR, 0.2, np.float32)),
            Clip("c", 100.0, np.full(SR, 0.3, np.float32))]


def test_clips_are_laid_end_to_end_with_silence_between() -> None:
    joined = join_clips(_clips(), SR, gap_s=0.5)
    assert joined.offsets == pytest.approx((0.0, 2.5, 6.0))
    assert joined.durations == pytest.approx((2.0, 3.0, 1.0))
    assert joined.audio.size == 7 * SR
    assert np.all(joined.audio[2 * SR: int(2.5 * SR)] == 0.0)  # the gap is silent
    assert joined.audio[int(2.6 * SR)] == pytest.approx(0.2)  # B's own samples follow it
    assert join_clips([], SR).audio.size == 0


def test_each_word_goes_back_to_its_clip_in_stream_time() -> None:
    clips = _clips()
    joined = join_clips(clips, SR, gap_s=0.5)
    # one piece the recogniser wrote over A and B (it did not stop at the gap), one over C
    pieces = [
        TranscriptPiece(0.2, 5.0, "Tom ordered ropes. The egg costs 42.",
                        words=[(0.2, 0.6, "Tom"), (0.6, 1.2, "ordered"), (1.2, 1.9, "ropes."),
                               (2.6, 2.9, "The"), (2.9, 3.3, "egg"), (3.3, 3.9, "costs"), (4.0, 5.0, "42.")]),
        TranscriptPiece(6.1, 6.9, "Room 104.", words=[(6.1, 6.4, "Room"), (6.4, 6.9, "104.")]),
    ]
    a, b, c = split_pieces(pieces, clips, joined)
    assert [p.text for p in a] == ["Tom ordered ropes."]
    assert a[0].t_start == pytest.approx(10.2) and a[0].t_end == pytest.approx(11.9)
    assert [p.text for p in b] == ["The egg costs 42."]
    assert b[0].t_start == pytest.approx(40.1) and b[0].t_end == pytest.approx(42.5)
    assert b[0].words[0][2] == "The" and b[0].words[0][0] == pytest.approx(40.1)
    assert [p.text for p in c] == ["Room 104."]
    assert c[0].t_start == pytest.approx(100.1)


def test_a_word_timed_into_a_gap_goes_to_the_nearest_clip_and_one_without_words_by_its_middle() -> None:
    clips = _clips()
    joined = join_clips(clips, SR, gap_s=0.5)
    pieces = [
        # "ropes" runs 0.1 s past A's end (2.0) into the gap: still A's; "yes" sits late in the
        # gap, nearer B
        TranscriptPiece(1.0, 2.45, "more ropes yes", words=[(1.0, 1.5, "more"), (1.6, 2.2, "ropes"), (2.4, 2.48, "yes")]),
        TranscriptPiece(6.2, 6.8, "Room 104."),  # no word times: C holds its middle
    ]
    a, b, c = split_pieces(pieces, clips, joined)
    assert [p.text for p in a] == ["more ropes"]
    assert a[0].t_end == pytest.approx(12.0)  # clamped to the clip's own audio
    assert [p.text for p in b] == ["yes"] and b[0].t_start == pytest.approx(40.0)
    assert [(p.text, round(p.t_start, 2), round(p.t_end, 2)) for p in c] == [("Room 104.", 100.2, 100.8)]


def test_a_name_heard_for_the_questions_possessive_counts_as_added() -> None:
    """"Chen's appointment" asked, "Chen is meeting the baker" heard again for "Can't it leave
    in the maker": the question's name was added."""
    added = _words_added("Can't it leave in the maker at 305.", "Chen is meeting the baker at 305.",
                         ["Chen's", "appointment", "baker"])
    assert added == {"chen", "baker"}
    assert _words_added("Chen's coat.", "Chen's coat.", ["Chen"]) == set()



def test_the_start_of_a_next_sentence_where_the_audio_ends_is_left_out_and_a_spaced_number_joined() -> None:
    """A memory's audio ends where the next sentence starts ("… the conductor. At"), which
    ingest gave to the next memory; Whisper wrote "6 .25" for six twenty-five. Both are tidied
    before the old and new words are compared; a sentence that goes on, or old words that end
    the same way, are left alone."""
    def texts(pieces: list[TranscriptPiece], old: str = "x") -> list[str]:
        return [p.text for p in without_cut_off_sentence(pieces, old)]

    assert texts([TranscriptPiece(0, 5, "At 6 .25, Hannah's appointment with the conductor. At")]) == [
        "At 6.25, Hannah's appointment with the conductor."]
    assert texts([TranscriptPiece(0, 3, "The egg costs 42."), TranscriptPiece(3, 4, "And the")]) == ["The egg costs 42."]
    assert texts([TranscriptPiece(0, 3, "Look here. Grace ordered eight")]) == ["Look here. Grace ordered eight"]
    assert texts([TranscriptPiece(0, 3, "At 6.25")]) == ["At 6.25"]  # nothing heard whole before it
    assert texts([TranscriptPiece(0, 3, "Look here. At")], old="Look here. At") == ["Look here. At"]
