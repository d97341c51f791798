"""Snippets and thumbnails over HTTP: what a ``<video>`` or ``<img>`` element fetches.

Two ways in, both ending at the servicer's own checks:

* ``Authorization: Bearer <key>``: the key is checked by the server's ApiKeys, as for a call;
* a signed URL (``?exp=&kid=&sig=``, :mod:`episodic.http_links`), as GetSegment and Search
  hand out: no header needed, and it opens exactly that path for the key id it names, still
  within what that key may see (resolved at each request).

The segment is then read through ``EpisodicServicer._segment`` (id validation, the key's scope,
NOT_FOUND alike for missing and foreign ids) and the file is opened through the snippet store
from the segment's record: never from the URL's text, so no path can be reached by naming it.
Snippets answer range requests (206 with Content-Range; 416 for a range that cannot be served;
``Accept-Ranges: bytes``), which video players need to seek.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import grpc
from fastapi import APIRouter, Request
from starlette.responses import Response, StreamingResponse

from episodic import api_records
from episodic import servicer as servicer_mod
from episodic.core.errors import InputError
from episodic.http_errors import ApiFailure
from episodic.http_links import snippet_path, thumbnail_path
from episodic.server_auth import ApiError, Caller

router = APIRouter()
CHUNK_BYTES = 256 * 1024
MAX_THUMBNAIL_BYTES = 4 * 1024 * 1024
_RANGE = re.compile(r"bytes=(\d{0,18})-(\d{0,18})")
BAD_SIGNATURE = ("the signed URL is invalid or has expired: get a new one (GetSegment, Search), "
                 "or send Authorization: Bearer <key>")


def _caller(request: Request, path: str) -> Caller:
    """Who is asking: the Authorization header's key, else the signed URL's key id."""
    ctx = request.app.state.episodic
    keys = ctx.servicer.keys
    auth = request.headers.get("authorization")
    if auth is not None:
        return keys.authenticate((("authorization", auth),))
    q = request.query_params
    if "sig" in q:
        kid = q.get("kid", "")
        if not ctx.signer.verify(path, q.get("exp", ""), kid, q["sig"]):
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, BAD_SIGNATURE)
        caller = keys.by_key_id(kid)
        if caller is None:  # the key was removed since the URL was made
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, BAD_SIGNATURE)
        return caller
    return keys.authenticate(())  # anonymous without keys, else UNAUTHENTICATED


def _index(text: str) -> int:
    if not text.isdigit() or len(text) > 6:
        raise InputError(f"the snippet index must be a whole number >= 0, got {text[:20]!r}")
    return int(text)


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """The one byte range ``header`` asks for, as (first, last) inclusive; None to send the
    whole file (several ranges: allowed by RFC 9110); ApiFailure 416 for a malformed range or
    one that starts past the end."""
    unsatisfiable = ApiFailure("OUT_OF_RANGE", f"the range {header[:60]!r} cannot be served: the file has {size} bytes",
                               416, {"Content-Range": f"bytes */{size}"})
    spec = header.strip()
    if "," in spec and spec.lower().startswith("bytes="):
        return None
    m = _RANGE.fullmatch(spec)
    if m is None or (not m.group(1) and not m.group(2)):
        raise unsatisfiable
    first, last = m.group(1), m.group(2)
    if not first:  # the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            raise unsatisfiable
        return max(0, size - n), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if start >= size or end < start:
        raise unsatisfiable
    return start, min(end, size - 1)


def _stream(f: Any, start: int, length: int) -> Iterator[bytes]:
    try:
        f.seek(start)
        left = length
        while left > 0:
            data = f.read(min(CHUNK_BYTES, left))
            if not data:
                return
            left -= len(data)
            yield data
    finally:
        f.close()


def _run(request: Request, method: str, path: str, work: Any) -> Response:
    """Authenticate, run ``work(caller)``, and log and map failures exactly as a call's."""
    started = time.perf_counter()
    caller: Caller | None = None
    try:
        caller = _caller(request, path)
        response = work(caller)
    except ApiFailure as exc:
        servicer_mod._finish(method, caller, grpc.StatusCode.OUT_OF_RANGE, started)
        raise exc from None
    except Exception as exc:
        code, message = servicer_mod._status_for(exc, method, caller)
        servicer_mod._finish(method, caller, code, started)
        raise ApiFailure(code.name, message) from None
    servicer_mod._finish(method, caller, grpc.StatusCode.OK, started)
    return response


@router.get("/v1/segments/{segment_id}/snippets/{index}", tags=["media"],
            summary="A snippet's bytes (video/mp4 or audio/mp4), with range requests",
            responses={200: {"content": {"video/mp4": {}, "audio/mp4": {}}}, 206: {"description": "Partial content"},
                       416: {"description": "Range not satisfiable"}})
def get_snippet(segment_id: str, index: str, request: Request) -> Response:
    """Bearer key or a signed URL (``exp``, ``kid``, ``sig`` from ``Snippet.url``/``Moment.snippet_url``)."""
    path = snippet_path(segment_id, int(index)) if index.isdigit() and len(index) <= 6 else ""

    def work(caller: Caller) -> Response:
        i = _index(index)
        servicer = request.app.state.episodic.servicer
        memory = servicer._segment(segment_id, caller)
        if i >= len(memory.snippets):
            raise ApiError(grpc.StatusCode.NOT_FOUND,
                           f"segment {memory.id!r} has {len(memory.snippets)} snippet(s); no index {i}")
        uri = memory.snippets[i].uri
        try:
            f = servicer.components.snippets.open(uri)
        except InputError:
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"the snippet file of segment {memory.id!r} is missing") from None
        try:
            size = f.seek(0, 2)
            header = request.headers.get("range")
            span = parse_range(header, size) if header else None
        except BaseException:
            f.close()
            raise
        headers = {"Accept-Ranges": "bytes", "Cache-Control": "private, max-age=600",
                   "Content-Disposition": "inline"}
        first, last = span if span is not None else (0, size - 1)
        headers["Content-Length"] = str(last - first + 1)
        if span is not None:
            headers["Content-Range"] = f"bytes {first}-{last}/{size}"
        status, ctype = (206 if span is not None else 200), api_records.snippet_content_type(uri)
        if request.method == "HEAD":  # what a player asks first: the size, and that ranges work
            f.close()
            return Response(None, status, headers, ctype)
        return StreamingResponse(_stream(f, first, last - first + 1), status, headers, ctype)

    return _run(request, "HttpSnippet", path, work)


@router.head("/v1/segments/{segment_id}/snippets/{index}", include_in_schema=False)
def head_snippet(segment_id: str, index: str, request: Request) -> Response:
    """GET's headers without the bytes (the same key and signature rules)."""
    return get_snippet(segment_id, index, request)


@router.get("/v1/segments/{segment_id}/thumbnail", tags=["media"],
            summary="A small JPEG of the segment's middle key frame (404 when it has none)",
            responses={200: {"content": {"image/jpeg": {}}}})
def get_thumbnail(segment_id: str, request: Request) -> Response:
    """Bearer key or a signed URL (``Segment.thumbnail_url``, ``Moment.thumbnail_url``)."""

    def work(caller: Caller) -> Response:
        servicer = request.app.state.episodic.servicer
        memory = servicer._segment(segment_id, caller)
        uri = api_records.segment_to_proto(memory).thumbnail_uri
        if not uri:
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"segment {memory.id!r} has no thumbnail")
        try:
            with servicer.components.snippets.open(uri) as f:
                data = f.read(MAX_THUMBNAIL_BYTES + 1)
        except InputError:
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"the thumbnail of segment {memory.id!r} is missing") from None
        if len(data) > MAX_THUMBNAIL_BYTES:
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"the thumbnail of segment {memory.id!r} is not a thumbnail")
        return Response(data, 200, {"Cache-Control": "private, max-age=600"}, "image/jpeg")

    return _run(request, "HttpThumbnail", thumbnail_path(segment_id), work)
