"""Errors and guards of the HTTP API: one error body for everything, the gRPC status → HTTP
status mapping, and the checks every request passes before a handler sees it.

Every failure is ``{"error": {"code": "<gRPC status name>", "message": "…"}}`` with the HTTP
status of that code (:data:`HTTP_STATUS`); conditions only HTTP has use the nearest gRPC name
(413 RESOURCE_EXHAUSTED, 415 INVALID_ARGUMENT, 416 OUT_OF_RANGE, 405 UNIMPLEMENTED).

:class:`Guard` (plain ASGI, so media responses stream through untouched):

* an API key in the URL (``?api_key=``, ``?key=``) is refused with 400 before anything else,
  and never logged (uvicorn's access log, which prints query strings, is off; the line this
  module writes names the route template, never the URL);
* request bodies: ``application/json`` for the JSON routes and ``multipart/form-data`` for the
  upload, else 415; a body over the limit is 413, by its Content-Length or, without one, as
  soon as the bytes read pass it;
* security headers on every response: ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: no-referrer``, ``X-Frame-Options: DENY`` and a Content-Security-Policy
  (for the console: scripts and styles from this origin only, media and images from it and
  ``blob:``, no framing; for everything else nothing at all).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import parse_qsl

import grpc
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

log = logging.getLogger(__name__)
access_log = logging.getLogger("episodic.access")

Code = grpc.StatusCode
HTTP_STATUS: dict[str, int] = {
    "OK": 200,
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
_CODE_FOR_STATUS = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    405: "UNIMPLEMENTED", 406: "INVALID_ARGUMENT", 409: "ABORTED", 413: "RESOURCE_EXHAUSTED",
    415: "INVALID_ARGUMENT", 416: "OUT_OF_RANGE", 422: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
    501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
KEY_PARAMS = frozenset({"api_key", "apikey", "api-key", "key", "access_token", "token"})
MAX_MESSAGE_CHARS = 400


def http_status(code: str) -> int:
    """The HTTP status of a gRPC status name (500 for any other)."""
    return HTTP_STATUS.get(code, 500)


class ApiFailure(Exception):
    """A failure the HTTP caller sees as exactly this status, code and message."""

    def __init__(self, code: str, message: str, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or http_status(code)
        self.headers = headers or {}


def error_response(code: str, message: str, status: int | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS]}… ({len(message)} characters)"
    return JSONResponse({"error": {"code": code, "message": message}},
                        status_code=status or http_status(code), headers=headers)


def from_rpc_error(exc: grpc.RpcError) -> ApiFailure:
    """The failure an RPC's status stands for (RESOURCE_EXHAUSTED's retry hint becomes
    Retry-After, in whole seconds)."""
    code = exc.code() if hasattr(exc, "code") else None
    name = code.name if code is not None else "UNKNOWN"
    details = exc.details() if hasattr(exc, "details") else ""
    headers: dict[str, str] = {}
    trailing = dict(exc.trailing_metadata() or ()) if hasattr(exc, "trailing_metadata") else {}
    hint = trailing.get("retry-after-ms")
    if isinstance(hint, str) and hint.isdigit():
        headers["Retry-After"] = str(max(1, -(-int(hint) // 1000)))
        headers["X-Retry-After-Ms"] = hint
    if name == "UNAVAILABLE" and not details:
        details = "the server is unavailable"
    return ApiFailure(name, details or name.lower().replace("_", " "), headers=headers)


# -- exception handlers ----------------------------------------------------------------------------
def _failure(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiFailure)
    return error_response(exc.code, exc.message, exc.status, exc.headers)


def _rpc_error(request: Request, exc: Exception) -> JSONResponse:
    f = from_rpc_error(exc)  # type: ignore[arg-type]
    return error_response(f.code, f.message, f.status, f.headers)


def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    code = _CODE_FOR_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    message = exc.detail if isinstance(exc.detail, str) else code.lower().replace("_", " ")
    if status == 404 and message == "Not Found":
        message = "no such resource"
    return error_response(code, message, status, dict(exc.headers or {}))


def _where(loc: Any) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


def _validation(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own checks, in the one error body: a body that is not JSON is 400, a field of
    the wrong type or missing is 422 (both INVALID_ARGUMENT)."""
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        first = next(e for e in errors if e.get("type") == "json_invalid")
        reason = (first.get("ctx") or {}).get("error", "")
        return error_response("INVALID_ARGUMENT", f"the body is not valid JSON: {reason}".rstrip(": "), 400)
    parts = [f"{_where(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors[:5]]
    return error_response("INVALID_ARGUMENT", "; ".join(parts) or "invalid request", 422)


def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.error("HTTP %s %s failed", request.method, _route_of(request.scope), exc_info=exc)
    return error_response("INTERNAL", "internal error (details are in the server log)", 500)


def install_handlers(app: Any) -> None:
    app.add_exception_handler(ApiFailure, _failure)
    app.add_exception_handler(grpc.RpcError, _rpc_error)
    app.add_exception_handler(HTTPException, _http_exception)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(Exception, _internal)


# -- the guard -------------------------------------------------------------------------------------
CONSOLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "media-src 'self' blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
_COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def _route_of(scope: dict[str, Any]) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path:
        return str(path)
    p = scope.get("path", "")
    return "/v1/…" if p.startswith("/v1/") else "(console)"


class _TooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class Guard:
    """The checks every request passes (see the module's docstring), as ASGI middleware."""

    def __init__(self, app: Any, json_limit: int, upload_limit: int,
                 upload_paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.json_limit = json_limit
        self.upload_limit = upload_limit
        self.upload_paths = upload_paths

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        path: str = scope.get("path", "")
        status_seen = [0]
        csp = (API_CSP if path.startswith("/v1/") or path in ("/healthz", "/openapi.json")
               else CONSOLE_CSP).encode()

        async def guarded_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status_seen[0] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"content-security-policy",)]
                headers += _COMMON_HEADERS
                headers.append((b"content-security-policy", csp))
                if path.startswith("/v1/") and not any(k.lower() == b"cache-control" for k, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        try:
            refusal = self._refusal(scope, path)
            if refusal is not None:
                await refusal(scope, receive, guarded_send)
                return
            limit = self.upload_limit if path in self.upload_paths else self.json_limit
            await self.app(scope, self._limited(receive, limit), guarded_send)
        finally:
            access_log.info("http=%s route=%s code=%d ms=%.1f", scope.get("method", "?"), _route_of(scope),
                            status_seen[0], 1000 * (time.perf_counter() - started))

    def _refusal(self, scope: dict[str, Any], path: str) -> JSONResponse | None:
        query = scope.get("query_string", b"").decode("latin-1")
        if query:
            names = {k.lower() for k, _ in parse_qsl(query, keep_blank_values=True)}
            if names & KEY_PARAMS:
                return error_response(
                    "INVALID_ARGUMENT",
                    "an API key in the URL is refused (URLs end up in logs and histories): "
                    "send the key as Authorization: Bearer <key>", 400)
        method = scope.get("method", "GET")
        if method not in ("POST", "PUT", "PATCH") or not path.startswith("/v1/"):
            return None
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        ctype = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        want = "multipart/form-data" if path in self.upload_paths else "application/json"
        if ctype != want:
            return error_response("INVALID_ARGUMENT", f"send the body as {want} (got {ctype or 'no Content-Type'})", 415)
        length = headers.get(b"content-length")
        limit = self.upload_limit if path in self.upload_paths else self.json_limit
        if length is not None:
            if not length.isdigit():
                return error_response("INVALID_ARGUMENT", "Content-Length is not a number", 400)
            if int(length) > limit:
                return error_response("RESOURCE_EXHAUSTED", f"the request body is larger than {limit} bytes", 413)
        return None

    @staticmethod
    def _limited(receive: Any, limit: int) -> Any:
        """``receive`` that raises 413 once the body read passes ``limit`` bytes (a body sent
        without Content-Length, or longer than it said)."""
        seen = [0]

        async def limited() -> dict[str, Any]:
            message = await receive()
            if message.get("type") == "http.request":
                seen[0] += len(message.get("body", b""))
                if seen[0] > limit:
                    raise _TooLarge(limit)
            return message

        return limited


def json_dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
