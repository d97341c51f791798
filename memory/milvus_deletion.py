"""Forgetting on Milvus: deleting a stream's overviews, a time range of its records, all but
a re-ingest's memories, or the whole stream. A mixin of
:class:`~episodic.memory.milvus_store.MilvusStore`, split out because deletion is one idea with
its own ordering rule (children and events first, memories last, so a crash part-way never
leaves rows that nothing lists) and the store module had grown past the size limit."""

from __future__ import annotations

from episodic.memory.milvus_filters import build_filter as _filter
from episodic.memory.milvus_filters import check_stream as _check_stream
from episodic.memory.milvus_filters import render_filter
from episodic.memory.milvus_schema import EVENTS, FRAMES, MEMORIES, OVERVIEWS, STREAMS, VECTORS


class MilvusDeletion:
    def delete_overviews(self, stream_id: str, keep_ids: set[str] | None = None) -> int:
        """Delete the stream's overviews not in ``keep_ids`` (all when None): a rebuilt
        stream keeps exactly the stretches it still has. Returns how many were deleted."""
        sid = _check_stream(stream_id)
        keep = set(keep_ids or ())
        rows = self._query(OVERVIEWS, render_filter("stream_id == {sid}", sid=sid), ["id"])
        stale = [r["id"] for r in rows if r["id"] not in keep]
        return self._delete_ids(OVERVIEWS, stale) if stale else 0

    def delete_stream_records_except(self, stream_id: str, keep_memory_ids: set[str]) -> int:
        """Delete the stream's memories, events, E_i and frame rows whose memory is not in
        ``keep_memory_ids`` (after a re-ingest the store then holds exactly the new run), and
        E_i/frame rows that a kept memory no longer lists (orphans of an interrupted write).
        Returns the number of rows deleted across the four collections."""
        sid = _check_stream(stream_id)
        if not self._attach():
            return 0
        keep = set(keep_memory_ids)
        where = render_filter("stream_id == {sid}", sid=sid)
        mem_rows = self._query(MEMORIES, where, ["id", "children"])
        listed = {
            key: {i for r in mem_rows if r["id"] in keep for i in (r.get("children") or {}).get(key, [])}
            for key in ("vectors", "frames")
        }
        removed = 0
        for collection in (EVENTS, VECTORS, FRAMES):
            rows = self._query(collection, where, ["id", "memory_id"])
            if collection == EVENTS:
                stale = [r["id"] for r in rows if r["memory_id"] not in keep]
            else:
                children = listed[collection]
                stale = [r["id"] for r in rows if r["memory_id"] not in keep or r["id"] not in children]
            if stale:
                removed += self._delete_ids(collection, stale)
        stale = [r["id"] for r in mem_rows if r["id"] not in keep]
        if stale:
            removed += self._delete_ids(MEMORIES, stale)
        return removed

    def delete_range(
        self, stream_id: str, t_min: float | None = None, t_max: float | None = None
    ) -> dict[str, int]:
        """Delete the stream's memories overlapping [t_min, t_max] (the filter list_memories
        uses) with their events, E_i and frame rows, and event/E_i/frame rows in the range
        whose memory is not stored. Children and events go first and the memories last, so
        a crash part-way leaves memories a repeat finds again, never rows nothing lists.
        Reads are Strong on a server: a worker's writes a moment ago are seen."""
        sid = _check_stream(stream_id)
        in_range = _filter([sid], t_min, t_max)  # validates the range
        out = {"memories": 0, "events": 0, "vectors": 0, "frames": 0}
        if not self._attach():
            return out
        mem_rows = self._query(MEMORIES, in_range, ["id", "children"], strong=True)
        gone = {r["id"] for r in mem_rows}
        stored = {r["id"] for r in self._query(MEMORIES, render_filter("stream_id == {sid}", sid=sid), ["id"], strong=True)}
        for collection in (EVENTS, VECTORS, FRAMES):
            rows = self._query(collection, in_range, ["id", "memory_id"], strong=True)
            stale = {r["id"] for r in rows if r["memory_id"] in gone or r["memory_id"] not in stored}
            if collection == EVENTS:
                listed = self._query_in(EVENTS, "memory_id", sorted(gone), ["id"], strong=True)
            else:
                ids = [i for r in mem_rows for i in (r.get("children") or {}).get(collection, [])]
                listed = self._get(collection, ids, ["id"], strong=True)
            stale |= {r["id"] for r in listed}
            if stale:
                out[collection] = self._delete_ids(collection, sorted(stale))
        if gone:
            out["memories"] = self._delete_ids(MEMORIES, sorted(gone))
        return out

    def delete_stream(self, stream_id: str) -> int:
        """Remove every record of a stream, its StreamInfo included; returns rows deleted."""
        sid = _check_stream(stream_id)
        removed = self.delete_stream_records_except(sid, set()) + self.delete_overviews(sid)
        if self._has(STREAMS) and self.get_stream(sid) is not None:
            self._call(
                "deleting a stream",
                self._client.delete,
                self.name(STREAMS),
                filter=render_filter("stream_id == {sid}", sid=sid),
            )
            self._deleted()
            removed += 1
        return removed
