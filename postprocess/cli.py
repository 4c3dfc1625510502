"""``python -m postprocess [run|embed|index|rank|anchors|report|evaluate|wait|serve] [options]``.

Each stage reads the previous stage's outputs from ``--out``, so one stage can be
rerun alone; ``run`` (the default) does them all in one process.

| stage | reads | writes (in --out) |
| --- | --- | --- |
| embed | crawl | cache/embeddings-<model>/part-*.parquet, vectors.parquet, chunk- and page-vectors-*.f32 |
| index | vectors.parquet | index.ann, index-ids.parquet |
| rank | crawl, vectors, index | candidates.parquet, cannibalisation.csv |
| anchors | crawl, candidates.parquet | anchored.parquet |
| report | crawl, anchored.parquet | suggestions.csv/.parquet, report.html, summary.json |
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import logging
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from postprocess.errors import (
    EXIT_ENVIRONMENT_ERROR,
    EXIT_INPUT_ERROR,
    PREFIX,
    InputError,
    environment_problem,
)
from postprocess.memory import end_of_stage, full_collections_between_stages, give_back
from postprocess.options import HELP, Options, options_from

STAGES = ("run", "embed", "index", "rank", "anchors", "report")
#: Subcommands from modules other engineers own: name -> (module, add_arguments, run, common options?)
PLUGINS: dict[str, tuple[str, str, str, bool]] = {
    "evaluate": ("postprocess.evaluation.evaluate", "add_arguments", "run", True),
    "wait": ("deploy.scrapyd", "add_wait_arguments", "run_wait", False),
    "serve": ("postprocess.apps.serve", "add_arguments", "run", False),
    "apply": ("postprocess.apps.wordpress.apply", "add_arguments", "run", False),
}
STAGE_HELP = {
    "run": "every stage, in order (the default)",
    "embed": "embed every page (reusing the cache)",
    "index": "build the Annoy index from the page vectors",
    "rank": "find, filter and rank candidate pairs",
    "anchors": "choose the anchor phrase and context of each suggestion",
    "report": "write suggestions.csv/.parquet, report.html, summary.json",
}


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """--crawl, --out, --model, --job and one option per ``Options`` field."""
    parser.add_argument("--crawl", default="data/crawl", help="crawl directory (default %(default)s)")
    parser.add_argument("--out", default="data/out", help="output directory (default %(default)s)")
    parser.add_argument("--model", default=None,
                        help="sentence-transformers model folder or cached hub name "
                             "(default: the bundled all-MiniLM-L6-v2); never downloaded")
    parser.add_argument("--job", default=None, help="read only the rows of this crawl job (default: all)")
    parser.add_argument("--db", default=None,
                        help="editors' decisions (SQLite): decided pairs are never proposed again, approved "
                             "ones found linked become live (default: decisions.sqlite beside --out)")
    parser.add_argument("--skip-bad-parts", action="store_true",
                        help="read a crawl with unreadable (truncated, corrupt) part files: skip them "
                             "and say how many rows were lost (default: stop and name the file)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what each stage does")
    defaults = Options()
    for f in fields(Options):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        if isinstance(default, bool):
            parser.add_argument(flag, dest=f.name, action="store_true", help=HELP[f.name])
        else:
            kind = str if default is None else type(default)
            parser.add_argument(flag, dest=f.name, type=kind, default=default,
                                help=f"{HELP[f.name]} (default %(default)s)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; a plugin module is imported only when ``command`` is that plugin (fast start)."""
    parser = argparse.ArgumentParser(
        prog="python -m postprocess",
        description="Turn a crawl (Parquet) into a ranked review queue of internal-link suggestions.")
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(STAGES + tuple(PLUGINS)) + "}")
    for name in STAGES:
        stage = sub.add_parser(name, help=STAGE_HELP[name], conflict_handler="resolve")
        add_common_arguments(stage)
    for name, (module, add, _, common) in PLUGINS.items():
        if importlib.util.find_spec(module) is None:
            continue
        plugin = sub.add_parser(name, help=f"see {module}", conflict_handler="resolve")
        if name != command:
            continue
        if common:
            add_common_arguments(plugin)
        getattr(importlib.import_module(module), add)(plugin)
    return parser


@dataclass
class Session:
    """One command's state: parsed options, and what earlier stages left in memory."""

    args: argparse.Namespace
    options: Options
    out: Path
    timings: dict[str, float] = field(default_factory=dict)
    crawl: object = None
    model: object = None
    embeddings: object = None
    index: object = None
    rows: object = None
    cannibal: object = None
    near_duplicates: int | None = None  # the pairs rank wrote to cannibalisation.csv (its rows let go)
    rejected: object = None
    confidence: object = None
    evidence: object = None  # rank's lexical evidence, reused by the confidence folds of the same run
    finder: object = None  # the anchor finder, built by rank when it starts the confidence learning
    passages: object = None  # paragraph vectors (their cache), shared the same way
    learning: object = None  # the confidence model being learned on a second core (``Background``)
    lexical_job: object = None  # the ranking's TF-IDF job, started by a run's index stage (``LexicalJob``)
    decisions: dict[str, object] | None = None

    def timed(self, name: str, fn: Callable[[], object]) -> object:
        started = time.perf_counter()
        value = fn()
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started
        return value

    def get_crawl(self):  # noqa: ANN201 - Crawl
        if self.crawl is None:
            from postprocess.stages.load import BadParts, load_crawl, require_linkable

            bad = BadParts() if getattr(self.args, "skip_bad_parts", False) else None
            self.crawl = self.timed("load", lambda: load_crawl(self.args.crawl, self.args.job, bad))
            if bad is not None and bad.parts:
                print(f"postprocess: warning: {bad.describe()}", file=sys.stderr)
            require_linkable(self.crawl)
        return self.crawl


def embedder_for(s: Session):  # noqa: ANN201 - an Embedder or a StaticEmbedder
    """The page encoder: the transformer, or with ``--encoder static`` its distilled static model.

    The static model is distilled from the model's folder and then read from the cache, so the
    transformer itself is never loaded for it.
    """
    from postprocess.stages.embed import default_prefix, load_model, resolve_model

    if s.options.encoder != "static":
        return load_model(s.args.model, s.options.prefix, s.options.device)
    from postprocess.stages.static_encoder import load_static

    source, model_id = resolve_model(s.args.model)
    prefix = default_prefix(model_id) if s.options.prefix is None else s.options.prefix
    return load_static(source, model_id, prefix, s.out / "cache")


def stage_embed(s: Session) -> None:
    """Embed the pages; when every page is in the cache the model is not even loaded."""
    from postprocess.stages.embed import embed_pages, from_cache, model_identity, save_vectors

    crawl = s.get_crawl()
    model_id, prefix = model_identity(s.args.model, s.options.prefix)
    s.embeddings = s.timed("embed", lambda: from_cache(crawl, model_id, prefix, s.options, s.out / "cache",
                                                       chunks_dir=s.out))
    if s.embeddings is None:
        s.model = s.timed("model", lambda: embedder_for(s))
        s.embeddings = s.timed("embed", lambda: embed_pages(crawl, s.model, s.options, s.out / "cache",
                                                            chunks_dir=s.out))
    s.embeddings = save_vectors(s.out / "vectors.parquet", s.embeddings)
    st = s.embeddings.stats
    logging.getLogger("postprocess").info("embedded %s pages, %s from the cache", st["embedded_pages"],
                                          st["cached_pages"])


def stage_index(s: Session) -> None:
    from postprocess.pipeline import workers
    from postprocess.stages.candidates import neighbours_asked
    from postprocess.stages.embed import read_vectors
    from postprocess.stages.index import INDEX_FILE, build_index, save_index
    from postprocess.stages.neighbour_table import start_table
    from postprocess.stages.scoring import start_lexical_job

    if s.embeddings is None:
        s.embeddings = read_vectors(s.out / "vectors.parquet")
    emb = s.embeddings
    if s.args.command == "run" and workers(s.options) > 1:
        # the ranking's TF-IDF job needs the pages alone: on the second core while this one builds the
        # page index (one core: ~150 s at a million pages), not after it
        s.lexical_job = start_lexical_job(s.get_crawl(), emb, s.options.neighbours, workers(s.options))
    s.index = s.timed("index", lambda: build_index(emb.urls, emb.vectors, s.options.trees,
                                                   path=s.out / INDEX_FILE))
    save_index(s.index, s.out)
    if s.args.command == "run":
        # every page's nearest pages asked once, in a process of their own beside the names and the
        # finder: the ranking reads them from a file, not the index (~1.6 GB of its pages at 1M)
        s.index.table = start_table(str(s.out / INDEX_FILE), s.index.dimension, len(s.index.urls),
                                    neighbours_asked(s.options), s.options.search_k, workers(s.options))


def _vectors_and_index(s: Session) -> None:
    from postprocess.stages.embed import read_vectors
    from postprocess.stages.index import check_matches, load_index

    if s.embeddings is None:
        s.embeddings = read_vectors(s.out / "vectors.parquet")
    if s.index is None:
        s.index = load_index(s.out)
        check_matches(s.index, s.embeddings.vectors, s.out)


def decisions_path(args: argparse.Namespace) -> Path:
    """The decisions database of this command: ``--db``, or decisions.sqlite beside ``--out``."""
    from postprocess.decisions.store import default_path

    return Path(args.db) if getattr(args, "db", None) else default_path(args.out)


def check_decisions(args: argparse.Namespace) -> None:
    """Stop before any work when the decisions database exists but cannot be read."""
    from postprocess.decisions.store import DecisionStore

    path = decisions_path(args)
    if path.exists():
        DecisionStore(path, create=False)


def held_back_pairs(s: Session) -> dict[tuple[str, str], str]:
    """Decided pairs (pair -> state) after marking approved pairs this crawl finds linked as live.

    Without a decisions database nothing is held back and no file is created.
    """
    from postprocess.decisions.store import DecisionStore
    from postprocess.stages.candidates import existing_links

    path = decisions_path(s.args)
    if not path.exists():
        s.decisions = None
        return {}
    store = DecisionStore(path, create=False)
    live = store.record_live(existing_links(s.get_crawl().links))
    states = store.states()
    s.decisions = {**store.counts(), "held_back": len(states), "became_live": len(live)}
    return states


def stage_rank(s: Session) -> None:
    """The candidate pool: index and lexical neighbours, filters, scores (``candidates.parquet``)."""
    from postprocess.apps.report import write_cannibalisation, write_parquet
    from postprocess.background import Background
    from postprocess.pipeline import (
        candidate_pool,
        learn_beside,
        learn_in_background,
        ranking_workers,
        workers,
    )
    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.scoring import Evidence

    crawl = s.get_crawl()
    _vectors_and_index(s)
    held_back = held_back_pairs(s)
    s.evidence = s.timed("rank", lambda: Evidence(crawl, s.embeddings, s.options.neighbours,
                                                  workers(s.options), s.lexical_job))
    s.lexical_job = None
    if s.args.command == "run" and workers(s.options) > 1:
        # The confidence model depends on the pages and links, not on this ranking: learned on the
        # second core while this one ranks and anchors (the anchors stage collects it), or, on a
        # large site, here and first (``learn_beside``).
        # the finder's last steps wait for the TF-IDF process to leave: their transients never beside it
        s.finder = s.timed("anchors", lambda: AnchorFinder(crawl, s.options.title_anchors, workers(s.options),
                                                            before_last_steps=s.evidence.wait))
        s.passages = passage_vectors(s)
        s.timed("rank", s.evidence.ready)  # the TF-IDF index, made beside the finder: before the next fork
        s.timed("rank", s.index.ready)  # the neighbour table, made beside them: before it too
        s.learning = Background(learn_in_background, crawl, s.embeddings, s.index, s.passages, s.options,
                                s.finder, s.evidence, fork=learn_beside(crawl, s.options))
        if not s.learning.forked:
            s.learning.now()
    beside = s.learning is not None and s.learning.forked  # the learning on the second core

    def let_evidence_go() -> None:
        """Once every source is ranked, before the caps' sort: the evidence (TF-IDF, names: with the
        ranking's filters ~1.1 GB at a million pages) is the learning child's now, or the learning
        is done, so this process, which only anchors from here on, lets its copy go (a learning
        redone here makes it again); emptied, as the calls that handed it to the ranking still hold
        it."""
        if s.learning is not None and (s.learning.forked or s.learning.done) and s.evidence is not None:
            s.learning.forget(s.evidence)
            s.evidence.release()
            s.evidence = None

    # the ranking reads none of the finder's tables: on disk through it and the writes, unless a
    # learning child beside it holds them (its pages are that child's too: nothing would be freed)
    aside = s.finder.tables_aside() if s.finder is not None and not beside else contextlib.nullcontext()
    with aside:
        s.rows, s.cannibal, s.rejected = s.timed(
            "rank", lambda: candidate_pool(crawl, s.embeddings, s.index, s.options, s.evidence,
                                           held_back=held_back, workers=ranking_workers(s.options, beside),
                                           before_caps=let_evidence_go))
        write_parquet(s.out / "candidates.parquet", s.rows)
        write_cannibalisation(s.out, s.cannibal, crawl)
    # the report needs only their number: the rows (one a near-duplicate pair, ~1.1 a page on a
    # synthetic site) go now rather than through the anchoring and the report
    s.near_duplicates, s.cannibal = len(s.cannibal), None


def stage_anchors(s: Session) -> None:
    """Anchors, passage check, the site's confidence model, the cut and the caps (``anchored.parquet``)."""
    from collections import Counter

    from postprocess.apps.report import read_pool, write_parquet
    from postprocess.pipeline import anchor_pool, learn_confidence, queue, workers
    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.output import replace_atomically

    crawl = s.get_crawl()
    _vectors_and_index(s)
    if s.rows is None:
        s.rows = read_pool(s.out / "candidates.parquet")
    if s.rejected is None:
        s.rejected = Counter()
    passages = s.passages or passage_vectors(s)
    finder = s.finder or s.timed("anchors", lambda: AnchorFinder(crawl, s.options.title_anchors,
                                                                 workers(s.options)))
    learned: list[tuple[object, object, float]] = []  # the learning job's result, collected by let_go
    waited: list[float] = []

    def let_go() -> None:
        """What only ranking and anchoring need goes before the anchored rows are read back, so that
        they take the memory it held (two processes chose the anchors: the rows wait in files): the
        anchor finder with the names it looked up (~4 KB a page), the evidence, the candidate pool,
        and the learning job that held the finder, its result collected first. A learning made here
        (``learn_confidence`` below) needs the finder still: nothing goes then."""
        nonlocal finder
        if s.learning is None:
            return
        started = time.perf_counter()
        learned.append(s.timed("confidence", s.learning.result))
        waited.append(time.perf_counter() - started)
        s.finder = s.evidence = s.learning = finder = None
        s.rows = None

    rows = s.timed("anchors",
                   lambda: anchor_pool(crawl, s.rows, s.embeddings, passages, s.options, s.rejected, finder,
                                       workers(s.options), before_rows=let_go))
    s.timings["anchors"] -= sum(waited)  # the wait for the learning counts as the confidence's
    if learned:
        model, made, seconds = learned[0]
        passages.adopt(made)  # paragraph vectors the second process made (without a cache: none with one)
        s.timings["confidence_learning"] = seconds
    else:
        model = s.timed("confidence",
                        lambda: learn_confidence(crawl, s.embeddings, s.index, passages, s.options, finder,
                                                 s.evidence))
    s.finder = s.evidence = s.learning = finder = None
    give_back()  # the rows read back from the anchoring's files, and their passage check, made the queue
    s.rows = queue(rows, model, s.options, s.rejected)
    give_back()  # the rows the cut and the caps dropped
    s.confidence = model
    payload = json.dumps(model.to_json(), indent=2)
    replace_atomically(s.out / "confidence.json", lambda tmp: tmp.write_text(payload))
    write_parquet(s.out / "anchored.parquet", s.rows)


def passage_vectors(s: Session):  # noqa: ANN201 - PassageVectors
    """Paragraph vectors with the run's cache; the encoder is loaded only for a paragraph not in it."""
    from postprocess.pipeline import paragraph_workers
    from postprocess.stages.embed import model_identity
    from postprocess.stages.passages import PassageVectors

    model_id, _ = model_identity(s.args.model, s.options.prefix)
    if s.options.encoder == "static":
        model_id = f"static-{model_id}"

    def encoder():  # noqa: ANN202 - loaded only when a paragraph is not in the cache
        if s.model is None:
            s.model = s.timed("model", lambda: embedder_for(s))
        return s.model

    return PassageVectors(encoder, s.out / "cache", model_id=model_id, workers=paragraph_workers(s.options))


def stage_report(s: Session) -> None:
    from postprocess.apps import report
    from postprocess.apps.report.copies import QueueCopies, copies_apart
    from postprocess.pipeline import workers

    crawl = s.get_crawl()
    if s.rows is None:
        s.rows = report.read_suggestions(s.out / "anchored.parquet")
    started = time.perf_counter()
    # a long queue's CSV and report JSON are made from suggestions.parquet by a second process
    copies = QueueCopies(s.out) if copies_apart(len(s.rows), workers(s.options)) else None
    try:
        figures = _report_files(s, crawl, copies)
    finally:
        if copies is not None:
            copies.discard()
    s.timings["report"] = time.perf_counter() - started
    figures["seconds"] = {k: round(v, 2) for k, v in s.timings.items()}
    stats = getattr(s.embeddings, "stats", None)
    if stats:
        keys = ("embedded_pages", "cached_pages", "texts")
        figures["embedding"] = {k: stats[k] for k in keys if k in stats}
    report.write_summary(s.out, figures)
    print(report.format_summary(figures), flush=True)


def _report_files(s: Session, crawl, copies) -> dict:  # noqa: ANN001 - a Crawl; QueueCopies or None
    """The queue's files, the analysis and report.html; the summary's figures. ``copies``: the CSV and
    the queue's JSON made by a second process, waited for before report.html is complete."""
    from postprocess.apps import report

    # Each step's transients (Arrow tables, the CSV's rows, the link graph's passes) are freed into
    # the C heap between live objects, where the next step's Python objects (in arenas of their own)
    # cannot reuse them: handed back after each step, the steps' peaks do not pile up (100k
    # synthetic pages: 0.23 GB kept after the queue's files, 0.18 GB more after the analysis).
    report.write_suggestions(s.out, s.rows, crawl, csv_elsewhere=copies.start if copies else None)
    give_back()
    confidence = s.confidence.to_json() if s.confidence is not None else None
    if confidence is None and (s.out / "confidence.json").is_file():
        confidence = json.loads((s.out / "confidence.json").read_text())
    analysis = report.analyse(crawl, s.rows, s.out, getattr(s.args, "job", None), decisions_path(s.args))
    give_back()
    near_duplicates = s.near_duplicates
    if near_duplicates is None:  # the report stage alone: rank's file says
        near_duplicates = report.csv_rows(s.out / "cannibalisation.csv")
    figures = report.summary(crawl, s.rows, near_duplicates, s.timings, s.out, s.rejected, confidence,
                             analysis)
    if s.decisions is not None:  # rank's counts also say what it held back (the analysis has the states)
        figures["decisions"] = s.decisions
    figures["crawl"] = str(Path(s.args.crawl).resolve())  # apply's default for "edited since the crawl"
    report.write_html(s.out, crawl, s.rows, figures, analysis, queue=copies.made if copies else None)
    if copies is not None:
        copies.made()  # suggestions.csv is complete before the summary says the run is
    return figures


RUNNERS: dict[str, tuple[Callable[[Session], None], ...]] = {
    "run": (stage_embed, stage_index, stage_rank, stage_anchors, stage_report),
    "embed": (stage_embed,),
    "index": (stage_index,),
    "rank": (stage_rank,),
    "anchors": (stage_anchors,),
    "report": (stage_report,),
}


def _with_default_command(argv: Sequence[str]) -> list[str]:
    argv = list(argv)
    known = set(STAGES) | set(PLUGINS)
    if not argv or (argv[0] not in known and argv[0] not in ("-h", "--help")):
        return ["run", *argv]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the stages; bad input is one line on stderr, exit 2."""
    argv = _with_default_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(name)s: %(message)s", stream=sys.stderr)
    try:
        if args.command in PLUGINS:
            module, _, run, _ = PLUGINS[args.command]
            return int(getattr(importlib.import_module(module), run)(args) or 0)
        session = Session(args=args, options=options_from(args), out=Path(args.out))
        check_decisions(args)
        with full_collections_between_stages():
            for stage in RUNNERS[args.command]:
                stage(session)
                end_of_stage()
    except InputError as exc:
        print(PREFIX + str(exc), file=sys.stderr, flush=True)
        return EXIT_INPUT_ERROR
    except OSError as exc:  # a full disk, a folder it may not write: one line; any other is a bug
        line = environment_problem(exc, [Path(args.out)] if getattr(args, "out", None) else [])
        if line is None:
            raise
        if getattr(args, "verbose", False):
            traceback.print_exc()
        print(PREFIX + line, file=sys.stderr, flush=True)
        return EXIT_ENVIRONMENT_ERROR
    except KeyboardInterrupt:
        print(PREFIX + "interrupted", file=sys.stderr, flush=True)
        return 130
    return 0
