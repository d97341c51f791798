"""Word error rate and speed of the bundled Whisper models on generated speech.

The set: everyday sentences with names, numbers, times and quantities, spoken by several
espeak-ng voices and accents at 120–200 words per minute, two sentences per clip (the length
of an ingest segment), each clip clean or over background noise (white, pink, brown or
babble) at 20/10/5 dB SNR or over a music bed at 10/5 dB. Voices and sentences are split
into a **dev** part (anything tuned, e.g. the language-detection fallback, was tuned on it)
and a **held-out** part (reported, never tuned on). SNR is speech power (pauses excluded) to
background power.

WER: word-level Levenshtein distance / reference words, after lower-casing, dropping
punctuation, spelling out numbers the same way on both sides ("11:20" = "eleven twenty",
"8.15" = "eight fifteen", "250" = "two hundred fifty", "3rd" = "third", "£12" = "12 pounds").

    .venv/bin/python benchmarks/bench_asr.py                     # both parts, 4 configurations
    .venv/bin/python benchmarks/bench_asr.py --split dev --configs base-bundled:beam5
    configuration = <whisper_model>:<greedy|beamN>[:nowords][:lang=xx][:ct=int8|float32]

Prints WER per voice, per condition and overall for each configuration, and the speed
(seconds of audio per wall second, model load excluded).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.config import Settings, load_settings  # noqa: E402

RATE_HZ = 16000

DEV_SENTENCES = [
    "The fire alarm test is scheduled for half past two this afternoon.",
    "Doctor Patel will see you in room fourteen at ten fifteen.",
    "Please send the invoice to Margaret before Friday evening.",
    "We need three bags of rice, a dozen eggs and some fresh basil.",
    "The bus to Cambridge leaves every twenty minutes from the station.",
    "My brother Daniel moved to Lisbon in 2019.",
    "Turn off the oven when the timer reaches forty five minutes.",
    "The package weighs about 2.5 kilograms.",
    "Could you water the tomato plants while I am away next week?",
    "Our flight boards at gate 32 at 6:40 in the morning.",
    "Sarah scored eighteen points in the final game of the season.",
    "The meeting with the Lopez family was moved to Thursday.",
    "I left my umbrella on the train to Manchester.",
    "The rent goes up by 50 dollars in March.",
    "Remember to lock the back door and switch off the lights.",
    "Kevin ordered a large pizza with mushrooms and olives.",
    "The museum opens at nine and closes at 5:30.",
    "There were about 300 people waiting outside the stadium.",
    "The kettle is broken, so we made tea on the stove.",
    "Grandma Rosa turns 90 on the 3rd of June.",
    "The children planted sunflowers along the garden fence.",
    "Nobody noticed that the clock in the hall had stopped.",
    "Alex paid 12 pounds for two tickets to the concert.",
    "The library is closed for repairs until the end of the month.",
]
HELD_OUT_SENTENCES = [
    "We had a picnic in the park near the river.",
    "The train to Oxford leaves at 11:20 from platform six.",
    "Mister Henderson asked everyone to bring a notebook tomorrow.",
    "The pharmacy on Queen Street is open until midnight.",
    "Two riders are not wearing helmets this morning.",
    "Lucy found seventeen shells on the beach yesterday.",
    "The recipe needs 250 grams of flour and a pinch of salt.",
    "Please call the plumber about the leaking kitchen tap.",
    "Our team meeting starts at quarter past eight on Monday.",
    "Thomas forgot his keys in the car again.",
    "The temperature dropped to minus five degrees last night.",
    "A white van has been parked outside the bakery since noon.",
    "Emma and Jacob are getting married in September.",
    "The printer on the second floor is out of paper.",
    "He ran the marathon in just under four hours.",
    "The new bridge cost more than 40 million euros.",
    "Don't forget to feed the cat before you leave.",
    "The school trip to the zoo was cancelled because of the rain.",
    "Maria speaks Spanish, French and a little Italian.",
    "The doctor said I should drink more water every day.",
    "Our neighbors are painting their house dark green.",
    "The last ferry returns to the island at 7:45.",
    "I counted 12 red cars and 9 blue ones in the parking lot.",
    "Chloe is learning to play the violin at school.",
]
DEV_VOICES = ["en-us+f3", "en-gb+m3", "en-gb-scotland+f2", "en-us-nyc+m1"]
HELD_OUT_VOICES = ["en-029+m2", "en-gb-x-rp+f4", "en-gb-x-gbcwmd+m7", "en-gb-x-gbclan+f1"]
# A second synthesiser (Debian's flite: US female/male, Scottish male, a diphone voice) saying the
# dev sentences: does what was measured on espeak-ng's voices hold for speech made another way?
OTHER_ENGINE_VOICES = ["flite:slt", "flite:rms", "flite:awb", "flite:kal16"]
# (label, kind, snr_db): kind None = clean
CONDITIONS = [
    ("clean", None, None),
    ("noise 20 dB", "noise", 20.0),
    ("noise 10 dB", "noise", 10.0),
    ("noise 5 dB", "noise", 5.0),
    ("music 10 dB", "music", 10.0),
    ("music 5 dB", "music", 5.0),
]
SPEEDS_WPM = (120, 140, 160, 180, 200)
NOISE_COLOURS = ("white", "pink", "brown", "babble")
DEFAULT_CONFIGS = ["tiny.en-bundled:greedy", "tiny.en-bundled:beam5", "base-bundled:greedy", "base-bundled:beam5"]

# -- WER ---------------------------------------------------------------------------------

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
            "nine": "ninth", "twelve": "twelfth"}
_SPELLING = {"colour": "color", "neighbour": "neighbor", "neighbours": "neighbors",
             "centre": "center", "theatre": "theater", "favourite": "favorite",
             "cancelled": "canceled", "mr": "mister", "mrs": "missus", "dr": "doctor",
             "ok": "okay", "grey": "gray", "kilogrammes": "kilograms", "grammes": "grams"}
_SCALE_WORDS = {"hundred", "thousand", "million", "billion"}
_NUMBER_WORDS = set(_ONES) | set(_TENS[2:]) | _SCALE_WORDS


def number_words(n: int) -> list[str]:
    """Cardinal words without "and": 250 → two hundred fifty."""
    if n < 20:
        return [_ONES[n]]
    if n < 100:
        return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])
    for size, word in ((10**9, "billion"), (10**6, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            rest = n % size
            return number_words(n // size) + [word] + (number_words(rest) if rest else [])
    return [str(n)]


def _ordinal(words: list[str]) -> list[str]:
    last = words[-1]
    if last in _ORDINAL:
        last = _ORDINAL[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return words[:-1] + [last]


def _digits_to_words(tok: str) -> list[str]:
    m = re.fullmatch(r"(\d+)(st|nd|rd|th)", tok)
    if m:
        return _ordinal(number_words(int(m.group(1))))
    m = re.fullmatch(r"(\d{1,2})[:.](\d\d)", tok)
    if m and int(m.group(1)) <= 24 and int(m.group(2)) < 60:  # a time: 11:20, 8.15
        hours, minutes = int(m.group(1)), int(m.group(2))
        if minutes == 0:
            return number_words(hours) + []
        tail = (["oh"] + number_words(minutes)) if minutes < 10 else number_words(minutes)
        return number_words(hours) + tail
    m = re.fullmatch(r"(\d+)\.(\d+)", tok)
    if m:
        return number_words(int(m.group(1))) + ["point"] + [_ONES[int(d)] for d in m.group(2)]
    if tok.isdigit():
        return number_words(int(tok))
    return [tok]


def normalise(text: str) -> list[str]:
    """Words compared by WER: lower case, no punctuation, numbers spelled out one way."""
    t = text.lower().replace("’", "'")
    t = re.sub(r"[£$€](\d[\d,.]*)", lambda m: m.group(1) + {"£": " pounds", "$": " dollars", "€": " euros"}[m.group(0)[0]], t)
    t = t.replace("%", " percent").replace("&", " and ")
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)  # 1,250 → 1250
    t = re.sub(r"(\d)\s*(am|pm|a\.m\.|p\.m\.)", r"\1 \2", t)
    tokens = re.findall(r"\d+(?:[:.]\d+)?(?:st|nd|rd|th)?|[a-z]+(?:'[a-z]+)*", t)
    words: list[str] = []
    for tok in tokens:
        if tok[0].isdigit():
            words.extend(_digits_to_words(tok))
        else:
            tok = tok.replace("'", "")
            if tok != "oclock":  # "nine o'clock" = "9:00" = "nine"
                words.append(_SPELLING.get(tok, tok))
    # "one hundred and fifty" = "one hundred fifty"
    return [w for i, w in enumerate(words)
            if not (w == "and" and 0 < i < len(words) - 1 and words[i - 1] in _SCALE_WORDS
                    and words[i + 1] in _NUMBER_WORDS)]


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Substitutions + deletions + insertions turning ``ref`` into ``hyp``."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word errors, reference words) after normalisation; WER = errors / words."""
    ref, hyp = normalise(reference), normalise(hypothesis)
    return edit_distance(ref, hyp), len(ref)


def wer(reference: str, hypothesis: str) -> float:
    errors, n = word_errors(reference, hypothesis)
    return errors / max(1, n)


# -- the generated set -------------------------------------------------------------------


@dataclass(frozen=True)
class Clip:
    split: str
    voice: str
    condition: str
    wpm: int
    text: str
    audio: np.ndarray

    @property
    def seconds(self) -> float:
        return self.audio.size / RATE_HZ


def _background(kind: str, seconds: float, seed: int) -> np.ndarray:
    from episodic import sample_sounds

    if kind == "music":
        return sample_sounds.music(seconds, RATE_HZ, seed=seed)
    return sample_sounds.noise(seconds, RATE_HZ, seed=seed, colour=NOISE_COLOURS[seed % len(NOISE_COLOURS)])


def make_clip(sentences: list[str], voice: str, wpm: int, kind: str | None, snr_db: float | None,
              seed: int, pause_s: float = 0.6, pad_s: float = 0.5) -> np.ndarray:
    """Sentences spoken one after another with pauses, over a background at ``snr_db``."""
    from episodic.samples import synthesize

    gap = np.zeros(int(pause_s * RATE_HZ), np.float32)
    pad = np.zeros(int(pad_s * RATE_HZ), np.float32)
    parts: list[np.ndarray] = [pad]
    for k, s in enumerate(sentences):
        if k:
            parts.append(gap)
        parts.append(synthesize(s, voice=voice, wpm=wpm, rate_hz=RATE_HZ))
    parts.append(pad)
    speech = np.concatenate(parts)
    if kind is None or snr_db is None:
        return speech
    spoken = np.concatenate(parts[1:-1])
    p_speech = float(np.mean(np.square(spoken, dtype=np.float64)))
    bg = _background(kind, speech.size / RATE_HZ + 0.1, seed)[: speech.size].astype(np.float64)
    p_bg = float(np.mean(bg * bg)) or 1.0
    gain = math.sqrt(p_speech / (p_bg * 10 ** (snr_db / 10)))
    return np.clip(speech + gain * bg, -1.0, 1.0).astype(np.float32)


_VOICES = {"dev": DEV_VOICES, "held-out": HELD_OUT_VOICES, "other-engine": OTHER_ENGINE_VOICES}


def build_set(split: str, per_clip: int = 2) -> list[Clip]:
    """Every voice × every condition once; sentences rotate so each is heard twice."""
    sentences = HELD_OUT_SENTENCES if split == "held-out" else DEV_SENTENCES
    voices = _VOICES[split]
    clips, k = [], 0
    base_seed = 1000 if split == "held-out" else 0
    for vi, voice in enumerate(voices):
        for ci, (label, kind, snr) in enumerate(CONDITIONS):
            chosen = [sentences[(k + j) % len(sentences)] for j in range(per_clip)]
            k += per_clip
            wpm = SPEEDS_WPM[(vi * len(CONDITIONS) + ci) % len(SPEEDS_WPM)]
            seed = base_seed + vi * 17 + ci
            audio = make_clip(chosen, voice, wpm, kind, snr, seed)
            clips.append(Clip(split, voice, label, wpm, " ".join(chosen), audio))
    return clips


# -- running -----------------------------------------------------------------------------


def config_settings(base: Settings, spec: str) -> Settings:
    """``tiny.en-bundled:beam5:nowords`` → Settings for that run."""
    model, *opts = spec.split(":")
    changes: dict[str, object] = {"whisper_model": model}
    for o in opts:
        if o == "greedy":
            changes["whisper_beam_size"] = 1
        elif o.startswith("beam"):
            changes["whisper_beam_size"] = int(o[4:])
        elif o == "nowords":
            changes["whisper_word_timestamps"] = False
        elif o.startswith("lang="):
            changes["asr_language"] = o[5:]
        elif o.startswith("ct="):
            changes["whisper_compute_type"] = o[3:]
        elif o.startswith("prompt="):
            changes["whisper_initial_prompt"] = o[7:].replace("_", " ")
        else:
            raise SystemExit(f"unknown option {o!r} in {spec!r}")
    return base.replace(**changes)


def run_config(settings: Settings, clips: list[Clip]) -> dict:
    from episodic.memory.speech import WhisperRecognizer

    asr = WhisperRecognizer(settings)
    t0 = time.perf_counter()
    asr.prepare()
    load_s = time.perf_counter() - t0
    rows, wall, cpu = [], 0.0, 0.0
    for clip in clips:
        t0, c0 = time.perf_counter(), time.process_time()
        pieces = asr.transcribe(clip.audio, RATE_HZ, 0.0)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        hyp = " ".join(p.text for p in pieces)
        errors, n = word_errors(clip.text, hyp)
        rows.append({"split": clip.split, "voice": clip.voice, "condition": clip.condition,
                     "wpm": clip.wpm, "errors": errors, "words": n, "ref": clip.text, "hyp": hyp,
                     "language": ",".join(sorted({p.language for p in pieces}))})
    audio_s = sum(c.seconds for c in clips)
    # On a shared machine wall time depends on the neighbours; CPU seconds per audio second
    # (spread over cpu_threads) estimate the speed the machine gives when it is not shared.
    threads = max(1, settings.cpu_threads)
    return {"model_id": asr.model_id, "load_s": load_s, "audio_s": audio_s, "wall_s": wall,
            "cpu_s": cpu, "x_realtime": audio_s / wall if wall else float("inf"),
            "x_realtime_cpu": audio_s * threads / cpu if cpu else float("inf"), "rows": rows}


def _table(title: str, key: str, results: dict[str, dict], order: list[str]) -> str:
    names = list(results)
    lines = [f"\n{title}", "| " + key + " | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    for value in order + ["all"]:
        cells = []
        for name in names:
            rows = [r for r in results[name]["rows"] if value == "all" or r[key] == value]
            e, n = sum(r["errors"] for r in rows), sum(r["words"] for r in rows)
            cells.append(f"{100 * e / max(1, n):.1f}")
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "held-out", "both", "other-engine"], default="both",
                    help="other-engine: the dev sentences, noise and music spoken by flite's voices "
                         "(apt-get install flite) instead of espeak-ng's")
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS)
    ap.add_argument("--json", type=Path, help="write every transcript and figure here")
    ap.add_argument("--show-errors", action="store_true", help="print reference/hypothesis pairs with errors")
    args = ap.parse_args()

    base = load_settings()
    splits = ["dev", "held-out"] if args.split == "both" else [args.split]
    t0 = time.perf_counter()
    clips = [c for s in splits for c in build_set(s)]
    print(f"{len(clips)} clips, {sum(c.seconds for c in clips):.0f} s of audio "
          f"(synthesised in {time.perf_counter() - t0:.1f} s); cpu_threads={base.cpu_threads}")
    results: dict[str, dict] = {}
    for spec in args.configs:
        results[spec] = run_config(config_settings(base, spec), clips)
        r = results[spec]
        print(f"  {spec}: {r['x_realtime']:.1f}x real time ({r['audio_s']:.0f} s audio in "
              f"{r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU s, load {r['load_s']:.1f} s)", flush=True)
    for split in splits:
        part = {k: {**v, "rows": [r for r in v["rows"] if r["split"] == split]} for k, v in results.items()}
        voices = _VOICES[split]
        print(_table(f"WER % by voice ({split})", "voice", part, voices))
        print(_table(f"WER % by condition ({split})", "condition", part, [c[0] for c in CONDITIONS]))
        langs = {k: sum(1 for r in v["rows"] if r["language"] not in ("", "en")) for k, v in part.items()}
        print(f"clips decoded in a language other than English ({split}): {langs}")
    print(f"\n| configuration | audio s / wall s | audio s / (CPU s / {base.cpu_threads} threads) |\n|---|---:|---:|")
    for k, v in results.items():
        print(f"| {k} | {v['x_realtime']:.1f} | {v['x_realtime_cpu']:.1f} |")
    if args.show_errors:
        for k, v in results.items():
            print(f"\n== {k}")
            for r in v["rows"]:
                if r["errors"]:
                    print(f"[{r['split']} {r['voice']} {r['condition']} {r['wpm']}wpm] {r['errors']}/{r['words']}\n"
                          f"   ref: {r['ref']}\n   hyp: {r['hyp']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
