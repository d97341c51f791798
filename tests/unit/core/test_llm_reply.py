"""The one reader of JSON inside a model's reply (decomposition, QA questions, recall facets)."""

from __future__ import annotations

import pytest

from episodic.core.llm import json_in_reply


@pytest.mark.parametrize(("reply", "kind", "expected"), [
    ('["a", "b"]', list, ["a", "b"]),
    ('Here you go:\n```json\n["a"]\n```\nThanks', list, ["a"]),
    ('Sure! The phrases are ["x", "y"] as asked.', list, ["x", "y"]),
    ('{"global": "a vlog", "audio": null}', dict, {"global": "a vlog", "audio": None}),
    ('```\n{"k": 1}\n```', dict, {"k": 1}),
    ('["a", "b"', list, None),  # cut off
    ('{"k": 1}', list, None),  # an object where a list was asked for
    ("[1, 2] and {", dict, None),
    ("no JSON at all", list, None),
    (None, list, None),
    ("[" * 100000 + "]" * 100000, list, None),  # too deep to parse: not a crash
])
def test_json_in_a_reply(reply, kind, expected) -> None:
    assert json_in_reply(reply, kind) == expected
