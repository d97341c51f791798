"""The configured backends (models and stores), each created on first use, so listing events
never loads a model; the one place where a setting picks an implementation."""

from __future__ import annotations

from functools import cached_property

from episodic import metrics
from episodic.config import Settings
from episodic.core.interfaces import (
    MemoryStore,
    SnippetStore,
    SpeechRecognizer,
    TextEmbedder,
    VisualDescriber,
)
from episodic.core.llm import LanguageModel
from episodic.process import offline_model_hubs, quiet_grpc_logging


class Components:
    """The configured backends, each created on first use and typed by the kernel's Protocol
    it satisfies (``core.interfaces``, ``core.llm``), so callers depend on the seam only."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
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

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()


