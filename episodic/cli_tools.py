"""Evaluation, the demo and maintenance: evaluate, demo, doctor, prepare, config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from episodic.cli_app import (
    ConfigOpt,
    DataOpt,
    JsonOpt,
    _print_json,
    _quiet_libraries,
    _settings,
    err,
)
from episodic.cli_kafka import push, worker
from episodic.cli_query import ApiKeyOpt, CaCertOpt, ask
from episodic.cli_records import _open_store, events, ingest
from episodic.cli_remote import local_memory_service
from episodic.core.errors import InputError

commands = typer.Typer()  # merged into the app by episodic.cli


# -- demo and maintenance ---------------------------------------------------------------------
# (not "the train to Oxford": Whisper base hears the demo voice's "to Oxford" as "talks for",
# and a question about a name the memory does not hold is refused, as it should be)
DEMO_QUESTION = "How much does the fish market charge for salmon?"


def _evaluate_qa(
    qa_file: Path | None, build_qa: Path | None, seed: int, streams: int, minutes: float,
    split: str | None, reingest: bool, data: Path | None, config: Path | None, json_out: bool,
) -> None:
    """`episodic evaluate --build-qa DIR` and/or `--qa FILE` (see episodic/qa_evaluation.py)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from episodic.qa_set import SPLITS, load_qa_set

    if split is not None and split not in SPLITS:
        raise InputError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    built: dict[str, Path] = {}
    if build_qa is not None:
        from episodic.qa_generator import build_qa_sets

        built = build_qa_sets(build_qa, seed=seed, streams=streams, minutes=minutes,
                              splits=(split,) if split else SPLITS, on_note=lambda m: err.print(m, highlight=False))
        if qa_file is None:
            if json_out:
                _print_json({"built": {k: str(v) for k, v in built.items()}})
            else:
                for k, v in built.items():
                    err.print(f"{k}: {v}", highlight=False)
            return
    assert qa_file is not None
    qa_set = load_qa_set(qa_file)
    if split is not None:
        qa_set = qa_set.only_split(split)
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.components import Components
    from episodic.qa_evaluation import evaluate_qa, report_tables

    components = Components(settings)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=json_out and not err.is_terminal) as bar:
            task = bar.add_task("preparing", total=None)

            def on_step(n: int, total: int, qid: str) -> None:
                bar.update(task, total=total, completed=n - 1, description=f"asking {qid}")

            report = evaluate_qa(qa_set, components, reingest=reingest, on_step=on_step,
                                 on_note=lambda m: bar.update(task, description=m))
    finally:
        components.close()
    if json_out:
        _print_json({**report.to_dict(), **({"built": {k: str(v) for k, v in built.items()}} if built else {})})
        return
    console = Console()
    for table in report_tables(report):
        console.print(table)


@commands.command()
def evaluate(
    labels: Annotated[
        Path | None,
        typer.Argument(help="A labelled set (JSON; format in episodic/labelled_set.py). Omit with --build-sample.", show_default=False),
    ] = None,
    style: Annotated[str, typer.Option("--style", help="bullet | cag | ginger: the article style scored.")] = "ginger",
    fusion: Annotated[str, typer.Option("--fusion", help="rrf | wrrf | max | mean | sum")] = "rrf",
    build_sample: Annotated[
        bool,
        typer.Option("--build-sample", help="Generate the two-camera sample recordings with known facts, ingest them into --data and score the sample labels."),
    ] = False,
    qa_file: Annotated[
        Path | None,
        typer.Option("--qa", help="Score question answering on a QA set (JSON, format in episodic/qa_set.py; or its folder): ingests its recordings unless already stored, asks every question, runs every moment query."),
    ] = None,
    build_qa: Annotated[
        Path | None,
        typer.Option("--build-qa", help="Generate labelled QA recordings and questions under DIR/dev and DIR/heldout (see episodic/qa_generator.py), then stop unless --qa is given."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="--build-qa: random seed (dev and held-out differ anyway).")] = 0,
    streams: Annotated[int, typer.Option("--streams", help="--build-qa: recordings per split (1-5).", min=1, max=5)] = 3,
    minutes: Annotated[float, typer.Option("--minutes", help="--build-qa: about how long each recording is.", min=0.2, max=30)] = 2.5,
    split: Annotated[str | None, typer.Option("--split", help="dev | heldout: --build-qa builds only this split; --qa scores only its items.")] = None,
    reingest: Annotated[bool, typer.Option("--reingest", help="--qa: ingest the recordings again even when the store holds them.")] = False,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score retrieval, articles, grounded steps and citations against a labelled set; or, with --qa, question answering.

    Per query: nDCG@10 and Recall@10 of the fused ranking (decomposition + fusion) and of the
    request alone; MTGS and STEM of the article's grounded steps against the labelled facts;
    citation validity (every cited segment exists) and precision (the cited segment supports
    the sentence); and the share of labelled facts the article mentions.

    With --qa: multiple-choice and free-form accuracy by category, abstention on unanswerable questions, moment R@1/R@5, latency, reliability by confidence and ECE; --json adds every answer.
    """
    if build_qa is not None or qa_file is not None:
        _evaluate_qa(qa_file, build_qa, seed, streams, minutes, split, reingest, data, config, json_out)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from episodic.core import validation
    from episodic.core.article import ArticleStyle, Fusion
    from episodic.evaluation import evaluate as run_evaluation
    from episodic.labelled_set import build_article_set, load_labelled_set

    chosen_style = validation.choice(style, ArticleStyle, "style")
    chosen_fusion = None if not fusion else validation.choice(fusion, Fusion, "fusion")
    if labels is None and not build_sample:
        raise InputError("give a labelled set (LABELS.json) or --build-sample; or a QA set with --qa FILE (--build-qa DIR generates one)")
    label_set = load_labelled_set(labels) if labels is not None else None
    from episodic.services.articles import ArticleService

    local = local_memory_service(data, config)  # it ingests: never through a server
    components = local.components
    try:
        if build_sample:
            with err.status("generating and ingesting the sample recordings …"):
                sample = build_article_set(Path(components.settings.data_dir) / "sample-recordings", components)
            label_set = label_set or sample
        service = ArticleService(components, qa=local.qa)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=json_out and not err.is_terminal) as bar:
            task = bar.add_task("evaluating", total=len(label_set.queries))

            def on_query(n: int, total: int, qid: str) -> None:
                bar.update(task, completed=n - 1, description=f"evaluating {qid}")

            report = run_evaluation(service, label_set, style=chosen_style, fusion=chosen_fusion or Fusion.RRF,
                                    on_query=on_query)
            bar.update(task, completed=len(label_set.queries))
    finally:
        local.close()
    if json_out:
        _print_json(report.to_dict())
        return
    table = Table(title=f"evaluation ({report.style}, {report.fusion}, k = {report.k})")
    cols = ["ndcg", "ndcg_single", "recall", "recall_single", "mtgs", "stem_missing", "stem_hallucinated",
            "stem_order", "citation_precision", "citation_validity", "fact_recall"]
    table.add_column("query")
    for col in cols:
        table.add_column(col.replace("_", " "), justify="right")
    for q in report.queries:
        table.add_row(q.id, *[f"{getattr(q, c):.3f}" for c in cols])
    means = report.means()
    table.add_row("mean", *[f"{means[c]:.3f}" for c in cols], style="bold")
    Console().print(table)


@commands.command()
def demo(
    out: Annotated[Path, typer.Option("--out", help="Where to write the sample recording.")] = Path(
        "episodic-demo.mp4"
    ),
    kafka: Annotated[bool, typer.Option("--kafka/--no-kafka", help="Also send the recording through Kafka (a local broker, push, worker) as stream \"demo-live\".")] = True,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Generate a one-minute sample recording with speech (needs espeak-ng), ingest it as stream "demo", list its events and answer one question from it: the whole embedded pipeline in one command. Then the live path: a local Kafka broker, `push` and a `worker` store the same recording as "demo-live"."""
    from episodic import samples

    err.print(f"generating a sample recording at {out} …")
    samples.make_recording(out, *samples.demo_scenes())
    ingest([out], stream_id="demo", data=data, config=config, json_out=False)
    events(stream_id="demo", data=data, config=config, json_out=False)
    err.print(f"\n[bold]episodic ask[/bold] {DEMO_QUESTION!r}", highlight=False)
    ask(
        DEMO_QUESTION,
        choices=None,
        stream_id=["demo"],
        t_min=None,
        t_max=None,
        top_k=3,
        server=None,
        api_key=None,
        ca_cert=None,
        timeout=300.0,
        data=data,
        config=config,
        json_out=False,
    )
    if kafka:
        _demo_live(out, data, config)


def _ingested_transcript(memory) -> str:
    """The transcript a memory was ingested with (re-listening keeps it as version "ingest")."""
    for version in memory.metadata.get("transcripts", []) or []:
        if isinstance(version, dict) and version.get("source") == "ingest":
            return str(version.get("text", ""))
    return memory.transcript_text


def _demo_live(recording: Path, data: Path | None, config: Path | None) -> None:
    """The demo's live path: a local broker, `episodic push`, an `episodic worker` until the
    topic is drained, and a check that it stored what embedded ingest stored."""
    from episodic.core.errors import ConfigError
    from episodic.dev_broker import LocalBroker, tansu_binary

    try:
        tansu_binary()
    except ConfigError as exc:
        err.print(f"\nskipping the Kafka part of the demo: {exc}", highlight=False)
        return
    err.print("\n[bold]live path[/bold]: a local Kafka broker (Tansu, in memory) → episodic push → episodic worker", highlight=False)
    with LocalBroker() as broker:
        push(str(recording), stream_id="demo-live", realtime=False, format=None, option=None,
             bootstrap=broker.bootstrap, data=data, config=config, json_out=False)
        worker(exit_when_idle=2.0, group=None, bootstrap=broker.bootstrap, data=data, config=config)
    events(stream_id="demo-live", data=data, config=config, json_out=False)
    _, store = _open_store(data, config)
    if store is None:
        raise typer.Exit(1)
    try:
        # as ingested: the demo's question may have re-listened to "demo" since (a newer
        # transcript version), and what is compared here is the ingest path itself
        a, b = (
            [(m.t_start, m.t_end, _ingested_transcript(m)) for m in store.list_memories(stream_id=sid)]
            for sid in ("demo", "demo-live")
        )
    finally:
        store.close()
    same = "the same memories" if a == b else "[red]different memories[/red]"
    err.print(f"demo-live: {len(b)} memories through Kafka, {same} as the embedded ingest of the same file")
    if a != b:
        raise typer.Exit(1)


@commands.command()
def doctor(
    check: Annotated[list[str] | None, typer.Option("--check", help="Run only this check; repeat for several. Checks: config, store, snippets, embedder, asr, describer, llm, kafka, server.")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Skip this check; repeat for several (e.g. --skip kafka on a laptop).")] = None,
    server: Annotated[str | None, typer.Option("--server", help="host:port of a running `episodic serve` whose health to check.", envvar="EPISODIC_SERVER")] = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check every configured backend (store, models, LLM server, Kafka, a running server) and say what is wrong.

    Each check uses the backend the way the service will, with short timeouts: the Milvus store is reached and its schema and vector dimensions compared with the configured models; each model is loaded and run once; an OpenAI-compatible server must list openai_model; Kafka topics and partitions are read. Exit code 0 when nothing failed (warnings allowed), 1 otherwise.
    """
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.doctor import CHECKS, FAIL, Doctor

    unknown = sorted({*(check or []), *(skip or [])} - set(CHECKS))
    if unknown:
        raise InputError(f"unknown check(s) {', '.join(unknown)}; checks are: {', '.join(CHECKS)}")
    doc = Doctor(settings, server=server, api_key=api_key, ca_cert=ca_cert)
    colours = {"ok": "green", "warn": "yellow", "fail": "red", "skip": "dim"}

    def show(r: Any) -> None:
        if not json_out:
            c = colours.get(r.status, "white")
            err.print(f"[{c}]{r.status:>4}[/{c}]  {r.name:<9} {r.detail}  [dim]({r.seconds:.1f} s)[/dim]",
                      highlight=False, soft_wrap=True)

    try:
        results = doc.run(only=check, skip=skip or (), on_result=show)
    finally:
        doc.c.close()
    failed = [r.name for r in results if r.status == FAIL]
    if json_out:
        _print_json({"ok": not failed, "checks": [r.to_dict() for r in results]})
    elif failed:
        err.print(f"[red]{len(failed)} check(s) failed[/red]: {', '.join(failed)}", highlight=False)
    else:
        err.print("[green]all configured backends work[/green]", highlight=False)
    if failed:
        raise typer.Exit(1)


@commands.command()
def prepare(data: DataOpt = None, config: ConfigOpt = None) -> None:
    """Load every configured model once (and build any model cache), so the first ingest starts at full speed."""
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.components import Components

    c = Components(settings)
    for name in ("embedder", "asr", "describer", "llm"):
        with err.status(f"loading {name}…"):
            model = getattr(c, name)
            if hasattr(model, "prepare"):
                model.prepare()
        err.print(f"[green]✓[/green] {name}: {model.model_id}")


@commands.command("config")
def show_config(data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Show the effective settings (defaults → file → EPISODIC_* environment)."""
    settings = _settings(data, config)
    values = {k: (str(v) if isinstance(v, Path) else v) for k, v in settings.flat().items()}
    if "openai_api_key" in values and values["openai_api_key"]:
        values["openai_api_key"] = "***"
    if values.get("milvus_token"):
        values["milvus_token"] = "***"
    if values.get("s3_secret_access_key"):
        values["s3_secret_access_key"] = "***"
    if json_out:
        _print_json(values)
        return
    table = Table("setting", "value")
    for k, v in values.items():
        table.add_row(k, str(v))
    Console().print(table)


