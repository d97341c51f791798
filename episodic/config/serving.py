"""Sections for answering: retrieval and answering, articles, the gRPC server and metrics.

See :mod:`episodic.config` for how the flat keys are filed under sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class RetrievalSettings:
    """Fast and detailed retrieval, answering and listening again (C.2, E.4)."""

    fast_top_k: int = 5  # ThetaEvent summaries handed to fast retrieval (ours; the paper gives none)
    fast_confidence_tau: float = 0.75  # τ: below this the fast answer escalates to detailed recall
    # Retrieval evidence caps the fast (and detailed) confidence: a supporting text whose cosine
    # to the question is at or below support_cos_min gives no support, at or above
    # support_cos_full full support, linearly in between (ours; tuned for all-MiniLM-L6-v2).
    support_cos_min: float = 0.2
    support_cos_full: float = 0.5  # full support at or above this cosine
    recall_top_k: int = 5  # k of feature search and of the cross-modal association seeds
    visual_fallback_sim: float = 0.4  # best visual feature similarity below this → text search
    association_window_s: float = 2.0  # δ: seed windows are widened by this on each side
    # Fine-grained hits re-ranked per query, and memories opened for that (ours).
    search_candidates: int = 40
    search_max_memories: int = 24  # memories opened to re-rank those hits
    # Whether Ask consults the language model: always | never | auto (only a capable
    # backend, llm = "openai"). The model reads the evidence and votes (an option letter, a
    # phrase, whether it is sure); the rules then decide from the evidence (reasoning/answer.py).
    # The bundled 135M model's answer was the final one for 1 of 395 dev and held-out
    # questions and took about 3 s of a detailed Ask; without it the dev sets were answered
    # as well in half the time (README, "How an answer is found").
    answer_model: str = "auto"
    answer_max_tokens: int = 64  # longest answer the language model writes
    answer_temperature: float = 0.0  # greedy: the same question over the same memory, the same answer
    answer_seed: int = 0  # seed of answer sampling
    # Evidence text handed to the model per call; a 135M model answers worse from long contexts
    # and prompt processing dominates its latency (the paper allows GPT-4o 120k tokens).
    answer_context_chars: int = 1200
    # Listening again at question time (retrieval/relisten.py): the top memories of a question
    # about speech are re-transcribed from their snippets by the strongest recogniser (beam
    # search, the question's words as the text said before), all in one pass of one 30 s window
    # (retrieval/joint_hearing.py), and the better transcript is kept; 0 = off. Five rather than
    # two: on the harsher dev sets the sentence that answers was often third to fifth.
    relisten_max_memories: int = 5
    relisten_max_audio_s: float = 12.0  # audio re-transcribed per memory (all of them within one 28 s window)
    # the stage's own time limit: after the joint pass (25 s of audio: about 1.7 s with Whisper
    # base and beam 5 on 2 cores), a new hearing is scored against the audio (0.1-0.3 s each) only
    # within this many seconds; the pass itself starts only when the deadline allows it
    relisten_budget_s: float = 3.0
    # the joint pass asks for no further 30 s window after this many seconds (the one under way
    # is finished): a decoder that ends a window early and seeks back, or loops, took 2-3
    # windows for 25 s of audio: the relisten stage took over 3 s in 19 of 309 held-out Asks (up to 7.8 s)
    relisten_pass_max_s: float = 2.5
    # an Ask that listened again looks at frames (the inspect pathway) only within what is left
    # of this many seconds from its start (the bound for a re-listened Ask): on the
    # held-out sets the two re-listened Asks over 6 s had then looked for 4.7-4.9 s
    relistened_ask_max_s: float = 5.0
    # true: the stages that hear the audio again (re-listening, a mention, the options, a second
    # model) also keep to relistened_ask_max_s, deadline or not (services/qa.py). Off by default:
    # it trims a tail only a loaded machine has (held-out 226-231 run two at a time: 22-29 -> 6 of
    # about 270 re-listened Asks over 5 s) with answers those stages find (multiple choice 198 -> 194/249)
    relisten_hold_to_bound: bool = False
    relisten_beam_size: int = 5  # Whisper beam size when listening again
    relisten_bias: str = "prompt"  # prompt (question + options as preceding text) | hotwords | none
    relisten_reserve_s: float = 1.5  # of a request's deadline, kept for answering afterwards
    # the new transcript must beat the old by this mean token log-probability (same model scores both)
    relisten_min_gain: float = 0.05
    # ... or within this much below it per word of the question it adds (mean token log-prob;
    # at most three words' worth): each word the question helped it write ("Diego" for "The
    # Eagle", "Hannah" for "Hand") costs the unprompted scorer about 0.3-0.6; a word that was
    # not said costs far more. On 136 re-hearings of the dev sets (truth known), 0.6 took 36
    # that lowered the word error rate and 2 that raised it; 0.3 took 18 and 2.
    relisten_hint_tolerance: float = 0.6
    # Multiple choice about speech with short options: each option is put into the recalled
    # sentence and scored against its audio (retrieval/option_audio.py); a free-form colour
    # question misheard, the same with the basic colours (retrieval/colour_hearing.py); false = off
    relisten_score_options: bool = True
    # Search for something said that no moment found quotes: the sentences that sound like it
    # are heard again with the query as a hint (at most relisten_max_memories, one pass);
    # false = off (Search then never takes more than its retrieval)
    relisten_search: bool = True

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 <= s.fast_confidence_tau <= 1:
            problems.append("fast_confidence_tau is a confidence in [0, 1]")
        if not -1 <= s.support_cos_min < s.support_cos_full <= 1:
            problems.append("need -1 <= support_cos_min < support_cos_full <= 1")
        if not -1 <= s.visual_fallback_sim <= 1:
            problems.append("visual_fallback_sim is a cosine in [-1, 1]")
        if s.association_window_s < 0:
            problems.append("association_window_s must be >= 0")
        if not 0 <= s.relisten_max_memories <= 10:
            problems.append("relisten_max_memories must be in 0..10")
        if not 1.0 <= s.relisten_max_audio_s <= 30.0:
            problems.append("relisten_max_audio_s must be in 1..30 seconds (one Whisper window)")
        if s.relisten_budget_s < 0:
            problems.append("relisten_budget_s must be >= 0")
        if s.relisten_pass_max_s <= 0:
            problems.append("relisten_pass_max_s must be > 0")
        if s.relistened_ask_max_s <= 0:
            problems.append("relistened_ask_max_s must be > 0")
        if s.relisten_beam_size < 1 or s.relisten_reserve_s < 0:
            problems.append("relisten_beam_size must be >= 1 and relisten_reserve_s >= 0")
        if s.answer_model not in ("always", "never", "auto"):
            problems.append("answer_model must be always, never or auto")
        if s.relisten_bias not in ("prompt", "hotwords", "none"):
            problems.append("relisten_bias must be prompt, hotwords or none")
        for name in ("fast_top_k", "recall_top_k", "search_candidates", "search_max_memories",
                     "answer_max_tokens", "answer_context_chars"):
            if getattr(s, name) < 1:
                problems.append(f"{name} must be >= 1")
        return problems


@dataclass(frozen=True)
class LookSettings:
    """Looking again at the pixels at question time (issue 15; VideoAtlas / Video-RLM, MAGNET)."""

    # offline (OCR and colour names, embedded default) | openai (a vision-language model behind
    # the OpenAI-compatible client configured in [models])
    looker: str = "offline"
    look_grid_k: int = 8  # K: a grid has K×K cells (seed 002's default)
    look_min_cell_s: float = 1.0  # the first layer with cells shorter than this is the deepest
    look_max_frames: int = 1024  # frames one locate may decode (all workers together)
    look_workers: int = 2  # Video-RLM workers exploring cells in parallel
    look_virtual_loss: float = 0.25  # priority taken off a lead while a worker explores it
    # one look, right after the memory's anchors, at up to this many (at most K×K) brief shots:
    # what was on screen for a few seconds only, read from the compressed video without
    # decoding (retrieval/video_changes.py); 0 = never
    look_brief_shots: int = 64
    # Ask's third pathway: when fast and detailed recall both stay below τ, look at the pixels
    # around the memory's best hits; false = never (``inspect`` on request still works)
    inspect_enabled: bool = True
    inspect_anchors: int = 3  # memory hits whose surroundings are looked at
    inspect_window_s: float = 60.0  # seconds looked at on each side of a hit
    inspect_max_frames: int = 384  # frames the inspect pathway may decode per question
    inspect_budget_s: float = 6.0  # seconds the inspect pathway may take (within the deadline)
    sfs_candidates: int = 32  # MAGNET: frames sampled before the salient ones are chosen
    sfs_frames: int = 8  # MAGNET: salient frames a vision-language model is shown
    sfs_separation: float = 0.1  # λ of the temporal separation penalty

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.looker not in ("offline", "openai"):
            problems.append("looker is offline or openai")
        if not 2 <= s.look_grid_k <= 16:
            problems.append("look_grid_k is between 2 and 16")
        if s.look_min_cell_s <= 0:
            problems.append("look_min_cell_s must be positive")
        if s.look_max_frames < s.look_grid_k**2 or s.inspect_max_frames < s.look_grid_k**2:
            problems.append("look_max_frames and inspect_max_frames must allow one grid (look_grid_k²)")
        if not 1 <= s.look_workers <= 32:
            problems.append("look_workers is between 1 and 32")
        if not 0 <= s.look_brief_shots <= 256:
            problems.append("look_brief_shots is between 0 and 256")
        if not 0 <= s.look_virtual_loss <= 1:
            problems.append("look_virtual_loss is in [0, 1]")
        if s.inspect_anchors < 1 or s.inspect_window_s <= 0 or s.inspect_budget_s <= 0:
            problems.append("inspect_anchors, inspect_window_s and inspect_budget_s must be positive")
        if not 1 <= s.sfs_frames <= s.sfs_candidates <= 512:
            problems.append("1 <= sfs_frames <= sfs_candidates <= 512")
        if s.sfs_separation < 0:
            problems.append("sfs_separation must not be negative")
        return problems


@dataclass(frozen=True)
class RecallSettings:
    """Fuzzy recall (issue 16; RACLO's Recall → Search → Verify over the memory)."""

    # rules (deterministic, the embedded default) | model (a capable LLM splits the description
    # into facets, validated JSON, rules on failure) | auto (model only with llm = "openai")
    recall_parser: str = "auto"
    recall_candidates: int = 8  # streams verified per request (the fused search's best)
    recall_search_k: int = 30  # hits gathered per facet query before fusing per stream
    # T: "then …" is looked for within this many seconds after the key moment, "before …"
    # within this many seconds ahead of it (RVMS-Bench's temporal context is the neighbourhood)
    recall_temporal_window_s: float = 90.0
    # a facet scoring below this fails: the stream is dropped and the failure reported
    recall_facet_min: float = 0.25
    recall_budget_s: float = 2.0  # soft time budget for one request's search and verify
    # Localise the first result's key moment to the second by looking again at its segment's
    # video (issue 15's pathway) when the eyes can see it; costs 4-5 s on a 2-core CPU
    recall_look_again: bool = False

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.recall_parser not in ("auto", "rules", "model"):
            problems.append("recall_parser is auto, rules or model")
        if not 1 <= s.recall_candidates <= 100 or not 1 <= s.recall_search_k <= 500:
            problems.append("recall_candidates is in 1..100 and recall_search_k in 1..500")
        if s.recall_temporal_window_s <= 0 or s.recall_budget_s <= 0:
            problems.append("recall_temporal_window_s and recall_budget_s must be positive")
        if not 0 <= s.recall_facet_min <= 1:
            problems.append("recall_facet_min is a score in [0, 1]")
        return problems


@dataclass(frozen=True)
class ArticleSettings:
    """Multi-video articles (MARQUIS, seed 000)."""

    # Sub-queries a request is decomposed into: the paper averages 22.6 (1–25) for long
    # analyst requests; short requests get fewer (as many as they have distinct facets).
    article_max_sub_queries: int = 25
    article_decomposer: str = "auto"  # auto | rules | llm (auto: llm only with llm = openai)
    article_fusion: str = "rrf"  # rrf | wrrf | max | mean | sum (MARQUIS Table 1/2: RRF K=10 best)
    article_rrf_k: float = 10.0  # K of reciprocal rank fusion (rrf, wrrf)
    article_per_query_k: int = 20  # depth of each sub-query's ranked segment list
    article_max_segments: int = 12  # fused segments whose evidence is extracted
    # a note is a claim when its hybrid score for some sub-query reaches this (cos 0.45 alone)
    article_claim_min_score: float = 0.25
    article_support_min: float = 0.5  # calibration: claims with lower support are dropped
    article_max_claims: int = 24  # claims an article is written from, most relevant first
    article_min_claims: int = 2  # fewer calibrated claims → the article says evidence is thin
    article_top_clusters: int = 5  # GINGER: clusters summarised (MARQUIS Table 5: top 5)
    article_cluster_cos: float = 0.55  # GINGER: claims at least this similar share a facet
    article_claims_per_cluster: int = 3  # GINGER: claims kept per cluster
    article_writer_llm: str = "auto"  # auto | always | never (auto: only with llm = openai)
    article_max_tokens: int = 768  # longest article the language model writes
    # Reranking the fused list before evidence is read (MARQUIS §3.2; retrieval/rerank.py: the
    # hybrid text scorer, best over the sub-queries, blended with the fused score), over its
    # first article_rerank_depth segments. On by default: on the labelled article set nDCG@10
    # of the list read rose from 0.85 to 0.97, fact recall held (0.92 at 12 segments read) or
    # rose (0.75 → 0.83 at 2), citation precision stayed 1.0, for a few milliseconds.
    article_rerank: bool = True
    article_rerank_depth: int = 40  # fused segments reranked
    # QA evidence (MARQUIS §4.3): off | single (SS-QA: one round of questions) | iterative
    # (ITER-QA: follow-up rounds for the sub-queries still without a claim). Questions are
    # answered by Ask, one stream at a time, over the streams their sub-query ranked first.
    # Off by default: on the labelled set it added no fact at 12 segments read and one of 12
    # at 4 (0.83 → 0.92), for 7–10 Ask calls (≈ 15–22 s per article on 2 CPU cores).
    article_qa: str = "off"
    article_qa_questions: int = 4  # questions per round
    article_qa_rounds: int = 2  # rounds in iterative mode (single asks one)
    article_qa_streams: int = 2  # streams each question is asked over
    # an answer becomes evidence at this calibrated confidence or more (and not an abstention)
    article_qa_min_confidence: float = 0.5

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if s.article_writer_llm not in ("auto", "always", "never"):
            problems.append("article_writer_llm must be auto, always or never")
        if s.article_fusion not in ("rrf", "wrrf", "max", "mean", "sum"):
            problems.append("article_fusion must be rrf, wrrf, max, mean or sum")
        if s.article_decomposer not in ("auto", "rules", "llm"):
            problems.append("article_decomposer must be auto, rules or llm")
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
        if s.article_qa not in ("off", "single", "iterative"):
            problems.append("article_qa must be off, single or iterative")
        if not 1 <= s.article_rerank_depth <= 1000:
            problems.append("article_rerank_depth must be in 1..1000")
        if not 1 <= s.article_qa_questions <= 25:
            problems.append("article_qa_questions must be in 1..25")
        if not 1 <= s.article_qa_rounds <= 10:
            problems.append("article_qa_rounds must be in 1..10")
        if not 1 <= s.article_qa_streams <= 10:
            problems.append("article_qa_streams must be in 1..10")
        if not 0 <= s.article_qa_min_confidence <= 1:
            problems.append("article_qa_min_confidence is a confidence in [0, 1]")
        return problems


@dataclass(frozen=True)
class ServerSettings:
    """The gRPC query server (episodic serve)."""

    grpc_host: str = "127.0.0.1"  # loopback unless API keys are configured (see api_keys_file)
    grpc_port: int = 50051  # 0 → any free port (printed at start)
    # threads for calls that do not wait on the model (health, listings, Search, ...); the pool
    # gets grpc_max_concurrent_asks + grpc_max_queued_asks threads more for the model-bound
    # calls, so queued Asks can never take the threads the others need
    grpc_max_workers: int = 8
    grpc_max_concurrent_rpcs: int = 256  # calls in flight or queued; more get RESOURCE_EXHAUSTED
    # Ask runs the language model, which holds a CPU (or GPU) fully and whose engines are not
    # all thread-safe: at most this many answers are computed at once, the rest wait in line
    # (within their deadline).
    grpc_max_concurrent_asks: int = 1
    # Model-bound calls (Ask, Article, Locate; Recall with a model parser) that may wait for a
    # turn; one more is refused at once with RESOURCE_EXHAUSTED and a retry hint (trailing
    # metadata retry-after-ms). 0 = none wait.
    grpc_max_queued_asks: int = 16
    grpc_max_receive_bytes: int = 9 * 1024 * 1024  # largest request message (a Search picture: <= 8 MiB)
    # Load models and the vector cache at start; episodic.v1.EpisodicMemory reports
    # NOT_SERVING on the health service until done (readiness probes), "" reports SERVING.
    serve_warm_up: bool = True
    grpc_grace_s: float = 5.0  # on SIGTERM/SIGINT, calls in flight get this long to finish
    tls_cert_path: str = ""  # PEM certificate chain; with tls_key_path → the server speaks TLS
    tls_key_path: str = ""  # PEM private key
    # TOML (or .json) file mapping each API key to the stream ids it may see, or ["*"] for
    # all: `"<key>" = ["cam1", "cam2"]`. "" → no keys: anyone may call, loopback only.
    api_keys_file: str = ""
    # The REST/JSON API and the web console beside gRPC (episodic/http_api.py): -1 → off,
    # 0 → any free port (printed as `http on http://HOST:PORT`)
    http_port: int = -1
    http_host: str = ""  # "" → grpc_host (the same loopback rule: no API keys, loopback only)
    # how remote clients reach it ("https://memory.example.com"), for the signed snippet and
    # thumbnail URLs in answers; "" → http://http_host:http_port
    http_public_url: str = ""
    # browser origins allowed to call the API from other sites, comma-separated
    # ("https://ops.example.com"); "" → none (CORS closed), "*" → any (auth stays by header)
    http_cors_origins: str = ""
    http_max_upload_bytes: int = 8 * 1024 * 1024  # largest request body (search by image)
    # the secret that signs snippet and thumbnail URLs; "" → <data_dir>/http_media_secret (made
    # on first use). Replicas behind one load balancer share one file (a mounted secret), so a
    # URL one of them signed plays from any of them.
    http_media_secret_file: str = ""

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 <= s.grpc_port <= 65535:
            problems.append("grpc_port must be in 0..65535 (0 = any free port)")
        if s.grpc_max_workers < 1 or s.grpc_max_concurrent_asks < 1:
            problems.append("grpc_max_workers and grpc_max_concurrent_asks must be >= 1")
        if not 0 <= s.grpc_max_queued_asks <= 1000:
            problems.append("grpc_max_queued_asks must be in 0..1000 (each waiting call holds a thread)")
        if s.grpc_max_concurrent_rpcs < s.grpc_max_workers:
            problems.append("grpc_max_concurrent_rpcs must be >= grpc_max_workers")
        if not 4096 <= s.grpc_max_receive_bytes <= 64 * 1024 * 1024:
            problems.append("grpc_max_receive_bytes must be in 4096..67108864")
        if s.grpc_grace_s < 0:
            problems.append("grpc_grace_s must be >= 0")
        if bool(s.tls_cert_path) != bool(s.tls_key_path):
            problems.append("tls_cert_path and tls_key_path go together: set both or neither")
        return problems + self.http_problems()

    @property
    def cors_origins(self) -> tuple[str, ...]:
        """http_cors_origins as a tuple (empty: CORS closed)."""
        return tuple(o.strip().rstrip("/") for o in self.http_cors_origins.split(",") if o.strip())

    def http_problems(self) -> list[str]:
        """What is wrong with the HTTP API's values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not -1 <= s.http_port <= 65535:
            problems.append("http_port must be in 0..65535 (0 = any free port), or -1 for no HTTP API")
        if any(c.isspace() or c in "/?#@[]" for c in s.http_host.strip("[]")):
            problems.append("http_host is a host name or an IP address (no scheme, port or path)")
        url = s.http_public_url
        if url and (not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", url)):
            problems.append("http_public_url is an http:// or https:// URL without query or fragment")
        for origin in s.cors_origins:
            if origin != "*" and not re.fullmatch(r"https?://[^\s/?#]+", origin):
                problems.append(f"http_cors_origins: {origin[:80]!r} is not an origin (scheme://host[:port]) or *")
        if not 1024 <= s.http_max_upload_bytes <= 64 * 1024 * 1024:
            problems.append("http_max_upload_bytes must be in 1024..67108864")
        return problems


@dataclass(frozen=True)
class MetricsSettings:
    """The Prometheus endpoint of serve and worker."""

    metrics_port: int = 0  # 0 → no metrics endpoint; deployments set e.g. 9464
    metrics_host: str = "127.0.0.1"  # 0.0.0.0 inside a container so the scraper can reach it

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 <= s.metrics_port <= 65535:
            problems.append("metrics_port must be in 0..65535 (0 = off)")
        return problems
