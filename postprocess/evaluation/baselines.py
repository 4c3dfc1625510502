"""The two reference rankings the default is measured against.

* ``plain_rankings`` — the approach of the blog posts this project comes from:
  title + first 2,000 characters of each page, one embedding per page with the
  default model, a dense similarity matrix; anchor = the target's title.
* ``tfidf_rankings`` — TF-IDF cosine (sublinear tf) over title + text;
  anchor = the target's title.

Both leave out self links and pairs that are already linked (any position), as
the pipeline does, and return each source's best ``depth`` targets. They build
an n×n matrix: fine for a baseline on a few thousand pages, never used by the
pipeline.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from postprocess.evaluation.rankings import Ranked, Rankings

#: Characters of main text the plain approach embeds after the title.
PLAIN_CHARS = 2000


class PageLike(Protocol):
    """What the baselines read from a page row."""

    url: str
    title: str | None
    text: str | None


def already_linked(links: Iterable[Any], index: dict[str, int]) -> set[tuple[int, int]]:
    """Row pairs (source, target) linked in any position among the known pages."""
    out: set[tuple[int, int]] = set()
    for link in links:
        s, t = index.get(link.source_url), index.get(link.target_url)
        if s is not None and t is not None:
            out.add((s, t))
    return out


def rank_dense(
    similarity: np.ndarray,
    urls: Sequence[str],
    titles: Sequence[str],
    linked: set[tuple[int, int]],
    depth: int = 10,
    targets: set[str] | None = None,
) -> Rankings:
    """Each source's ``depth`` most similar targets, skipping itself and linked pairs; anchor = title.

    ``targets``, when given, are the only URLs that may be suggested.
    """
    sim = np.array(similarity, dtype=np.float32, copy=True)
    np.fill_diagonal(sim, -np.inf)
    if targets is not None:
        sim[:, [i for i, url in enumerate(urls) if url not in targets]] = -np.inf
    for s, t in linked:
        sim[s, t] = -np.inf
    out: dict[str, list[Ranked]] = {}
    for s in range(len(urls)):
        row = sim[s]
        take = min(depth, len(urls) - 1)
        if take <= 0:
            out[urls[s]] = []
            continue
        top = np.argpartition(-row, take - 1)[:take]
        top = top[np.argsort(-row[top], kind="stable")]
        out[urls[s]] = [Ranked(urls[t], float(row[t]), titles[t]) for t in top if np.isfinite(row[t])]
    return out


def plain_rankings(pages: Sequence[PageLike], links: Iterable[Any], model: Any, depth: int = 10,
                   vectors: np.ndarray | None = None, targets: set[str] | None = None,
                   cache_dir: str | None = None) -> Rankings:
    """The plain approach: one embedding of title + first 2,000 characters, dense cosine matrix.

    ``vectors`` (unit rows, in page order) skips the embedding, e.g. when evaluating
    several hidden samples on the same pages.
    """
    if vectors is None:
        vectors = plain_vectors(pages, model, cache_dir)
    urls = [p.url for p in pages]
    index = {u: i for i, u in enumerate(urls)}
    titles = [p.title or "" for p in pages]
    return rank_dense(vectors @ vectors.T, urls, titles, already_linked(links, index), depth, targets)


def plain_vectors(pages: Sequence[PageLike], model: Any, cache_dir: str | None = None) -> np.ndarray:
    """Unit vectors of title + first 2,000 characters of text, one per page.

    With ``cache_dir`` the vectors are kept in ``plain-<sha1>.npy``, keyed by the
    model and every input text, so repeated evaluations embed once.
    """
    texts = [f"{p.title or ''} {(p.text or '')[:PLAIN_CHARS]}" for p in pages]
    if cache_dir:
        key = hashlib.sha1("\x1f".join([str(getattr(model, "model_id", "")), *texts]).encode()).hexdigest()
        path = Path(cache_dir) / f"plain-{key}.npy"
        if path.is_file():
            return np.load(path)
        vectors = _encode(texts, model)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.npy")
        np.save(tmp, vectors)
        os.replace(tmp, path)
        return vectors
    return _encode(texts, model)


def _encode(texts: Sequence[str], model: Any) -> np.ndarray:
    if hasattr(model, "prefix"):  # stages.embed.Embedder: the model's prefix, length-sorted batches
        return np.asarray(model.encode(texts, 32, progress="plain baseline"), dtype=np.float32)
    return np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
                      dtype=np.float32)


def tfidf_rankings(pages: Sequence[PageLike], links: Iterable[Any], depth: int = 10,
                   targets: set[str] | None = None) -> Rankings:
    """TF-IDF cosine (sublinear tf, English stop words) on title + text."""
    urls = [p.url for p in pages]
    index = {u: i for i, u in enumerate(urls)}
    titles = [p.title or "" for p in pages]
    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english", dtype=np.float32)
    try:
        matrix = vectorizer.fit_transform([f"{p.title or ''}\n{p.text or ''}" for p in pages])
    except ValueError:  # no word in any page
        matrix = sparse.csr_matrix((len(pages), 1), dtype=np.float32)
    similarity = np.asarray((matrix @ matrix.T).todense())
    return rank_dense(similarity, urls, titles, already_linked(links, index), depth, targets)
