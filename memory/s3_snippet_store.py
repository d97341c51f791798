"""C_i in an object store: the snippets of :mod:`.snippet_store`, kept in an S3-API bucket.

Selected by ``snippet_uri = "s3://bucket/prefix"`` (AWS S3, MinIO, Ceph RGW, any server that
speaks the S3 API; ``s3_endpoint_url`` names a self-hosted one). Needs boto3 (the ``s3`` extra).

Layout and URIs: object ``<prefix>/<stream_id>/<segment_id>.mp4`` (``.m4a`` without video),
handed to the memory records as ``s3://<bucket>/<prefix>/<stream_id>/<segment_id>.mp4``, and the
segment's thumbnail beside it as ``<segment_id>.jpg`` (deleted, listed and read like a snippet). The
bytes are exactly what :class:`~.snippet_store.FileSnippetStore` writes: both stores encode
with the one :class:`~.snippet_store.SnippetEncoder` (to a local temporary file, which is then
uploaded with one PUT: an object is never seen half-written, and a re-put replaces it whole).

Reading: ``open(uri)`` gives a readable, seekable binary file. ``path_for(uri)`` gives a local
file for readers that need one (PyAV decoding for re-listening and looking again): a copy in a
bounded cache under ``<data_dir>/snippet-cache/<bucket>/<prefix>/``. Each call asks the
server for the object's ETag (one HEAD request), so a snippet replaced by a re-ingest in
another process is never read stale; the copy is downloaded only when its ETag changed or it is
not cached. The cache holds at most ``snippet_cache_mib``: once past it, the least recently
used copies are removed, except those used in the last ``CACHE_GRACE_S`` seconds (a reader,
possibly in another process, may be about to open them), so the cache can exceed the limit by
what is being read right now. ``open`` reads through the same cache.

Credentials: the standard boto3 chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/
``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and ``~/.aws``, an instance or pod role), unless
``s3_access_key_id``/``s3_secret_access_key`` are set (best through the environment:
``EPISODIC_S3_ACCESS_KEY_ID``, ``EPISODIC_S3_SECRET_ACCESS_KEY``, never in a config file that
is shared). Errors: an unknown bucket, refused credentials or an unreachable endpoint are a
:class:`StoreError` that says which; a URI outside this bucket and prefix, or a snippet that
is not there, is an :class:`InputError` (as for the file store).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import ConfigError, EpisodicError, InputError, StoreError
from episodic.core.records import STREAM_ID_PATTERN, SnippetRef, validate_stream_id
from episodic.memory.snippet_store import (
    FILE_SUFFIXES,
    STALE_TMP_S,
    THUMBNAIL_SUFFIX,
    TMP_SUFFIX,
    SnippetEncoder,
    prepare_snippet,
    validate_segment_id,
)

CACHE_GRACE_S = 60.0  # a cached copy used this recently is never evicted
CONTENT_TYPES = {".mp4": "video/mp4", ".m4a": "audio/mp4", THUMBNAIL_SUFFIX: "image/jpeg"}
COPY_CHUNK = 1024 * 1024
_MISSING = {"404", "NoSuchKey", "NotFound"}
_REFUSED = {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
            "ExpiredToken", "AllAccessDisabled"}


def make_s3_client(settings: Settings) -> Any:
    """A boto3 S3 client for the configured endpoint, region, addressing style and credentials."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise ConfigError(
            "snippet_uri = s3://… needs boto3: pip install 'episodic[s3]' (or -e '.[s3]')"
        ) from None
    style = settings.s3_addressing_style
    if style == "auto":  # self-hosted servers rarely have a DNS name per bucket
        style = "path" if settings.s3_endpoint_url else "auto"
    config = Config(
        s3={"addressing_style": style},
        retries={"max_attempts": 5, "mode": "standard"},
        connect_timeout=10,
        read_timeout=60,
        # checksums only where the API requires them: servers other than AWS (older MinIO,
        # Ceph) refuse the CRC32 trailers boto3 >= 1.36 sends by default
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    session = boto3.session.Session(
        aws_access_key_id=settings.s3_access_key_id or None,
        aws_secret_access_key=settings.s3_secret_access_key or None,
        region_name=settings.s3_region or None,
    )
    return session.client("s3", endpoint_url=settings.s3_endpoint_url or None, config=config)


class _Cache:
    """Local copies of objects: ``<root>/<stream>/<segment>.<etag>.<suffix>``, LRU by mtime."""

    def __init__(self, root: Path, limit_bytes: int) -> None:
        self.root = root
        self.limit_bytes = int(limit_bytes)
        self._lock = threading.Lock()

    @staticmethod
    def _tag(etag: str) -> str:
        tag = str(etag).strip().strip('"')
        if re.fullmatch(r"[0-9A-Za-z-]{1,64}", tag):
            return tag
        import hashlib

        return hashlib.sha1(tag.encode()).hexdigest()

    def path(self, stream: str, name: str, etag: str) -> Path:
        stem, suffix = name[: -len(Path(name).suffix)], Path(name).suffix
        return self.root / stream / f"{stem}.{self._tag(etag)}{suffix}"

    def versions(self, stream: str, name: str) -> list[Path]:
        """Every cached copy of one object, whatever its ETag."""
        stem, suffix = name[: -len(Path(name).suffix)], Path(name).suffix
        pattern = re.compile(re.escape(stem) + r"\.[0-9A-Za-z-]{1,64}" + re.escape(suffix))
        folder = self.root / stream
        try:
            return [p for p in folder.iterdir() if pattern.fullmatch(p.name)]
        except FileNotFoundError:
            return []

    def lookup(self, stream: str, name: str, etag: str) -> Path | None:
        path = self.path(stream, name, etag)
        try:
            os.utime(path)  # used now: last in line for eviction
        except FileNotFoundError:
            return None
        return path if path.is_file() else None

    def temp(self, stream: str, name: str) -> Path:
        folder = self.root / stream
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"

    def add(self, tmp: Path, stream: str, name: str, etag: str) -> Path:
        final = self.path(stream, name, etag)
        os.replace(tmp, final)
        for old in self.versions(stream, name):
            if old != final:
                with contextlib.suppress(FileNotFoundError):
                    old.unlink()
        self.evict()
        return final

    def drop(self, stream: str, name: str) -> None:
        for old in self.versions(stream, name):
            with contextlib.suppress(FileNotFoundError):
                old.unlink()

    def usage(self) -> int:
        return sum(size for _, size, _ in self._files())

    def _files(self) -> list[tuple[float, int, Path]]:
        out = []
        for dirpath, _, files in os.walk(self.root):
            for fname in files:
                p = Path(dirpath, fname)
                try:
                    st = p.lstat()
                except FileNotFoundError:
                    continue
                out.append((st.st_mtime, st.st_size, p))
        return out

    def evict(self) -> int:
        """Remove the least recently used copies until the cache fits its limit (never one
        used in the last CACHE_GRACE_S seconds), and temporary files of crashed downloads."""
        removed = 0
        with self._lock:
            now = time.time()
            files = []
            for mtime, size, p in self._files():
                if p.name.startswith(".") and p.name.endswith(TMP_SUFFIX):
                    if now - mtime > STALE_TMP_S:
                        with contextlib.suppress(FileNotFoundError):
                            p.unlink()
                    continue
                files.append((mtime, size, p))
            total = sum(size for _, size, _ in files)
            for mtime, size, p in sorted(files, key=lambda f: f[0]):
                if total <= self.limit_bytes or now - mtime < CACHE_GRACE_S:
                    break
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
                    removed += 1
                total -= size
        return removed


class S3SnippetStore:
    """SnippetStore in an S3-API bucket (see the module docstring)."""

    page_size = 1000  # keys per listing request (S3's maximum)
    delete_batch = 1000  # keys per DeleteObjects request (S3's maximum)

    def __init__(self, settings: Settings, client: Any = None) -> None:
        location = settings.snippet_s3_location
        if location is None:
            raise ConfigError("S3SnippetStore needs snippet_uri = s3://bucket[/prefix]")
        self.settings = settings
        self.bucket, self.prefix = location
        self.encoder = SnippetEncoder(settings)
        cache_root = Path(settings.resolved_snippet_cache_dir).expanduser().absolute() / self.bucket
        if self.prefix:
            cache_root = cache_root.joinpath(*self.prefix.split("/"))
        self.cache = _Cache(cache_root, int(settings.snippet_cache_mib) * 1024 * 1024)
        self._client = client
        self._client_lock = threading.Lock()
        if client is None:
            try:
                import boto3  # noqa: F401 - a missing extra is a configuration error, said now
            except ImportError:
                raise ConfigError(
                    "snippet_uri = s3://… needs boto3: pip install 'episodic[s3]' (or -e '.[s3]')"
                ) from None

    # -- naming ----------------------------------------------------------------------------
    @property
    def root_uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def describe(self) -> str:
        where = self.settings.s3_endpoint_url
        return self.root_uri + (f" at {where}" if where else "")

    def _stream_prefix(self, stream_id: str) -> str:
        validate_stream_id(stream_id)
        if not STREAM_ID_PATTERN.fullmatch(stream_id):  # re.match + $ lets "a\n" through
            raise InputError(f"invalid stream id {stream_id!r}")
        return f"{self.prefix}/{stream_id}/" if self.prefix else f"{stream_id}/"

    def uri_for_key(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def _parse(self, uri: str) -> tuple[str, str, str]:
        """``(key, stream_id, file name)`` of a URI under this bucket and prefix; anything
        else (another scheme, bucket or prefix, '..', escapes, not a snippet name) is refused."""
        if not isinstance(uri, str) or not uri:
            raise InputError(f"not a snippet URI: {uri!r}")
        outside = InputError(f"snippet URI {uri!r} is not under {self.root_uri}")
        if "%" in uri or "\\" in uri or any(ord(c) < 33 for c in uri):
            raise outside
        try:
            parts = urllib.parse.urlsplit(uri)
        except ValueError:
            raise outside from None
        if parts.scheme != "s3" or parts.netloc != self.bucket or parts.query or parts.fragment:
            raise outside
        key = parts.path[1:] if parts.path.startswith("/") else ""
        head = f"{self.prefix}/" if self.prefix else ""
        if not key.startswith(head):
            raise outside
        pieces = key[len(head) :].split("/")
        if len(pieces) != 2:
            raise outside
        stream, name = pieces
        suffix = Path(name).suffix
        if not STREAM_ID_PATTERN.fullmatch(stream) or suffix not in FILE_SUFFIXES:
            raise outside
        try:
            validate_segment_id(name[: -len(suffix)])
        except InputError:
            raise outside from None
        return key, stream, name

    # -- calling S3 ------------------------------------------------------------------------
    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = make_s3_client(self.settings)
            return self._client

    def _error(self, exc: Exception, what: str, uri: str | None = None, bucket: bool = False) -> EpisodicError:
        """The EpisodicError for a botocore error: StoreError, or InputError for a snippet
        ``uri`` that is not there. ``bucket``: the call was about the bucket itself (a HEAD
        request's 404 has no code, so only then does it mean "no such bucket")."""
        from botocore.exceptions import (
            ClientError,
            NoCredentialsError,
            PartialCredentialsError,
        )
        from botocore.exceptions import (
            ConnectionError as BotoConnectionError,
        )

        if isinstance(exc, ClientError):
            err = exc.response.get("Error", {})
            code = str(err.get("Code", ""))
            status = str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
            if code == "NoSuchBucket" or (bucket and (code in _MISSING or status == "404")):
                return StoreError(f"S3 bucket {self.bucket!r} does not exist ({self.describe()}): "
                                  "create it, or fix snippet_uri / s3_endpoint_url")
            if uri is not None and (code in _MISSING or status == "404"):
                return InputError(f"no snippet at {uri}")
            if code in _REFUSED or status == "403":
                return StoreError(f"S3 refused to {what} in {self.describe()} ({code or status}): check "
                                  "the credentials (EPISODIC_S3_ACCESS_KEY_ID / EPISODIC_S3_SECRET_ACCESS_KEY "
                                  "or the AWS chain) and the bucket's permissions")
            message = err.get("Message") or code or status
            return StoreError(f"S3 could not {what} in {self.describe()}: {message}")
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            return StoreError(f"no S3 credentials for {self.describe()}: set EPISODIC_S3_ACCESS_KEY_ID and "
                              "EPISODIC_S3_SECRET_ACCESS_KEY, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile or a role")
        if isinstance(exc, BotoConnectionError):
            return StoreError(f"cannot reach the S3 endpoint of {self.describe()}: {exc}")
        return StoreError(f"S3 could not {what} in {self.describe()}: {exc}")

    def _call(
        self, what: str, fn: Callable[..., Any], *, uri: str | None = None, bucket: bool = False, **kwargs: Any
    ) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, what, uri, bucket) from None

    def _list(self, prefix: str) -> Iterator[dict[str, Any]]:
        """Every object under ``prefix`` (paginated)."""
        from botocore.exceptions import BotoCoreError, ClientError

        paginator = self.client().get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self.bucket, Prefix=prefix, PaginationConfig={"PageSize": self.page_size})
        try:
            for page in pages:
                yield from page.get("Contents", []) or []
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, "list snippets") from None

    def _delete_keys(self, keys: Sequence[str]) -> int:
        removed = 0
        for i in range(0, len(keys), self.delete_batch):
            batch = keys[i : i + self.delete_batch]
            reply = self._call(
                "delete snippets",
                self.client().delete_objects,
                Bucket=self.bucket,
                Delete={"Objects": [{"Key": k} for k in batch], "Quiet": False},
            )
            errors = reply.get("Errors") or []
            if errors:
                first = errors[0]
                raise StoreError(f"S3 did not delete {len(errors)} snippet(s) in {self.describe()}, e.g. "
                                 f"{first.get('Key')}: {first.get('Code')} {first.get('Message', '')}".rstrip())
            removed += len(reply.get("Deleted") or [])
        return removed

    def check(self, write: bool = False) -> str:
        """That the bucket exists and these credentials may use it (and, with ``write``, put
        and delete an object under the prefix); StoreError saying what is wrong otherwise."""
        client = self.client()
        self._call("reach the bucket", client.head_bucket, bucket=True, Bucket=self.bucket)
        if write:
            head = f"{self.prefix}/" if self.prefix else ""
            key = f"{head}.episodic-check-{uuid.uuid4().hex}"
            self._call("write", client.put_object, Bucket=self.bucket, Key=key, Body=b"ok")
            self._call("delete", client.delete_object, Bucket=self.bucket, Key=key)
            return f"{self.describe()}: bucket reachable, writable"
        return f"{self.describe()}: bucket reachable"

    # -- writing ---------------------------------------------------------------------------
    def put(
        self,
        stream_id: str,
        segment_id: str,
        t_start: float,
        t_end: float,
        video_frames: Sequence[Any],
        audio: np.ndarray | None,
        sample_rate_hz: int,
        fps: float,
        audio_t_start: float | None = None,
    ) -> SnippetRef:
        """Encode one segment exactly as the file store does and upload it (one PUT, so a
        re-put replaces the object whole); arguments as ``FileSnippetStore.put``."""
        validate_segment_id(segment_id)
        head = self._stream_prefix(stream_id)
        snippet = prepare_snippet(segment_id, t_start, t_end, video_frames, audio, sample_rate_hz, fps,
                                  audio_t_start)
        name = f"{segment_id}{snippet.suffix}"
        key = head + name
        tmp = self.cache.temp(stream_id, name)
        try:
            self.encoder.encode(tmp, snippet)
            with open(tmp, "rb") as fh:
                self._call("store a snippet", self.client().put_object, Bucket=self.bucket, Key=key, Body=fh,
                           ContentType=CONTENT_TYPES[snippet.suffix])
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()  # readers download what they need; the writer keeps no copy
        self.cache.drop(stream_id, name)  # an older copy of a re-put segment
        # A segment that changed kind (video ↔ audio-only) must not leave the old object.
        other = f"{segment_id}{'.m4a' if snippet.suffix == '.mp4' else '.mp4'}"
        self._call("delete a replaced snippet", self.client().delete_object, Bucket=self.bucket, Key=head + other)
        self.cache.drop(stream_id, other)
        return SnippetRef(uri=self.uri_for_key(key), t_start=snippet.t_start, t_end=snippet.t_end)

    def put_thumbnail(self, stream_id: str, segment_id: str, jpeg: bytes) -> str:
        """Upload a segment's thumbnail (JPEG bytes) beside its snippet (one PUT); its URI."""
        validate_segment_id(segment_id)
        name = f"{segment_id}{THUMBNAIL_SUFFIX}"
        key = self._stream_prefix(stream_id) + name
        self._call("store a thumbnail", self.client().put_object, Bucket=self.bucket, Key=key, Body=bytes(jpeg),
                   ContentType=CONTENT_TYPES[THUMBNAIL_SUFFIX])
        self.cache.drop(stream_id, name)  # an older copy of a re-put thumbnail
        return self.uri_for_key(key)

    # -- reading ---------------------------------------------------------------------------
    def path_for(self, uri: str) -> Path:
        """A local copy of the snippet (from the cache, downloaded when missing or changed):
        for readers that need a seekable file. InputError for a URI outside this bucket and
        prefix or a snippet that is not there."""
        key, stream, name = self._parse(uri)
        client = self.client()
        meta = self._call("read a snippet", client.head_object, uri=uri, Bucket=self.bucket, Key=key)
        etag = str(meta.get("ETag", ""))
        cached = self.cache.lookup(stream, name, etag) if etag else None
        if cached is not None:
            return cached
        return self._download(uri, key, stream, name)

    def _download(self, uri: str, key: str, stream: str, name: str) -> Path:
        from botocore.exceptions import BotoCoreError, ClientError

        reply = self._call("read a snippet", self.client().get_object, uri=uri, Bucket=self.bucket, Key=key)
        tmp = self.cache.temp(stream, name)
        try:
            with reply["Body"] as body, open(tmp, "wb") as out:
                try:
                    shutil.copyfileobj(body, out, COPY_CHUNK)
                except (ClientError, BotoCoreError) as exc:
                    raise self._error(exc, "read a snippet", uri) from None
                size = out.tell()
            expected = reply.get("ContentLength")
            if expected is not None and int(expected) != size:
                raise StoreError(f"S3 sent {size} of {expected} bytes of {uri}")
            # named by the ETag of the bytes received (a re-put between HEAD and GET is fine)
            return self.cache.add(tmp, stream, name, str(reply.get("ETag") or uuid.uuid4().hex))
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def open(self, uri: str) -> IO[bytes]:
        """The snippet's bytes, read-only and seekable (a cached local copy, which stays
        readable even if the cache evicts it meanwhile); URIs outside the store are refused."""
        path = self.path_for(uri)
        try:
            return open(path, "rb")  # noqa: SIM115 - the caller owns and closes it
        except FileNotFoundError:  # evicted between the two calls (only past the grace period)
            return open(self._download(uri, *self._parse(uri)), "rb")  # noqa: SIM115

    # -- housekeeping ----------------------------------------------------------------------
    def delete_stream(self, stream_id: str, keep_uris: set[str]) -> int:
        """Delete the stream's snippet objects not named in ``keep_uris``; returns how many."""
        head = self._stream_prefix(stream_id)
        keep: set[str] = set()
        for uri in keep_uris:
            with contextlib.suppress(InputError):
                keep.add(self._parse(uri)[0])
        doomed = []
        for obj in self._list(head):
            key = obj["Key"]
            name = key[len(head) :]
            if "/" in name or Path(name).suffix not in FILE_SUFFIXES or key in keep:
                continue
            doomed.append(key)
        removed = self._delete_keys(doomed)
        for key in doomed:
            self.cache.drop(stream_id, key[len(head) :])
        return removed

    def delete_uris(self, uris: Iterable[str]) -> int:
        """Delete exactly the snippets these URIs name; returns how many objects existed and
        were removed. Idempotent: one already gone is no error, and a URI this store does not
        hold (another scheme, bucket or prefix) is left alone."""
        by_stream: dict[str, set[str]] = {}
        for uri in uris:
            try:
                key, stream, name = self._parse(uri)
            except InputError:
                continue
            by_stream.setdefault(stream, set()).add(key)
            self.cache.drop(stream, name)
        doomed = []
        for stream, keys in by_stream.items():
            present = {obj["Key"] for obj in self._list(self._stream_prefix(stream))}
            doomed += sorted(keys & present)
        return self._delete_keys(doomed) if doomed else 0

    def bytes_used(self, stream_id: str | None = None) -> int:
        """Bytes of the objects of one stream, or under the whole prefix."""
        if stream_id is not None:
            head = self._stream_prefix(stream_id)
        else:
            head = f"{self.prefix}/" if self.prefix else ""
        return sum(int(obj.get("Size", 0)) for obj in self._list(head))

    def cache_bytes(self) -> int:
        """Bytes the local cache of copies holds now."""
        return self.cache.usage()
