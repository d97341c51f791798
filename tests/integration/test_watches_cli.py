"""Standing queries end to end with the real models: `episodic watch add`, then `episodic ingest`
of generated recordings raises the alerts as the memories form, `episodic watch tail --json`
prints them with their citations, and `tail --after` and `watch remove` behave.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episodic import samples
from tests.cli_runner import run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("watch-media")
    yard = root / "yard.mp4"
    samples.make_recording(
        yard,
        [samples.Scene(6, seed=31, text="NORTH GATE"), samples.Scene(6, seed=32, text="HARBOUR"),
         samples.Scene(6, seed=33, text="NORTH GATE")],
        [samples.Speech(1.0, "The delivery van is late again."),
         samples.Speech(7.0, "Two boats left the harbour at noon."),
         samples.Speech(13.0, "The delivery van has arrived at last.")],
    )
    market = root / "market.mp4"
    samples.make_recording(market, [samples.Scene(6, seed=41, text="MARKET")],
                           [samples.Speech(1.0, "Fresh bread is sold at the market.")])
    return {"yard": yard, "market": market}


def _tail(data: Path) -> list[dict]:
    out = run_cli("watch", "tail", "--json", data=data).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_watches_fire_as_memories_form_and_not_again(recordings, tmp_path):
    data = tmp_path / "data"
    ids = {}
    for name, args in {
        "boats": ["boats leave the harbour", "--stream-id", "yard"],
        "bread": ["bread at the market"],
        "dog": ["a dog barks"],
        "first_gate": ["the north gate sign", "--kind", "first", "--period", "ever"],
        "order": ["the delivery van is late", "--kind", "order", "--then", "boats leave the harbour"],
    }.items():
        doc = json.loads(run_cli("watch", "add", *args, "--json", data=data).stdout)
        ids[name] = doc["watch"]["id"]
    listed = json.loads(run_cli("watch", "list", "--json", data=data).stdout)["watches"]
    assert {w["id"] for w in listed} == set(ids.values())

    run_cli("ingest", str(recordings["yard"]), str(recordings["market"]), data=data)
    alerts = _tail(data)
    by = {}
    for a in alerts:
        by.setdefault(a["watch_id"], []).append(a)
    assert ids["dog"] not in by, alerts
    (boats,) = by[ids["boats"]]
    assert boats["stream_id"] == "yard" and 5.0 <= boats["t_start"] < boats["t_end"] <= 13.0
    assert boats["segment_ids"] and boats["event_ids"] and boats["snippet_uris"][0].startswith("file://")
    assert 0 < boats["confidence"] <= 1
    (bread,) = by[ids["bread"]]
    assert bread["stream_id"] == "market"
    (gate,) = by[ids["first_gate"]]
    assert gate["stream_id"] == "yard" and gate["t_start"] < 6.5
    (order,) = by[ids["order"]]
    assert order["stream_id"] == "yard" and len(order["event_ids"]) == 2
    # the segments cited are real: `episodic segments` lists them
    segments = json.loads(run_cli("segments", "--stream-id", "yard", "--json", data=data).stdout)
    listed_ids = {s["id"] for s in segments["segments"]}
    assert set(boats["segment_ids"]) <= listed_ids

    # (ingesting again raises nothing new: tests/unit/services/test_watching.py, and the worker
    # test that kills and restarts a worker; a second model-loading ingest here cost 20 s)
    # tail --after skips what was seen; remove stops a watch
    assert _tail_after(data, alerts[-1]["seq"]) == []
    run_cli("watch", "remove", ids["boats"], data=data)
    gone = run_cli("watch", "remove", ids["boats"], data=data, check=False)
    assert gone.returncode == 2 and "no watch" in gone.stderr


def _tail_after(data: Path, seq: int) -> list[dict]:
    out = run_cli("watch", "tail", "--json", "--after", str(seq), data=data).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]
