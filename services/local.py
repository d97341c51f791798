"""The memory answered in this process: :class:`~episodic.core.interfaces.MemoryService` over
the configured components (the composition root builds them and hands them in)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from episodic.core.article import Article, ArticleProgress, ArticleRequest
from episodic.core.query import (
    AskRequest,
    AskResult,
    LocateRequest,
    LocateResult,
    Moment,
    RecallRequest,
    RecallResult,
    Scope,
)
from episodic.core.summaries import SummariesRequest, SummaryList
from episodic.services.look_again import Progress
from episodic.services.qa import MemoryQA


class LocalMemoryService:
    """Ask, Search, Locate, Recall and Article over ``components``; closing the service closes
    them.

    ``warm_after_request=False`` (the default here) suits one-shot use such as a CLI question:
    the store's vector cache would load in the background only to be dropped at exit."""

    def __init__(self, components: Any, warm_after_request: bool = False) -> None:
        self.components = components
        try:
            self.qa = MemoryQA(components, warm_after_request=warm_after_request)
        except BaseException:
            components.close()
            raise
        self._recall: Any = None
        self._recall_lock = threading.Lock()

    def ask(self, req: AskRequest) -> AskResult:
        return self.qa.ask(req)

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 5, deadline_s: float | None = None,
        image: bytes | None = None, like_segment_id: str | None = None,
    ) -> list[Moment]:
        """Moments matching ``query``; with ``image`` (JPEG/PNG/WebP bytes) or
        ``like_segment_id`` also, or only, those that look like it (search by example)."""
        return self.qa.search(query, scope, top_k, deadline_s=deadline_s, image=image,
                              like_segment_id=like_segment_id)

    def locate(self, req: LocateRequest, on_progress: Progress | None = None) -> LocateResult:
        """Look again at the stored video; ``on_progress(stream_id, report)`` after each grid
        looked at (the CLI's status line; a server has nobody to show it to)."""
        return self.qa.look.locate(req, on_progress=on_progress)

    def recall(self, req: RecallRequest) -> RecallResult:
        """Fuzzy recall over the same MemoryQA as Ask and Search (one set of models, one vector
        cache); the FuzzyRecall is built on the first call and kept, since it holds nothing
        per request."""
        with self._recall_lock:
            if self._recall is None:
                from episodic.services.recall import FuzzyRecall

                self._recall = FuzzyRecall(self.components, qa=self.qa)
            recall = self._recall
        return recall.recall(req)

    def list_summaries(self, req: SummariesRequest) -> SummaryList:
        """The day at a glance: one stream's summary windows (stored overviews; no model)."""
        from episodic.services.summaries import list_summaries

        return list_summaries(self.components.store, self.components.settings, req)

    def write_article(
        self, req: ArticleRequest, progress: Callable[[ArticleProgress], None] | None = None
    ) -> Article:
        from episodic.services.articles import ArticleService

        # over the same MemoryQA: one set of models and one vector cache for both
        return ArticleService(self.components, qa=self.qa).write(req, progress=progress)

    def close(self) -> None:
        self.components.close()

    def __enter__(self) -> LocalMemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
