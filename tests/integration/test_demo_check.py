"""The demo's live-path check compares memories as ingested, not as re-listened since."""

import numpy as np

from episodic.cli_tools import _ingested_transcript
from episodic.core.records import ShortTermMemory, TranscriptPiece


def test_ingested_transcript_prefers_the_ingest_version():
    m = ShortTermMemory(id="demo@000000000000", stream_id="demo", t_start=0, t_end=8,
                        vector=np.ones(2, np.float32),
                        transcript=[TranscriptPiece(0, 2, "The train to Oxford leaves.")])
    assert _ingested_transcript(m) == "The train to Oxford leaves."  # never re-listened
    m.metadata["transcripts"] = [
        {"version": 1, "source": "ingest", "text": "The train talks for leaves."},
        {"version": 2, "source": "relisten", "text": "The train to Oxford leaves.", "adopted": True},
    ]
    assert _ingested_transcript(m) == "The train talks for leaves."
