"""Signed media URLs: how a ``<video src>`` (which cannot send an Authorization header) reaches
a snippet or a thumbnail over the HTTP API, and nothing else.

A URL is ``<base>/v1/segments/<id>/snippets/<i>?exp=<unix>&kid=<key id>&sig=<hmac>`` where
``sig`` is HMAC-SHA256, under a secret of this server (``<data_dir>/http_media_secret``, made
0600 on first use), over the path, the expiry and the key id of the caller it was made for.
It is valid for about an hour and only for that path; the request it authorises is still
limited to what that key may see (the key id is resolved against the configured keys at each
request, so a removed key's URLs stop working, and a forgotten segment is gone). Deleting the
secret file revokes every URL at the next start.

:class:`MediaLinks` is what the servicer uses to fill ``Snippet.url``, ``Segment.thumbnail_url``,
``Moment.snippet_url`` and ``Moment.thumbnail_url`` when the HTTP API is on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from episodic.core.errors import ConfigError

log = logging.getLogger(__name__)

SECRET_FILE = "http_media_secret"
VALID_S = 3600  # a signed URL lives this long (at least; expiries are rounded up, below)
ROUND_S = 300  # expiries are rounded up to 5 minutes, so repeated answers give the same URL
MAX_AHEAD_S = VALID_S + 2 * ROUND_S  # an expiry further ahead than this was not made here
_KEY_ID = re.compile(r"[0-9a-f]{12}|anonymous")
_SIG = re.compile(r"[A-Za-z0-9_-]{43}")


def load_secret(data_dir: Path, secret_file: str = "") -> bytes:
    """The server's media-signing secret: ``secret_file`` when given (replicas share it), else
    ``<data_dir>/http_media_secret``, created (0600, 32 random bytes) on first use."""
    path = Path(secret_file).expanduser() if secret_file else Path(data_dir) / SECRET_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = secrets.token_hex(32).encode()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it meanwhile: use theirs
            return load_secret(data_dir, secret_file)
        except OSError as exc:
            raise ConfigError(f"cannot create {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        log.info("created the media URL signing secret %s", path)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    secret = raw.strip()
    if len(secret) < 32:
        raise ConfigError(f"{path} is too short to be a signing secret: delete it to make a new one")
    return secret


class Signer:
    """Signs and checks media paths for a key id."""

    def __init__(self, secret: bytes, clock: Any = time.time) -> None:
        self._secret = secret
        self._clock = clock

    def _mac(self, path: str, exp: int, key_id: str) -> str:
        msg = f"episodic-media-v1\n{path}\n{exp}\n{key_id}".encode("utf-8", "surrogatepass")
        digest = hmac.new(self._secret, msg, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def sign(self, path: str, key_id: str) -> str:
        """The query string (``exp=…&kid=…&sig=…``) that authorises ``path`` for ``key_id``."""
        now = int(self._clock())
        exp = (now + VALID_S + ROUND_S - 1) // ROUND_S * ROUND_S
        return f"exp={exp}&kid={key_id}&sig={self._mac(path, exp, key_id)}"

    def verify(self, path: str, exp: str, key_id: str, sig: str) -> bool:
        """Whether ``sig`` was made here for this path, expiry and key id and has not expired."""
        if not (exp.isdigit() and len(exp) <= 12 and _KEY_ID.fullmatch(key_id) and _SIG.fullmatch(sig)):
            return False
        when, now = int(exp), self._clock()
        if when < now or when > now + MAX_AHEAD_S:
            return False
        return hmac.compare_digest(self._mac(path, when, key_id), sig)


def snippet_path(segment_id: str, index: int) -> str:
    """The (unquoted) path a snippet is served at: what is signed."""
    return f"/v1/segments/{segment_id}/snippets/{index}"


def thumbnail_path(segment_id: str) -> str:
    return f"/v1/segments/{segment_id}/thumbnail"


class MediaLinks:
    """Signed absolute URLs of snippets and thumbnails, for the messages the servicer sends."""

    def __init__(self, base_url: str, signer: Signer) -> None:
        self.base_url = base_url.rstrip("/")
        self.signer = signer

    def url(self, path: str, key_id: str) -> str:
        return f"{self.base_url}{quote(path, safe='/@')}?{self.signer.sign(path, key_id)}"

    def segment(self, msg: Any, key_id: str) -> Any:
        """Fill a Segment message's ``snippets[].url`` and ``thumbnail_url``."""
        for i, snippet in enumerate(msg.snippets):
            snippet.url = self.url(snippet_path(msg.id, i), key_id)
        if msg.thumbnail_uri:
            msg.thumbnail_url = self.url(thumbnail_path(msg.id), key_id)
        return msg

    def events(self, msgs: list[Any], key_id: str, store: Any) -> None:
        """Fill Event messages' ``thumbnail_url`` (their segments read in one batch, without
        vectors, to know which have a thumbnail)."""
        memories = _memories(store, sorted({e.segment_id for e in msgs if e.segment_id}))
        for e in msgs:
            memory = memories.get(e.segment_id)
            if memory is not None and getattr(memory, "thumbnail_uri", ""):
                e.thumbnail_url = self.url(thumbnail_path(memory.id), key_id)

    def moments(self, msgs: list[Any], key_id: str, store: Any) -> None:
        """Fill Moment messages' ``snippet_url`` and ``thumbnail_url``: each moment's segment
        is read (one batched read, without vectors) to find which of its snippets the moment's
        ``snippet_uri`` is, and whether it has a thumbnail."""
        memories = _memories(store, sorted({m.segment_id for m in msgs if m.segment_id}))
        for m in msgs:
            memory = memories.get(m.segment_id)
            if memory is None:
                continue
            uris = [s.uri for s in memory.snippets]
            if uris:
                index = uris.index(m.snippet_uri) if m.snippet_uri in uris else 0
                m.snippet_url = self.url(snippet_path(memory.id, index), key_id)
            if getattr(memory, "thumbnail_uri", ""):
                m.thumbnail_url = self.url(thumbnail_path(memory.id), key_id)


def _memories(store: Any, ids: list[str]) -> dict[str, Any]:
    """The memories ``ids`` without vectors ({} when none, or when the read fails: the URLs
    are a convenience and the reply stands without them)."""
    if not ids:
        return {}
    try:
        if hasattr(store, "get_memories"):
            return dict(store.get_memories(ids, with_vectors=False))
        return {i: m for i in ids if (m := store.get_memory(i, with_vectors=False)) is not None}
    except Exception as exc:
        log.warning("media URLs left out: %s", exc)
        return {}
