"""The day at a glance's one shape (issue 17), whoever asks: the ListSummaries RPC's messages
and the ``episodic summaries --json`` document, from :mod:`core.summaries`' SummariesRequest
and SummaryList.

The contract of :mod:`episodic.api_recall`: the server turns dataclasses into messages, the
client turns them back into the same dataclasses, and only :func:`summary_list_to_dict` makes
JSON, so a script reading the CLI's output cannot tell an in-process answer from a server's.
The request is validated once (:func:`core.summaries.summaries_request`), so a bad window gets
the same message in-process and remotely.
"""

from __future__ import annotations

from typing import Any

from episodic.api_convert import times_of
from episodic.core.summaries import SummariesRequest, SummaryList, WindowSummary, summaries_request
from episodic.proto.episodic.v1 import episodic_pb2 as pb


# -- the request -----------------------------------------------------------------------------------
def summaries_request_to_proto(req: SummariesRequest) -> pb.ListSummariesRequest:
    msg = pb.ListSummariesRequest(stream_id=req.stream_id, window=req.window)
    if req.t_min is not None:
        msg.t_min = req.t_min
    if req.t_max is not None:
        msg.t_max = req.t_max
    return msg


def summaries_request_from_proto(msg: pb.ListSummariesRequest) -> SummariesRequest:
    """The validated request a message stands for (InputError naming a bad field)."""
    return summaries_request(msg.stream_id, msg.window, *times_of(msg))


# -- the result ------------------------------------------------------------------------------------
def _tallies(items: list[tuple[str, float]]) -> list[pb.Tally]:
    return [pb.Tally(item=i, count=float(n)) for i, n in items]


def window_summary_to_proto(w: WindowSummary) -> pb.WindowSummary:
    return pb.WindowSummary(
        stream_id=w.stream_id, window=w.window, window_s=w.window_s, t_start=w.t_start,
        t_end=w.t_end, covered_start=w.covered_start, covered_end=w.covered_end,
        memories=w.memories, events=w.events,
        said=[pb.Quote(t=t, text=q) for t, q in w.said],
        topics=_tallies(w.topics), people=_tallies(w.people), seen=_tallies(w.seen),
        on_screen=_tallies(w.on_screen), heard=_tallies(w.heard), tone=list(w.tone),
        people_seen=w.people_seen, text=w.text, wall_start=w.wall_start, wall_end=w.wall_end,
        id=w.id, updated_at=w.updated_at,
    )


def window_summary_from_proto(msg: pb.WindowSummary) -> WindowSummary:
    def tallies(items: Any) -> list[tuple[str, float]]:
        return [(t.item, t.count) for t in items]

    return WindowSummary(
        stream_id=msg.stream_id, window=msg.window, window_s=msg.window_s, t_start=msg.t_start,
        t_end=msg.t_end, covered_start=msg.covered_start, covered_end=msg.covered_end,
        memories=msg.memories, events=msg.events, said=[(q.t, q.text) for q in msg.said],
        topics=tallies(msg.topics), people=tallies(msg.people), seen=tallies(msg.seen),
        on_screen=tallies(msg.on_screen), heard=tallies(msg.heard), tone=list(msg.tone),
        people_seen=msg.people_seen, text=msg.text, wall_start=msg.wall_start,
        wall_end=msg.wall_end, id=msg.id, updated_at=msg.updated_at,
    )


def summary_list_to_proto(r: SummaryList) -> pb.ListSummariesResponse:
    return pb.ListSummariesResponse(
        stream_id=r.stream_id, summaries=[window_summary_to_proto(w) for w in r.summaries],
        wall_clock_start=r.wall_clock_start, windows=list(r.windows),
    )


def summary_list_from_proto(msg: pb.ListSummariesResponse) -> SummaryList:
    return SummaryList(
        stream_id=msg.stream_id, summaries=[window_summary_from_proto(w) for w in msg.summaries],
        wall_clock_start=msg.wall_clock_start, windows=list(msg.windows),
    )


def window_summary_to_dict(w: WindowSummary) -> dict[str, Any]:
    """One summary of the JSON document, by the message's field names."""

    def tallies(items: list[tuple[str, float]]) -> list[dict[str, Any]]:
        return [{"item": i, "count": round(n, 1)} for i, n in items]

    return {
        "stream_id": w.stream_id, "window": w.window, "window_s": w.window_s,
        "t_start": round(w.t_start, 3), "t_end": round(w.t_end, 3),
        "covered_start": round(w.covered_start, 3), "covered_end": round(w.covered_end, 3),
        "memories": w.memories, "events": w.events,
        "said": [{"t": round(t, 1), "text": q} for t, q in w.said],
        "topics": tallies(w.topics), "people": tallies(w.people), "seen": tallies(w.seen),
        "on_screen": tallies(w.on_screen), "heard": tallies(w.heard), "tone": list(w.tone),
        "people_seen": w.people_seen, "text": w.text, "wall_start": w.wall_start,
        "wall_end": w.wall_end, "id": w.id, "updated_at": round(w.updated_at, 3),
    }


def summary_list_to_dict(r: SummaryList) -> dict[str, Any]:
    """The ``episodic summaries --json`` document: the ListSummariesResponse fields by the same
    names (the same in-process and through a server)."""
    return {
        "stream_id": r.stream_id,
        "summaries": [window_summary_to_dict(w) for w in r.summaries],
        "wall_clock_start": r.wall_clock_start,
        "windows": list(r.windows),
    }
