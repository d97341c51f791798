"""Who may call the server, and see which streams.

Keys come from ``api_keys_file``, each scoped to stream ids or to all (``["*"]``). A call's
scope is the intersection of what it asks for and what its key may see; naming a stream outside
the key is PERMISSION_DENIED, and an id outside it is NOT_FOUND with the same message as an id
that does not exist, so a key cannot probe for other tenants' records. Keys are compared by
their SHA-256 digests, so the lookup time does not depend on how much of a key is right.
"""

from __future__ import annotations

import hashlib
import json
import logging
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import tomllib

from episodic.config import Settings
from episodic.core.errors import ConfigError, InputError
from episodic.core.records import validate_stream_id

log = logging.getLogger(__name__)

MIN_API_KEY_CHARS = 16
ALL_STREAMS = "*"


class ApiError(Exception):
    """A failure the caller should see as exactly this status and message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- access control ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Caller:
    """Who is calling: a key fingerprint (for logs, never the key) and the streams it may see
    (None = all streams)."""

    key_id: str
    streams: frozenset[str] | None

    def may_see(self, stream_id: str) -> bool:
        return self.streams is None or stream_id in self.streams

    def scope(self, requested: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """The streams a call may touch: the requested ones if all are allowed, else
        PERMISSION_DENIED; with none requested, everything the key allows (None = all)."""
        if requested is None:
            return None if self.streams is None else tuple(sorted(self.streams))
        denied = [s for s in requested if not self.may_see(s)]
        if denied:
            raise ApiError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this API key may not read stream(s) {', '.join(map(repr, denied[:5]))}",
            )
        return requested


ANONYMOUS = Caller(key_id="anonymous", streams=None)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class ApiKeys:
    """The configured API keys: digest → allowed streams (None = all)."""

    def __init__(self, mapping: dict[str, list[str]], source: str = "api keys") -> None:
        self._scopes: dict[bytes, Caller] = {}
        for key, streams in mapping.items():
            if not isinstance(key, str) or len(key) < MIN_API_KEY_CHARS or not key.isprintable() or key != key.strip():
                raise ConfigError(
                    f"{source}: every API key must be at least {MIN_API_KEY_CHARS} printable "
                    "characters without surrounding spaces (e.g. `python -c 'import secrets; "
                    "print(secrets.token_urlsafe(32))'`)"
                )
            if not isinstance(streams, list) or not streams or not all(isinstance(s, str) for s in streams):
                raise ConfigError(
                    f"{source}: the value of each key must be a non-empty list of stream ids "
                    'or ["*"] for all streams'
                )
            if ALL_STREAMS in streams:
                allowed = None
            else:
                try:
                    allowed = frozenset(validate_stream_id(s) for s in streams)
                except InputError as exc:
                    raise ConfigError(f"{source}: {exc}") from None
            key_id = _digest(key).hex()[:12]
            self._scopes[_digest(key)] = Caller(key_id=key_id, streams=allowed)

    @classmethod
    def from_file(cls, path: str | Path) -> ApiKeys:
        """Read a TOML file (``"<key>" = ["cam1"]``, optionally under ``[api_keys]``) or a
        JSON object of the same shape (when the name ends in ``.json``)."""
        p = Path(path).expanduser()
        try:
            text = p.read_text(encoding="utf-8")
            mode = p.stat().st_mode
        except OSError as exc:
            raise ConfigError(f"cannot read api_keys_file {p}: {exc.strerror or exc}") from None
        # other users, not the group: Kubernetes mounts secrets group-readable (fsGroup)
        if mode & stat.S_IROTH:
            log.warning("api_keys_file %s is readable by every user; chmod 600 (or 640) it", p)
        try:
            data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"api_keys_file {p} is not valid {p.suffix.lstrip('.') or 'TOML'}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"api_keys_file {p} must hold a mapping of key → stream ids")
        if set(data) == {"api_keys"} and isinstance(data["api_keys"], dict):
            data = data["api_keys"]
        return cls(data, source=f"api_keys_file {p}")

    def __len__(self) -> int:
        return len(self._scopes)

    def by_key_id(self, key_id: str) -> Caller | None:
        """The caller whose key has this fingerprint (a signed media URL names it), or None
        when no configured key has it (a key removed since). Without keys: anonymous only."""
        if not self._scopes:
            return ANONYMOUS if key_id == ANONYMOUS.key_id else None
        return next((c for c in self._scopes.values() if c.key_id == key_id), None)

    def authenticate(self, metadata: tuple[tuple[str, Any], ...] | None) -> Caller:
        """The caller for a call's metadata, or UNAUTHENTICATED."""
        if not self._scopes:
            return ANONYMOUS
        presented: set[str] = set()
        for name, value in metadata or ():
            if not isinstance(value, str):
                continue
            if name == "authorization":
                scheme, _, token = value.strip().partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    presented.add(token.strip())
            elif name == "x-api-key" and value.strip():
                presented.add(value.strip())
        if not presented:
            raise ApiError(
                grpc.StatusCode.UNAUTHENTICATED,
                "missing API key: send metadata `authorization: Bearer <key>` or `x-api-key: <key>`",
            )
        if len(presented) > 1:
            raise ApiError(grpc.StatusCode.UNAUTHENTICATED, "more than one API key was sent")
        caller = self._scopes.get(_digest(presented.pop()))
        if caller is None:
            raise ApiError(grpc.StatusCode.UNAUTHENTICATED, "invalid API key")
        return caller


def load_api_keys(settings: Settings) -> ApiKeys:
    return ApiKeys.from_file(settings.api_keys_file) if settings.api_keys_file else ApiKeys({})


