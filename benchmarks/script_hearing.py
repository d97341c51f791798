"""A recogniser that hears exactly what the generator's script says was said (a diagnostic).

``bench_qa.py --heard-as-script`` ingests a generated QA set with this in place of Whisper, so
every sentence is stored word for word at the time it was spoken, and answers with re-listening
off. What it still gets wrong is lost in retrieval and answering, not in hearing: the figure
splits the gap to the targets into a perception part and a reasoning part. Pictures, signs and
sounds are still perceived by the real models; only speech is given.

Word times are spread evenly over each sentence's spoken interval (``speech_t`` in
``script.json``), enough for the segmenter's pauses and for ``words_within``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from episodic.core.records import TranscriptPiece


class ScriptHearing:
    """``SpeechRecognizer`` over a set's ``script.json``; ``stream`` names the recording being
    ingested (the recogniser protocol carries no stream id, so the caller sets it first)."""

    model_id = "script"

    def __init__(self, script_json: Path) -> None:
        self.said: dict[str, list[tuple[float, float, str]]] = {}
        for rec in json.loads(Path(script_json).read_text(encoding="utf-8")):
            self.said[rec["stream_id"]] = [
                (float(b["speech_t"][0]), float(b["speech_t"][1]), b["said"].strip())
                for b in rec.get("beats", ())
                if b.get("said") and b.get("speech_t")
            ]
        self.stream = ""

    def transcribe(self, audio: np.ndarray, sample_rate_hz: int, t_offset: float, **_: object) -> list[TranscriptPiece]:
        if self.stream not in self.said:
            raise ValueError(f"no script for stream {self.stream!r}: set ScriptHearing.stream before ingesting it")
        n = audio.shape[0] if audio.ndim else 0
        t_end = t_offset + n / sample_rate_hz
        out: list[TranscriptPiece] = []
        for a, b, text in self.said[self.stream]:
            if b <= t_offset or a >= t_end:
                continue
            words = text.split()
            step = (b - a) / len(words)
            timed = [(a + i * step, a + (i + 1) * step, w) for i, w in enumerate(words)]
            out.append(TranscriptPiece(a, b, text, words=timed, language="en"))
        return out
