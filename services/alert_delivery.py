"""Webhook delivery of alerts: signed, retried with backoff, never in the way of ingest.

The evaluator only writes an alert to the watch store (marked pending when its watch has a
webhook); a :class:`WebhookSender` thread in every process that forms memories or serves
(``ingest``, ``worker``, ``serve``) claims due alerts from the store and POSTs them. A
receiver that is down or slow delays only this thread; a process that stops leaves its
pending alerts in the store for the next sender. Claims are leases in the store, so two
senders never post the same alert at once.

Each request carries the alert as JSON (:meth:`Alert.to_dict`) and three headers:
``X-Episodic-Alert-Id``, ``X-Episodic-Timestamp`` (Unix seconds) and
``X-Episodic-Signature: sha256=<hex>``, the HMAC-SHA256 of ``"<timestamp>.<body>"`` under
the watch's secret (shown once when the watch is created). Receivers should recompute it
with a constant-time comparison and reject stale timestamps.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

from episodic.core.errors import EpisodicError
from episodic.core.interfaces import WatchStore
from episodic.core.watches import Alert

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Episodic-Signature"
TIMESTAMP_HEADER = "X-Episodic-Timestamp"
ALERT_ID_HEADER = "X-Episodic-Alert-Id"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of ``timestamp + "." + body`` under ``secret``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def backoff_s(attempts: int, base_s: float, max_s: float) -> float:
    """Delay before attempt ``attempts + 1``: base, 2×base, 4×base … capped at max."""
    return float(min(max_s, base_s * (2 ** max(0, attempts))))


class WebhookSender:
    """Delivers the store's pending webhook alerts from a background thread."""

    def __init__(self, store: WatchStore, *, timeout_s: float = 5.0, max_attempts: int = 6,
                 backoff_base_s: float = 1.0, backoff_max_s: float = 300.0, poll_s: float = 0.5,
                 on_result: Callable[[Alert, bool], None] | None = None) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.poll_s = poll_s
        self.on_result = on_result
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> WebhookSender:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="episodic-webhooks", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """A new alert is pending: look now rather than at the next poll."""
        self._wake.set()

    def stop(self, grace_s: float = 3.0) -> None:
        """Stop the thread, then post once more what is due (each post waits at most
        ``grace_s``): an ``ingest`` that just raised alerts delivers them before it exits;
        whatever fails stays pending in the store for the next sender."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout_s + 1)
        if grace_s > 0:
            timeout, self.timeout_s = self.timeout_s, min(self.timeout_s, grace_s)
            try:
                self.deliver_due()
            except EpisodicError as exc:
                log.warning("webhook delivery at exit: %s", exc)
            finally:
                self.timeout_s = timeout

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.deliver_due()
            except EpisodicError as exc:
                log.warning("webhook delivery paused: %s", exc)
            self._wake.wait(self.poll_s)
            self._wake.clear()

    def deliver_due(self, now: float | None = None) -> int:
        """Post every due alert once; returns how many were delivered."""
        delivered = 0
        for alert, attempts in self.store.due_webhooks(time.time() if now is None else now):
            watch = self.store.get_watch(alert.watch_id) if hasattr(self.store, "get_watch") else None
            if watch is None or not watch.webhook_url:
                self.store.webhook_result(alert.id, False, None)  # the watch was removed
                continue
            ok, why = self._post(watch.webhook_url, watch.webhook_secret, alert)
            attempts += 1
            if ok:
                delivered += 1
                self.store.webhook_result(alert.id, True, None)
            elif attempts >= self.max_attempts:
                log.warning("webhook for alert %s gave up after %d attempts: %s", alert.id, attempts, why)
                self.store.webhook_result(alert.id, False, None)
            else:
                delay = backoff_s(attempts - 1, self.backoff_base_s, self.backoff_max_s)
                log.info("webhook for alert %s failed (%s); retrying in %.0f s", alert.id, why, delay)
                self.store.webhook_result(alert.id, False, time.time() + delay)
            if self.on_result is not None:
                self.on_result(alert, ok)
        return delivered

    def _post(self, url: str, secret: str, alert: Alert) -> tuple[bool, str]:
        body = json.dumps(alert.to_dict(), sort_keys=True).encode()
        stamp = str(int(time.time()))
        req = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json",
            "User-Agent": "episodic-webhooks",
            ALERT_ID_HEADER: alert.id,
            TIMESTAMP_HEADER: stamp,
            SIGNATURE_HEADER: sign(secret, stamp, body),
        })
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - http(s) checked at add
                return 200 <= resp.status < 300, f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:
            return False, f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return False, str(getattr(exc, "reason", exc))[:200]
