"""Confidence: the probability that this site's editors would make a suggested link, learned per site.

Self-supervised from the site's own in-content links: the links between content
pages are split into ``FOLDS`` folds; for each fold, its links are hidden and
the pipeline ranks and anchors suggestions from what is left. A row whose pair
was hidden is a link the editors made (1); a row whose pair the site does not
link at all is one they did not (0). A logistic regression on the rows' score
parts and anchor features (``FEATURES``) turns them into a probability; every
fold is also predicted by a model fitted on the others, which gives the
calibration and the precision and recall at the cut that ``summary.json`` and
``evaluate`` report. A site with too few links to learn from
(``MIN_LINKS``) uses the model fitted on the Django documentation
(``confidence_prior.json``), and says so.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from linkspider.items import PROSE_KINDS
from postprocess.background import available_workers, in_chunks, worth_a_fork
from postprocess.options import Options
from postprocess.stages.candidates import Suggestion, target_exclusion
from postprocess.stages.links import LinkTable, distinct, distinct_joined, in_sorted, pair_set
from postprocess.stages.load import Crawl, resolve
from postprocess.stages.suggestions import part_columns

#: Score parts and anchor features the model reads (missing ones count 0).
FEATURES = ("similarity", "best_chunk", "lexical", "mention", "needs_links", "passage", "anchor_words",
            "anchor_commonness", "anchor_in_code", "evidence_link", "evidence_title", "evidence_slug",
            "evidence_part", "evidence_term", "list_item", "name_uses")
#: The evidence kinds read as the model's one-hot inputs (``evidence_link`` ...).
_EVIDENCE_FEATURES = ("link", "term", "title", "slug", "part")
FOLDS = 3
#: Fewer links in running text between content pages than this: the prior model is used.
MIN_LINKS = 100
#: A site model that separates held-out links from other rows worse than this (ROC AUC): the prior.
MIN_AUC = 0.65
#: Fewer positive rows than this after the folds: the prior model is used.
MIN_POSITIVES = 15
PRIOR_PATH = Path(__file__).with_name("confidence_prior.json")
#: The folds rank at most this many source pages (a seeded sample of those with links in running
#: text): on a large site the model learns as well from a sample, at a fixed cost.
MAX_TRAINING_SOURCES = 1500

#: Groups of pages (``load.GROUP_PAGES`` each) from which the editors' links are read by two processes
#: (at 32 pages a group: 32,000 pages; a million synthetic pages read them in ~75 s on one core).
EDITOR_LINKS_SPLIT_GROUPS = 1000
#: Groups of pages a process takes at a time there (or a 32nd of them, if more).
EDITOR_LINKS_CHUNK_GROUPS = 64

#: What the folds rank: the crawl, the (source, target) URL pairs whose links it hides, and the
#: sources to rank (None: all).
Pool = Callable[[Crawl, "frozenset[tuple[str, str]]", "frozenset[str] | None"], list[Suggestion]]


def features(s: Suggestion) -> list[float]:
    """The model's inputs for one anchored row."""
    values = dict(s.parts)
    values["anchor_words"] = min(values.get("anchor_words", 0.0), 4.0)
    for kind in _EVIDENCE_FEATURES:
        values[f"evidence_{kind}"] = float(s.evidence == kind)
    values["list_item"] = float(s.parts.get("list_item", 0.0))
    values["name_uses"] = math.log1p(values.get("name_uses", 0.0))
    return [float(values.get(name, 0.0)) for name in FEATURES]


def feature_matrix(rows: Sequence[Suggestion]) -> np.ndarray:
    """``features`` of each row, one row of the matrix a row: its parts read as columns
    (``suggestions.part_columns``, a layout's rows at a time) where every row's parts are floats in
    ``Parts``, else a row at a time."""
    columns = part_columns(rows, FEATURES)
    if columns is None:
        return np.array([features(s) for s in rows], dtype=np.float64).reshape(len(rows), len(FEATURES))
    matrix = np.zeros((len(rows), len(FEATURES)), dtype=np.float64)
    for j, name in enumerate(FEATURES):
        values, absent = columns[name]
        matrix[:, j] = np.where(absent, 0.0, values)
    words = FEATURES.index("anchor_words")
    matrix[:, words] = np.minimum(matrix[:, words], 4.0)
    uses = FEATURES.index("name_uses")  # the one ``math.log1p`` a value, as ``features`` takes it
    matrix[:, uses] = np.fromiter(map(math.log1p, matrix[:, uses].tolist()), dtype=np.float64,
                                  count=len(rows))
    evidence = [s.evidence for s in rows]
    for kind in _EVIDENCE_FEATURES:
        matrix[:, FEATURES.index(f"evidence_{kind}")] = [e == kind for e in evidence]
    return matrix


@dataclass
class ConfidenceModel:
    """A fitted logistic regression (standardised inputs), as plain numbers."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    source: str = "site"  # "site": learned from this crawl; "prior": the shipped model
    report: dict[str, object] = field(default_factory=dict)
    #: Isotonic calibration (held-out regression output -> observed share of editors' links).
    calibration_x: list[float] = field(default_factory=list)
    calibration_y: list[float] = field(default_factory=list)

    def raw(self, rows: Sequence[Suggestion]) -> np.ndarray:
        """The regression's output, before calibration."""
        if not rows:
            return np.zeros(0)
        x = (feature_matrix(rows) - np.array(self.mean)) / np.array(self.scale)
        return 1.0 / (1.0 + np.exp(-(x @ np.array(self.coef) + self.intercept)))

    def predict(self, rows: Sequence[Suggestion]) -> np.ndarray:
        """Calibrated probabilities that the site's editors would make each row's link."""
        return calibrate(self.raw(rows), self.calibration_x, self.calibration_y)

    def to_json(self) -> dict[str, object]:
        return {"features": list(FEATURES), **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> ConfidenceModel:
        if list(data.get("features", [])) != list(FEATURES):  # type: ignore[arg-type]
            raise ValueError("confidence model was fitted on other features")
        return cls(**{k: v for k, v in data.items() if k != "features"})  # type: ignore[arg-type]


def calibrate(p: np.ndarray, xs: Sequence[float], ys: Sequence[float]) -> np.ndarray:
    """Map regression outputs through an isotonic curve (identity when there is none)."""
    return np.interp(p, xs, ys) if len(xs) else p


def isotonic(p: np.ndarray, y: np.ndarray) -> tuple[list[float], list[float]]:
    """The isotonic curve from outputs ``p`` to outcomes ``y`` (its knots)."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y)
    return [float(v) for v in iso.X_thresholds_], [float(v) for v in iso.y_thresholds_]


def fit(x: np.ndarray, y: np.ndarray, source: str = "site") -> ConfidenceModel:
    """Logistic regression (L2, C=1) on standardised features."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    lr = LogisticRegression(C=1.0, max_iter=2000)
    lr.fit((x - mean) / scale, y)
    return ConfidenceModel(mean.tolist(), scale.tolist(), lr.coef_[0].tolist(), float(lr.intercept_[0]),
                           source)


def prior() -> ConfidenceModel:
    """The shipped model (fitted on the Django documentation)."""
    model = ConfidenceModel.from_json(json.loads(PRIOR_PATH.read_text()))
    model.source = "prior"
    return model


@dataclass(frozen=True)
class EditorLinks:
    """The links editors made in running text (``editor_links``): each (source, target) pair once, as
    numbers into ``urls``; URL pairs are made only for the sources asked for (a large site has
    millions of these links, and the confidence folds rank a sample of their sources)."""

    urls: Sequence[str]
    sources: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.sources)

    def source_urls(self) -> list[str]:
        """The pages that make these links, sorted."""
        return sorted(self.urls[i] for i in distinct(self.sources).tolist())

    def pairs(self, sources: frozenset[str] | None = None) -> list[tuple[str, str]]:
        """The (source, target) URL pairs, sorted; only those from ``sources`` when given."""
        chosen, targets = self.sources, self.targets
        if sources is not None:
            numbers = np.array([i for i, url in enumerate(self.urls) if url in sources], dtype=np.int64)
            keep = np.isin(chosen, numbers)
            chosen, targets = chosen[keep], targets[keep]
        urls = self.urls
        return sorted((urls[s], urls[t]) for s, t in zip(chosen.tolist(), targets.tolist(), strict=True))


def training_pairs(crawl: Crawl, options: Options) -> list[tuple[str, str]]:
    """(source, target) pairs the editors linked in running text (``editor_links``), sorted."""
    return editor_links(crawl, options).pairs()


def editor_links(crawl: Crawl, options: Options) -> EditorLinks:
    """The links editors made in running text (a link in a prose block of a content page, not a
    template's "more posts" list), between pages that may give and receive suggestions."""
    from_columns = _editor_links_from_columns(crawl, options)
    if from_columns is not None:
        return from_columns
    pages = {p.url: p for p in crawl.pages}
    linked = pair_set(crawl.links)
    pairs = set()
    for source in crawl.pages:
        if source.kind != "content":
            continue
        for block in source.blocks:
            if block.kind not in PROSE_KINDS:
                continue
            for _, _, url in block.links:
                target = pages.get(resolve(url, crawl.aliases)) if url else None
                if (target is None or target is source or (source.url, target.url) not in linked
                        or target_exclusion(target, options) is not None):
                    continue
                pairs.add((source.url, target.url))
    urls = [p.url for p in crawl.pages]
    number = {url: i for i, url in enumerate(urls)}
    ordered = sorted(pairs)
    return EditorLinks(urls, np.array([number[s] for s, _ in ordered], dtype=np.int64),
                       np.array([number[t] for _, t in ordered], dtype=np.int64))


def _editor_links_from_columns(crawl: Crawl, options: Options) -> EditorLinks | None:
    """``editor_links`` of a loaded crawl (links a ``LinkTable``, blocks in one ``BlockStore``) in
    NumPy: the block links read from the columns, each distinct URL resolved once in a process, the
    link table's pairs looked up as sorted keys; the groups of pages shared with a forked second
    process (``background.in_chunks``) when the run has one to spare: a million synthetic pages,
    ~75 s of one core. None for any other crawl (the loop above reads it)."""
    pages, table = crawl.pages, crawl.links
    where = [getattr(p.blocks, "where", None) for p in pages]
    if not isinstance(table, LinkTable) or not pages or any(w is None for w in where):
        return None
    stores = {id(w[0]) for w in where}  # type: ignore[index]
    if len(stores) != 1:
        return None
    store = where[0][0]  # type: ignore[index]
    page_of_row = np.full(store.size, -1, dtype=np.int64)
    page_of_row[[w[1] for w in where]] = np.arange(len(pages))  # type: ignore[index]
    number = {p.url: i for i, p in enumerate(pages)}
    page_of_url: dict[str, int] = {}  # each distinct URL resolved once (in each process)
    content = np.array([p.kind == "content" for p in pages], dtype=bool)
    receives = np.array([target_exclusion(p, options) is None for p in pages], dtype=bool)
    table_id = np.array([table.ids.get(p.url, -1) for p in pages], dtype=np.int64)
    n = len(table.urls)
    table_keys = table.pair_set().keys

    def found_in(groups: Sequence[int]) -> np.ndarray:
        """The distinct pair keys (source × pages + target) the links of these groups give."""
        found: list[np.ndarray] = []
        for rows, urls in store.links_in(PROSE_KINDS, groups):  # a group of pages at a time
            encoded = pc.dictionary_encode(urls)
            distinct_urls = encoded.dictionary.to_pylist()
            for u in distinct_urls:
                if u not in page_of_url:
                    page_of_url[u] = number.get(resolve(u, crawl.aliases), -1) if u else -1
            target_of = np.array([page_of_url[u] for u in distinct_urls] + [-1], dtype=np.int64)
            codes = pc.fill_null(encoded.indices, len(distinct_urls)).to_numpy(zero_copy_only=False)
            source, target = page_of_row[rows], target_of[codes]
            keep = (source >= 0) & (target >= 0)
            source, target = source[keep], target[keep]
            keep = content[source] & (target != source) & receives[target]
            source, target = source[keep], target[keep]
            known = (table_id[source] >= 0) & (table_id[target] >= 0)
            source, target = source[known], target[known]
            linked = in_sorted(table_keys, table_id[source] * n + table_id[target])
            found.append(distinct(source[linked] * len(pages) + target[linked]))
        return distinct_joined(found)

    groups = range(len(store.groups))
    split = worth_a_fork(len(groups), options.workers or available_workers(), EDITOR_LINKS_SPLIT_GROUPS)
    chunk = max(EDITOR_LINKS_CHUNK_GROUPS, len(groups) // 32)
    found = list(in_chunks(found_in, groups, fork=split, chunk=chunk, name="ls-editor-links"))
    keys = distinct_joined(found)
    return EditorLinks([p.url for p in pages], keys // len(pages), keys % len(pages))


def _negative_fold(pair: tuple[str, str], folds: int, seed: int) -> int:
    digest = hashlib.sha1(f"{seed}\x00{pair[0]}\x00{pair[1]}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % folds


def sample_sources(sources: Sequence[str], limit: int = MAX_TRAINING_SOURCES,
                   seed: int = 0) -> frozenset[str] | None:
    """At most ``limit`` of the (sorted) ``sources``, drawn at random (None: all of them, fewer than that)."""
    if len(sources) <= limit:
        return None
    return frozenset(random.Random(seed).sample(sources, limit))


def labelled_rows(crawl: Crawl, pairs: Sequence[tuple[str, str]], pool: Pool,
                  folds: int = FOLDS, seed: int = 0,
                  sources: frozenset[str] | None = None) -> tuple[list[Suggestion], list[int], list[int]]:
    """Rows, labels (1 = an editors' link) and fold numbers from ``folds`` rounds of hiding ``pairs``
    (``training_pairs``), ranking only ``sources`` when given."""
    order = list(pairs)
    random.Random(seed).shuffle(order)
    fold_of = {pair: i % folds for i, pair in enumerate(order)}
    rows: list[Suggestion] = []
    labels: list[int] = []
    fold_ids: list[int] = []
    for fold in range(folds):
        hidden = frozenset(pair for pair, f in fold_of.items() if f == fold)
        for s in pool(crawl, hidden, sources):
            pair = (s.source_url, s.target_url)
            if pair in hidden:
                label = 1
            elif pair not in fold_of and _negative_fold(pair, folds, seed) == fold:
                label = 0  # an unlinked pair comes up in every round: it is kept in one, drawn at random
            else:
                continue
            rows.append(s)
            labels.append(label)
            fold_ids.append(fold)
    return rows, labels, fold_ids


#: The share of pages that link a phrase says something only when at least this many pages use it.
MIN_PHRASE_PAGES = 15


def left_plain(s: Suggestion, min_link_probability: float) -> bool:
    """Whether a row's anchor is plain words or a member name that the site links on fewer than
    ``min_link_probability`` of the (at least ``MIN_PHRASE_PAGES``) content pages using it: its
    editors mostly leave such words plain, and a reader takes them for words, not for a name ("model
    fields", "template tag", ``setup()``; blind judgement on the Django docs: 10 of 23 such rows
    accepted, 152 of 177 others). The queue leaves them out; the ranking ``evaluate`` scores keeps them."""
    return (bool(s.parts.get("plain_words")) and s.parts.get("phrase_pages", 0.0) >= MIN_PHRASE_PAGES
            and s.parts.get("link_probability", 1.0) < min_link_probability)


def unnamed_member(s: Suggestion) -> bool:
    """Whether a row's anchor is a member the target documents under a class (``save()`` of
    ``Model``) in a paragraph that names none of those classes: a method name alone does not say whose
    it is (a formset's ``save()``, a feed's ``get_object()``; blind judgement on the Django docs: 10
    of 18 such rows accepted, 12 of 15 other members and functions). The queue leaves them out."""
    return bool(s.parts.get("class_member")) and not s.parts.get("class_named")


def queue_reason(s: Suggestion, options: Options) -> str | None:
    """Why a row with enough confidence still stays out of the default queue (None: it goes in)."""
    if left_plain(s, options.min_link_probability):
        return "words_left_plain"
    if not options.unnamed_members and unnamed_member(s):
        return "member_of_unnamed_class"
    return None


def cut_report(probabilities: np.ndarray, labels: np.ndarray, cut: float, links: int,
               queued: np.ndarray | None = None) -> dict[str, float]:
    """Precision (share of rows at or above ``cut`` that are editors' links) and recall (of ``links``);
    ``queued``: which rows the queue's other cuts keep (all when None)."""
    kept = probabilities >= cut
    if queued is not None:
        kept &= queued
    found = int(labels[kept].sum())
    return {"cut": cut, "rows": int(kept.sum()), "editor_links": found,
            "precision": round(found / kept.sum(), 4) if kept.sum() else 0.0,
            "recall": round(found / links, 4) if links else 0.0}


def learn(crawl: Crawl, options: Options, pool: Pool,
          folds: int = FOLDS, seed: int = 0) -> ConfidenceModel:
    """The site's confidence model, with its cross-fold report; the prior when the site has too few links."""
    links = editor_links(crawl, options)
    all_pairs = len(links)
    if all_pairs < MIN_LINKS:
        model = prior()
        model.report = {"why_prior": f"{all_pairs} links in running text between content pages "
                                     f"(< {MIN_LINKS})"}
        return model
    sources = sample_sources(links.source_urls(), MAX_TRAINING_SOURCES, seed)
    pairs = links.pairs(sources)
    del links
    rows, labels, fold_ids = labelled_rows(crawl, pairs, pool, folds, seed, sources)
    y = np.array(labels)
    if y.sum() < MIN_POSITIVES or y.sum() == len(y):
        model = prior()
        model.report = {"why_prior": f"{int(y.sum())} hidden links found again (< {MIN_POSITIVES})"}
        return model
    x = feature_matrix(rows)
    folds_arr = np.array(fold_ids)
    held_out = np.zeros(len(y))
    for fold in range(folds):
        test = folds_arr == fold
        train = ~test
        if y[train].sum() == 0 or y[train].sum() == train.sum() or not test.any():
            held_out[test] = y[train].mean() if train.any() else 0.0
            continue
        held_out[test] = fit(x[train], y[train]).predict([rows[i] for i in np.flatnonzero(test)])
    from sklearn.metrics import roc_auc_score

    auc = float(roc_auc_score(y, held_out))
    if auc < MIN_AUC:
        model = prior()
        model.report = {"why_prior": f"the site's own model separated held-out links poorly (AUC {auc:.2f})"}
        return model
    model = fit(x, y)
    model.calibration_x, model.calibration_y = isotonic(held_out, y)
    # What the report shows is out of sample twice: each fold's rows calibrated by a curve fitted on
    # the other folds' held-out outputs.
    calibrated = np.zeros(len(y))
    for fold in range(folds):
        test = folds_arr == fold
        if test.any() and (~test).any():
            calibrated[test] = calibrate(held_out[test], *isotonic(held_out[~test], y[~test]))
    held_out = calibrated
    bins = []
    for low in np.arange(0.0, 1.0, 0.1):
        inside = (held_out >= low) & (held_out < low + 0.1 + (1e-9 if low >= 0.9 else 0))
        if inside.any():
            bins.append({"from": round(float(low), 1), "rows": int(inside.sum()),
                         "predicted": round(float(held_out[inside].mean()), 4),
                         "observed": round(float(y[inside].mean()), 4)})
    model.report = {
        "links": len(pairs), "site_links": all_pairs,
        "sampled_sources": len(sources) if sources is not None else None, "rows": len(y),
        "positives": int(y.sum()), "folds": folds, "seed": seed,
        "brier": round(float(np.mean((held_out - y) ** 2)), 4), "auc": round(auc, 4),
        "calibration": bins,
        "at_cut": cut_report(held_out, y, options.min_confidence, len(pairs),
                             np.array([queue_reason(s, options) is None for s in rows])),
        "curve": [cut_report(held_out, y, c, len(pairs)) for c in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)],
    }
    return model
