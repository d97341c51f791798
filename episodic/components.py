"""The configured backends (models and stores), each created on first use, so listing events
never loads a model; the one place where a setting picks an implementation."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from episodic import metrics
from episodic.config import Settings
from episodic.core.errors import EpisodicError
from episodic.core.interfaces import (
    MemoryStore,
    SnippetStore,
    SpeechRecognizer,
    TextEmbedder,
    VisualDescriber,
    WatchStore,
)
from episodic.core.llm import LanguageModel
from episodic.core.records import ShortTermMemory, ThetaEvent
from episodic.core.watches import Alert
from episodic.process import offline_model_hubs, quiet_grpc_logging

if TYPE_CHECKING:
    from episodic.services.alert_delivery import WebhookSender
    from episodic.services.watching import WatchEvaluator

log = logging.getLogger(__name__)
WATCH_LOOK_EVERY_S = 5.0  # how often a process without a watch store checks for one


class Components:
    """The configured backends, each created on first use and typed by the kernel's Protocol
    it satisfies (``core.interfaces``, ``core.llm``), so callers depend on the seam only."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # called with each batch of new alerts (the worker publishes them to Kafka)
        self.alert_listeners: list[Callable[[list[Alert]], None]] = []
        self._watcher: WatchEvaluator | None = None
        self._watch_looked_at = float("-inf")
        self._webhooks: WebhookSender | None = None
        offline_model_hubs()  # before any model library is imported by a property below
        quiet_grpc_logging()  # before the store's client imports grpc (Milvus Lite's keep-alive chatter)

    @cached_property
    def embedder(self) -> TextEmbedder:
        if self.settings.embedder == "imagebind":
            from episodic.memory.imagebind_backend import ImageBindEmbedder

            return metrics.instrument(ImageBindEmbedder(self.settings.models), "embedder")
        from episodic.memory.text_embedder import MiniLMEmbedder

        return metrics.instrument(MiniLMEmbedder(self.settings.models), "embedder")

    @cached_property
    def asr(self) -> SpeechRecognizer:
        from episodic.memory.speech import WhisperRecognizer

        return metrics.instrument(WhisperRecognizer(self.settings), "asr")

    @cached_property
    def describer(self) -> VisualDescriber:
        from episodic.memory.vision import OfflineVisualDescriber

        if self.settings.describer == "openai":
            from episodic.memory.vlm_describer import VLMVisualDescriber
            from episodic.reasoning.openai_llm import OpenAICompatibleLLM

            # A client of its own (clients of one server share its concurrency limit), so
            # caption time counts as describer time in the metrics, not as answering.
            vlm = OpenAICompatibleLLM(self.settings.models)
            return metrics.instrument(
                VLMVisualDescriber(self.settings, vlm, OfflineVisualDescriber(self.settings)),
                "describer",
            )
        return metrics.instrument(OfflineVisualDescriber(self.settings), "describer")

    @cached_property
    def llm(self) -> LanguageModel:
        return metrics.instrument(self._make_llm(), "llm")

    def _make_llm(self) -> LanguageModel:
        if self.settings.llm == "openai":
            from episodic.reasoning.openai_llm import OpenAICompatibleLLM

            return OpenAICompatibleLLM(self.settings.models)
        from episodic.reasoning.llama_cpp_llm import LlamaCppLLM, llama_cpp_available
        from episodic.reasoning.local_llm import LocalSmolLM

        engine = self.settings.local_llm_engine
        if engine == "llama-cpp" or (engine == "auto" and llama_cpp_available()):
            return LlamaCppLLM(self.settings.models)

        return LocalSmolLM(self.settings.models)

    @cached_property
    def store(self) -> MemoryStore:
        if self.settings.store == "memory":
            from episodic.memory.in_memory_store import InMemoryStore

            return InMemoryStore()
        from episodic.memory.milvus_store import MilvusStore

        return MilvusStore(self.settings)

    @cached_property
    def snippets(self) -> SnippetStore:
        if self.settings.snippet_uri:  # s3://bucket/prefix (validated with the settings)
            from episodic.memory.s3_snippet_store import S3SnippetStore

            return S3SnippetStore(self.settings)
        from episodic.memory.snippet_store import FileSnippetStore

        return FileSnippetStore(self.settings)

    def loaded_asr(self) -> SpeechRecognizer | None:
        """The recogniser if it was built already (re-listening reuses it; never loads it)."""
        return self.__dict__.get("asr")  # where cached_property keeps a built value

    def model_ids(self) -> dict[str, str]:
        return {
            "embedder": self.embedder.model_id,
            "asr": self.asr.model_id,
            "describer": self.describer.model_id,
            "llm": self.llm.model_id,
        }

    def ensure_schema(self) -> None:
        self.store.ensure_schema(
            self.embedder.dim, self.describer.feature_dim, models=self.model_ids()
        )
        check = getattr(self.snippets, "check", None)
        if check is not None:  # snippets in S3: a missing bucket or bad credentials, said at start
            check()

    # -- standing queries ------------------------------------------------------------------
    @cached_property
    def watch_store(self) -> WatchStore:
        """The watch store (created on first use: only by commands that add watches)."""
        from episodic.memory.watch_store import SqliteWatchStore

        return SqliteWatchStore(self.settings.watches.resolved_watch_db(self.settings.data_dir))

    def watcher(self) -> WatchEvaluator | None:
        """The evaluator, once a watch store exists on this data directory (a process that
        forms memories never creates one just to find it empty; it looks every few seconds)."""
        if self._watcher is None:
            now = time.monotonic()
            if now - self._watch_looked_at < WATCH_LOOK_EVERY_S:
                return None
            self._watch_looked_at = now
            if "watch_store" not in self.__dict__ and not self.settings.watches.resolved_watch_db(
                self.settings.data_dir
            ).exists():
                return None
            from episodic.services.watching import WatchEvaluator

            w = self.settings.watches
            self._watcher = WatchEvaluator(self.watch_store, self.embedder, min_score=w.watch_min_score,
                                           full_score=w.watch_full_score)
        return self._watcher

    def webhooks(self) -> WebhookSender:
        """The webhook sender thread of this process (started on first use)."""
        if self._webhooks is None:
            from episodic.services.alert_delivery import WebhookSender

            w = self.settings.watches
            self._webhooks = WebhookSender(
                self.watch_store, timeout_s=w.watch_webhook_timeout_s, max_attempts=w.watch_webhook_max_attempts,
                backoff_base_s=w.watch_webhook_backoff_s,
            ).start()
        return self._webhooks

    def memory_formed(self, memory: ShortTermMemory, event: ThetaEvent) -> list[Alert]:
        """Offer a just-stored memory to the watches. Never fails the ingest: a broken watch
        store is a warning, and delivery runs on other threads."""
        try:
            watcher = self.watcher()
            if watcher is None:
                return []
            alerts = watcher.on_memory(memory, event)
        except EpisodicError as exc:
            log.warning("watches were not evaluated for %s: %s", memory.id, exc)
            return []
        if alerts:
            metrics.ALERTS.inc(len(alerts))
            self._deliver(alerts)
        return alerts

    def tick_watches(self, now: float | None = None, streams: list[str] | None = None) -> list[Alert]:
        """Deadlines (absent ``--by HH:MM``) that passed; called periodically by serve/worker.
        ``streams``: those to check for watches that name none (default: every listed stream)."""
        try:
            watcher = self.watcher()
            if watcher is None:
                return []
            if streams is None:
                streams = [i.stream_id for i in self.store.list_streams()]
            alerts = watcher.tick(now, streams)
        except EpisodicError as exc:
            log.warning("watch deadlines were not checked: %s", exc)
            return []
        if alerts:
            metrics.ALERTS.inc(len(alerts))
            self._deliver(alerts)
        return alerts

    def _deliver(self, alerts: list[Alert]) -> None:
        if any(a for a in alerts if self._has_webhook(a)):
            self.webhooks().wake()
        for listener in self.alert_listeners:
            try:
                listener(alerts)
            except Exception as exc:  # a publisher's failure must not fail the ingest
                log.warning("alert listener failed: %s", exc)

    def _has_webhook(self, alert: Alert) -> bool:
        watch = self.watch_store.get_watch(alert.watch_id)
        return watch is not None and bool(watch.webhook_url)

    def close(self) -> None:
        if self._webhooks is not None:
            self._webhooks.stop(grace_s=self.settings.watches.watch_webhook_timeout_s)
        if "watch_store" in self.__dict__:
            self.watch_store.close()
        if "store" in self.__dict__:
            self.store.close()


