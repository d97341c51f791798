"""Records ↔ Milvus rows: a ShortTermMemory becomes one memory row plus its E_i and frame
rows, a ThetaEvent, a StreamOverview and a StreamInfo one row each. A mixin of
:class:`~episodic.memory.milvus_store.MilvusStore` (it needs the store's dimensions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from episodic.core.errors import InputError, StoreError
from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    SoundObservation,
    StreamInfo,
    StreamOverview,
    ThetaEvent,
    TranscriptPiece,
    vector_id,
)
from episodic.memory.milvus_codecs import (
    SUMMARY_MAX_BYTES,
    TEXT_MAX_BYTES,
    _b64_vector,
    _check_count,
    _f32,
    _facet_lists,
    _from_b64,
    _items,
    _json_field,
    _truncate_utf8,
    _vector,
)
from episodic.memory.milvus_filters import MODALITY as _MODALITY
from episodic.memory.milvus_filters import check_id as _check_id
from episodic.memory.milvus_filters import check_scope as _check_scope
from episodic.memory.milvus_filters import check_stream as _check_stream
from episodic.memory.milvus_filters import check_time as _check_time


def checked_overview(o: StreamOverview, dim: int) -> StreamOverview:
    """A validated copy of ``o`` in plain values (float times, a float32 vector, facet lists),
    shared by both stores so they accept and refuse exactly the same overviews."""
    oid = _check_id(o.id, "overview id")
    return StreamOverview(
        id=oid,
        stream_id=_check_stream(o.stream_id),
        t_start=_check_time(o.t_start, f"{oid}: t_start"),
        t_end=_check_time(o.t_end, f"{oid}: t_end"),
        scope=_check_scope(o.scope),  # type: ignore[arg-type]
        text=str(o.text),
        vector=_f32(_vector(o.vector, dim, f"overview {oid} vector")),
        facets=_facet_lists(o.facets, f"overview {oid} facets"),
        events=_check_count(o.events, f"{oid}: events"),
        updated_at=_check_time(o.updated_at, f"{oid}: updated_at"),
    )


def checked_overviews(overviews: Sequence[StreamOverview], dim: int) -> list[StreamOverview]:
    """A batch checked before anything is written; one id twice would leave which version
    was kept up to the backend, so it is refused."""
    if len({o.id for o in overviews}) != len(overviews):
        raise InputError("upsert_overviews got the same overview id twice in one batch")
    return [checked_overview(o, dim) for o in overviews]


class MilvusRows:
    # -- row conversion --------------------------------------------------------------------
    def _memory_row(self, m: ShortTermMemory) -> dict[str, Any]:
        assert self._text_dim is not None
        mid = _check_id(m.id, "memory id")
        return {
            "id": mid,
            "stream_id": _check_stream(m.stream_id),
            "t_start": _check_time(m.t_start, f"{mid}: t_start"),
            "t_end": _check_time(m.t_end, f"{mid}: t_end"),
            "vector": _vector(m.vector, self._text_dim, f"memory {mid} vector"),
            "transcript_text": _truncate_utf8(m.transcript_text, TEXT_MAX_BYTES),
            "visual_text": _truncate_utf8(m.visual_text, TEXT_MAX_BYTES),
            "ocr_text": _truncate_utf8(m.ocr_text, TEXT_MAX_BYTES),
            "transcript": _json_field(
                {
                    "items": [{"t_start": p.t_start, "t_end": p.t_end, "text": p.text} for p in m.transcript],
                    # non-speech sound observations ride with the transcript (no schema change)
                    "sounds": [
                        {
                            "t_start": o.t_start,
                            "t_end": o.t_end,
                            "kind": o.kind,
                            "confidence": o.confidence,
                            "description": o.description,
                        }
                        for o in m.sounds
                    ],
                },
                mid,
                "transcript",
            ),
            "frames": _json_field(
                {
                    "items": [
                        {
                            "t": f.t,
                            "labels": [[str(lbl), float(p)] for lbl, p in f.labels],
                            "colours": list(f.colours),
                            "ocr_text": f.ocr_text,
                            "description": f.description,
                            "people": int(f.people),
                            "faces": int(f.faces),
                            "quality": f.quality,
                            "guesses": [[str(g), float(p)] for g, p in f.guesses],
                            "part_guesses": [[str(g), float(p)] for g, p in f.part_guesses],
                        }
                        for f in m.frames
                    ]
                },
                mid,
                "frames",
            ),
            "snippets": _json_field(
                {
                    "items": [{"uri": s.uri, "t_start": s.t_start, "t_end": s.t_end} for s in m.snippets],
                    # the thumbnail rides with the snippets (no schema change; "" when none)
                    **({"thumbnail": str(m.thumbnail_uri)} if m.thumbnail_uri else {}),
                },
                mid,
                "snippets",
            ),
            "metadata": _json_field(dict(m.metadata), mid, "metadata"),
            "children": {"vectors": [], "frames": []},  # filled in by upsert_memories
        }

    def _embedding_rows(self, m: ShortTermMemory) -> list[dict[str, Any]]:
        assert self._text_dim is not None
        rows = []
        for i, e in enumerate(m.embeddings):
            modality = str(e.modality)
            if not _MODALITY.fullmatch(modality):
                raise InputError(f"memory {m.id}: invalid embedding modality {modality!r}")
            vid = vector_id(m.id, modality, i)
            rows.append(
                {
                    "id": _check_id(vid, "vector id"),
                    "memory_id": m.id,
                    "stream_id": m.stream_id,
                    "t_start": _check_time(e.t_start, f"{vid}: t_start"),
                    "t_end": _check_time(e.t_end, f"{vid}: t_end"),
                    "ord": i,
                    "modality": modality,
                    "text": _truncate_utf8(e.text, TEXT_MAX_BYTES),
                    "vector": _vector(e.vector, self._text_dim, f"embedding {vid}"),
                }
            )
        return rows

    def _frame_rows(self, m: ShortTermMemory) -> list[dict[str, Any]]:
        if not m.frame_features:
            return []
        if self._feature_dim is None:
            raise StoreError(f"the store at {self.uri} has no frame-feature collection")
        rows = []
        for i, (t, feat) in enumerate(m.frame_features):
            fid = vector_id(m.id, "f", i)
            tt = _check_time(t, f"{fid}: t")
            rows.append(
                {
                    "id": _check_id(fid, "frame id"),
                    "memory_id": m.id,
                    "stream_id": m.stream_id,
                    "t_start": tt,
                    "t_end": tt,
                    "ord": i,
                    "vector": _vector(feat, self._feature_dim, f"frame feature {fid}"),
                }
            )
        return rows

    @staticmethod
    def _memory_from_row(r: dict[str, Any]) -> ShortTermMemory:
        transcript = [
            TranscriptPiece(float(p["t_start"]), float(p["t_end"]), str(p.get("text", "")))
            for p in _items(r.get("transcript"))
        ]
        frames = [
            FrameObservation(
                t=float(f["t"]),
                labels=[(str(lbl), float(p)) for lbl, p in f.get("labels", [])],
                colours=[str(c) for c in f.get("colours", [])],
                ocr_text=str(f.get("ocr_text", "")),
                description=str(f.get("description", "")),
                people=int(f.get("people", 0) or 0),
                faces=int(f.get("faces", 0) or 0),
                quality=str(f.get("quality", "")),
                guesses=[(str(g), float(p)) for g, p in f.get("guesses", [])],
                part_guesses=[(str(g), float(p)) for g, p in f.get("part_guesses", [])],
            )
            for f in _items(r.get("frames"))
        ]
        tr = r.get("transcript")
        sounds = [
            SoundObservation(
                float(o["t_start"]),
                float(o["t_end"]),
                str(o.get("kind", "")),
                float(o.get("confidence", 0.0)),
                str(o.get("description", "")),
            )
            for o in (tr.get("sounds", []) if isinstance(tr, dict) else [])
        ]
        snippets = [
            SnippetRef(str(s["uri"]), float(s["t_start"]), float(s["t_end"]))
            for s in _items(r.get("snippets"))
        ]
        sn = r.get("snippets")
        thumbnail = str(sn.get("thumbnail") or "") if isinstance(sn, dict) else ""
        return ShortTermMemory(
            id=r["id"],
            stream_id=r["stream_id"],
            t_start=float(r["t_start"]),
            t_end=float(r["t_end"]),
            vector=_f32(r["vector"]),
            transcript=transcript,
            frames=frames,
            snippets=snippets,
            metadata=dict(r.get("metadata") or {}),
            sounds=sounds,
            thumbnail_uri=thumbnail,
        )

    def _event_row(self, e: ThetaEvent) -> dict[str, Any]:
        assert self._text_dim is not None
        eid = _check_id(e.id, "event id")
        mv = np.asarray(e.vector, dtype=np.float32).reshape(-1)
        if mv.size not in (0, self._text_dim) or not np.all(np.isfinite(mv)):
            raise InputError(f"event {eid}: vector must be finite with {self._text_dim} dimensions")
        return {
            "id": eid,
            "stream_id": _check_stream(e.stream_id),
            "memory_id": _check_id(e.memory_id, "memory id"),
            "t_start": _check_time(e.t_start, f"{eid}: t_start"),
            "t_end": _check_time(e.t_end, f"{eid}: t_end"),
            "summary": _truncate_utf8(e.summary, SUMMARY_MAX_BYTES),
            "memory_vector": _b64_vector(mv),
            "visual_context": _json_field({"items": list(e.visual_context)}, eid, "visual_context"),
            "audio_context": _json_field({"items": list(e.audio_context)}, eid, "audio_context"),
            "metadata": _json_field(dict(e.metadata), eid, "metadata"),
            "vector": _vector(e.summary_vector, self._text_dim, f"event {eid} summary_vector"),
        }

    @staticmethod
    def _event_from_row(r: dict[str, Any]) -> ThetaEvent:
        return ThetaEvent(
            id=r["id"],
            stream_id=r["stream_id"],
            memory_id=r["memory_id"],
            t_start=float(r["t_start"]),
            t_end=float(r["t_end"]),
            summary=r.get("summary", ""),
            summary_vector=_f32(r.get("vector", [])),
            vector=_from_b64(r.get("memory_vector", "")),
            visual_context=[str(x) for x in _items(r.get("visual_context"))],
            audio_context=[str(x) for x in _items(r.get("audio_context"))],
            metadata=dict(r.get("metadata") or {}),
        )

    @staticmethod
    def _overview_row(o: StreamOverview) -> dict[str, Any]:
        """The row of an overview already passed through :func:`checked_overview`."""
        return {
            "id": o.id,
            "stream_id": o.stream_id,
            "t_start": o.t_start,
            "t_end": o.t_end,
            "scope": o.scope,
            "text": _truncate_utf8(o.text, SUMMARY_MAX_BYTES),
            "facets": _json_field(o.facets, o.id, "facets"),
            "events": o.events,
            "updated_at": o.updated_at,
            "vector": o.vector.tolist(),
        }

    @staticmethod
    def _overview_from_row(r: dict[str, Any]) -> StreamOverview:
        """An overview from its row; without a ``vector`` field (a light listing) the vector
        is empty, as for events."""
        return StreamOverview(
            id=r["id"],
            stream_id=r["stream_id"],
            t_start=float(r["t_start"]),
            t_end=float(r["t_end"]),
            scope=r["scope"],
            text=r.get("text", ""),
            vector=_f32(r.get("vector", [])),
            facets={str(k): [str(x) for x in v] for k, v in (r.get("facets") or {}).items()},
            events=int(r.get("events", 0)),
            updated_at=float(r.get("updated_at", 0.0)),
        )

    @staticmethod
    def _stream_from_row(r: dict[str, Any]) -> StreamInfo:
        return StreamInfo(
            stream_id=r["stream_id"],
            source=r.get("source", ""),
            t_end=float(r["t_end"]),
            memories=int(r["memories"]),
            events=int(r["events"]),
            updated_at=float(r["updated_at"]),
            metadata=dict(r.get("metadata") or {}),
        )

