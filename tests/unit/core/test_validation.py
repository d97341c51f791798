"""The kernel's request validator: one set of rules and messages for every door."""

from __future__ import annotations

import math

import numpy as np
import pytest

from episodic.core import validation as v
from episodic.core.article import ArticleRequest, ArticleStyle, Fusion
from episodic.core.errors import InputError
from episodic.core.query import AskRequest, Scope


def test_text_is_cleaned_or_refused_with_the_field_named() -> None:
    assert v.text("  When   does\tit leave? ") == "When does it leave?"
    for value, what, needle in (
        ("", "question", "the question is empty"),
        (" \n", "option 2", "option 2 is empty"),
        (7, "request", "the request must be text, got int"),
        ("x" * (v.MAX_QUESTION_CHARS + 1), "question", f"at most {v.MAX_QUESTION_CHARS}"),
        ("a\x00b", "query", "NUL"),
    ):
        with pytest.raises(InputError, match=needle):
            v.text(value, what)


def test_numbers_ranges_and_ids() -> None:
    assert v.top_k(np.int64(7)) == 7 and v.finite_number(np.float32(0.5), "x") == 0.5
    for bad in (0, v.MAX_TOP_K + 1, True, 2.0, "5"):
        with pytest.raises(InputError, match="top_k"):
            v.top_k(bad)
    for bad in (math.nan, math.inf, True, "1"):
        with pytest.raises(InputError):
            v.finite_number(bad, "t_min")
    assert v.time_range(None, 5) == (None, 5.0)
    with pytest.raises(InputError, match=r"reversed: t_min \(10\) is after t_max \(2\)"):
        v.time_range(10, 2)
    assert v.stream_ids(["b", "a", "b"]) == ("b", "a") and v.stream_ids([]) is None and v.stream_ids(None) is None
    for bad in ("cam1", ['a" or 1==1'], ["x"] * (v.MAX_STREAM_IDS + 1)):
        with pytest.raises(InputError):
            v.stream_ids(bad)


def test_options_choices_and_whole_requests() -> None:
    assert v.options(None) == () and v.options(["  A ", "B"]) == ("A", "B")
    for bad in (["only"], ["x"] * (v.MAX_OPTIONS + 1), "AB", ["A", ""]):
        with pytest.raises(InputError):
            v.options(bad)
    assert v.choice("weighted-rrf", Fusion, "fusion") is Fusion("wrrf")
    with pytest.raises(InputError, match="style must be one of bullet, cag, ginger"):
        v.choice("fancy", ArticleStyle, "style")
    req = v.ask_request(AskRequest(" What? ", options=["a", "b"], scope=Scope(("cam",), 1, 2), top_k=3, deadline_s=4))
    assert (req.question, req.options, req.scope.stream_ids, req.top_k, req.deadline_s) == ("What?", ("a", "b"), ("cam",), 3, 4.0)
    art = v.article_request(ArticleRequest("Report", style="cag", fusion="", max_sub_queries=None))
    assert (art.style, art.fusion, art.max_sub_queries) == (ArticleStyle.CAG, None, None)
    with pytest.raises(InputError, match="max_sub_queries"):
        v.article_request(ArticleRequest("Report", max_sub_queries=v.MAX_SUB_QUERIES + 1))
    with pytest.raises(InputError, match="expected an AskRequest"):
        v.ask_request("What?")
