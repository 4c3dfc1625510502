"""Is the paragraph around an anchor about the target? Cosine of the paragraph's vector and the target's.

Two pages can be close while the sentence that would carry the link is about
something else ("Press enquiries" on an about page, near the French-press guide).
Each anchored row's paragraph (its block) is embedded with the page model and
compared with the target page's vector: the ``passage`` score part. Vectors are
kept by a hash of the text in ``OUT/cache/passages-<model>/`` (appended parts,
``vector_cache``) across runs, appended a step of paragraphs at a time as a run makes
them; they are read from the cache when a pool asks for them (each distinct paragraph
once), a row group at a time: the scores are made as the vectors are read, which are
then let go.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from linkspider.items import PROSE_KINDS
from postprocess.background import in_chunks, worth_a_fork
from postprocess.stages.candidates import Suggestion
from postprocess.stages.embed import Embedder, Embeddings
from postprocess.stages.load import Crawl, block_texts
from postprocess.stages.vector_cache import VectorParts, matrix_column, vector_column

#: Characters of a paragraph embedded (the model reads ~256 tokens; longer paragraphs are cut).
PASSAGE_CHARS = 1200


#: Paragraph vectors made in this run handed on at a time.
BATCH = 8192
#: Paragraphs embedded at a time, each step appended to the cache as it is made: a cold run holds
#: one step's texts and vectors, not all it made (100k synthetic pages: 275,560 paragraphs).
EMBED_STEP = 50_000


def _key(model_id: str, text: str) -> str:
    return hashlib.sha1(f"{model_id}\x00{text}".encode()).hexdigest()


def _distinct(keys: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(the distinct keys in first-seen order, each key's position among them, where in ``keys``
    each distinct key first stands)."""
    position: dict[str, int] = {}
    of_key = np.fromiter((position.setdefault(k, len(position)) for k in keys), np.int64, len(keys))
    return list(position), of_key, np.unique(of_key, return_index=True)[1]


class PassageVectors:
    """Paragraph vectors: those made in this run appended to the on-disk cache as they are made (held in
    memory only without one), and read from it when asked for (only those, never the whole cache); the
    model is loaded only when a paragraph is new."""

    def __init__(self, model: Embedder | Callable[[], Embedder], cache_dir: str | Path | None = None,
                 model_id: str | None = None, workers: int = 1) -> None:
        """``workers`` above 1 (the static encoder, which works on one core) and a cache: the steps of
        paragraphs to embed are shared with a forked second process."""
        self.workers = workers
        self._model = model if isinstance(model, Embedder) else None
        self._load = None if isinstance(model, Embedder) else model
        self.model_id = model_id or (self._model.model_id if self._model else "")
        self.vectors: dict[str, np.ndarray] = {}  # made or adopted in this run, without a cache
        self.parts = VectorParts.for_model(cache_dir, "passages", self.model_id) if cache_dir else None
        self.embedded = 0

    @property
    def model(self) -> Embedder:
        if self._model is None:
            assert self._load is not None
            self._model = self._load()
            self.model_id = self.model_id or self._model.model_id
        return self._model

    def key(self, text: str) -> str:
        """The cache key of a paragraph (cut to PASSAGE_CHARS) for this model."""
        return _key(self.model_id, text[:PASSAGE_CHARS])

    def cosines(self, keys: Sequence[str], texts_of: Callable[[list[int]], list[str]], vectors: np.ndarray,
                targets: np.ndarray, places: np.ndarray | None = None) -> np.ndarray:
        """For each of ``keys``, the cosine of its paragraph's vector and ``vectors[targets[i]]`` (unit
        vectors): each paragraph's vector used a batch at a time as they are read or made and let
        go, never held one per distinct paragraph (100k synthetic pages: ~300,000 paragraphs, ~0.5 GB
        at 384 dimensions). ``places``: each key's source page number, the order the paragraphs to
        embed are taken in (see ``_each_vector``)."""
        distinct, of_key, first = _distinct(keys)
        order = np.argsort(of_key, kind="stable")
        bounds = np.searchsorted(of_key[order], np.arange(len(distinct) + 1))
        out = np.zeros(len(keys), dtype=np.float64)

        def score(at: np.ndarray, batch: np.ndarray) -> None:
            for vector, d in zip(batch, at.tolist(), strict=True):
                for r in order[bounds[d]:bounds[d + 1]].tolist():
                    out[r] = float(vector @ vectors[targets[r]])

        self._each_vector(distinct, first, texts_of, score, vectors.shape[1] if vectors.ndim == 2 else None,
                          places)
        return out

    def _each_vector(self, distinct: list[str], first: np.ndarray,
                     texts_of: Callable[[list[int]], list[str]],
                     take: Callable[[np.ndarray, np.ndarray], None], dim: int | None = None,
                     places: np.ndarray | None = None) -> None:
        """Each of the ``distinct`` keys' vectors handed once to ``take(positions in distinct, vectors)``,
        a batch at a time: those held in memory (no cache), those in the cache (of ``dim`` values if given),
        then the others, embedded ``EMBED_STEP`` at a time (``texts_of(positions in the keys)``: their
        texts, asked for at ``first``, where each distinct key first stands), each step appended to
        the cache (kept in memory without one). The others are taken in the order of ``places`` (by
        key: a source page's number) where given, else in the keys' order: a step's texts are read from
        the pages' compressed groups, and steps of keys in hash order each read nearly every group
        (a million synthetic pages: 56 steps of 50,000 paragraphs from ~1M pages, the phase ~31× its
        100k time for ~10× the paragraphs)."""
        if not distinct:
            return
        found = np.zeros(len(distinct), dtype=bool)
        here = [i for i, k in enumerate(distinct) if k in self.vectors]
        for start in range(0, len(here), BATCH):
            at = here[start:start + BATCH]
            batch = np.stack([self.vectors[distinct[i]] for i in at])
            dim = dim or batch.shape[1]
            take(np.array(at, dtype=np.int64), batch)
        found[here] = True
        if self.parts is not None and not found.all():
            rest = np.flatnonzero(~found)
            hit = self.parts.stream([distinct[i] for i in rest.tolist()],
                                    lambda at, vectors: take(rest[at], vectors), dim)
            found[rest[hit]] = True
        if found.all():
            return
        missing = np.flatnonzero(~found)
        if places is not None:  # by source page, each page's as first seen
            missing = missing[np.argsort(places[first[missing]], kind="stable")]
        wanted = {distinct[i]: i for i in missing.tolist()}
        order = list(wanted) if places is not None else sorted(wanted)
        steps = [order[start:start + EMBED_STEP] for start in range(0, len(order), EMBED_STEP)]
        if self.parts is not None and worth_a_fork(len(steps), self.workers, min_items=2):
            self._embed_in_two(steps, [int(first[wanted[k]]) for k in order], texts_of)
            rest = np.array([wanted[k] for k in order], dtype=np.int64)
            hit = self.parts.stream(order, lambda at, vectors: take(rest[at], vectors), dim)
            if not hit.all():
                raise OSError(f"the paragraph cache {self.parts.folder} lost vectors it was just given")
            return
        for step in steps:
            vectors = self._embed_step(self.model, step, [int(first[wanted[k]]) for k in step], texts_of)
            self.embedded += len(step)
            take(np.array([wanted[k] for k in step], dtype=np.int64), vectors)

    def _embed_step(self, model: Embedder, step: list[str], firsts: list[int],
                    texts_of: Callable[[list[int]], list[str]]) -> np.ndarray:
        """The vectors of the keys ``step`` (their texts ``texts_of(firsts)``), appended to the cache at
        once (a later ask reads them back from there), or kept in memory without one."""
        texts = texts_of(firsts)
        vectors = np.asarray(model.encode(texts), np.float32)
        del texts
        if self.parts is not None:
            self.parts.append(pa.table({"key": pa.array(step, pa.string()),
                                        "vector": matrix_column(vectors)}))
        else:
            self.vectors.update(zip(step, vectors, strict=True))
        return vectors

    def _embed_in_two(self, steps: list[list[str]], firsts: list[int],
                      texts_of: Callable[[list[int]], list[str]]) -> None:
        """The steps embedded by this process and a forked second one, whoever is free first
        (``background.in_chunks``, a step at a time), each appending its own to the cache; nothing
        comes back but their number (a million synthetic pages: ~2.7M paragraphs, 45 s a step of
        50,000 on one core)."""
        model = self.model  # loaded before the fork: the second process has it too
        starts = np.cumsum([0] + [len(step) for step in steps])
        numbered = list(range(len(steps)))

        def embed(chunk: Sequence[int]) -> int:
            for number in chunk:
                self._embed_step(model, steps[number], firsts[starts[number]:starts[number + 1]], texts_of)
            return len(chunk)

        in_chunks(embed, numbered, chunk=1)  # each step's vectors are in the cache once it returns
        self.embedded += int(starts[-1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (cut to PASSAGE_CHARS), one row each: only the paragraphs neither
        made in this run nor in the cache are embedded, each distinct one once."""
        keys = [self.key(t) for t in texts]
        distinct, of_key, first = _distinct(keys)
        matrix: np.ndarray | None = None

        def fill(at: np.ndarray, vectors: np.ndarray) -> None:
            nonlocal matrix
            if matrix is None:
                matrix = np.zeros((len(distinct), vectors.shape[1]), np.float32)
            matrix[at] = vectors

        self._each_vector(distinct, first, lambda at: [texts[i][:PASSAGE_CHARS] for i in at], fill)
        return matrix[of_key] if matrix is not None else np.zeros((0, 0), dtype=np.float32)

    def adopt(self, vectors: dict[str, np.ndarray]) -> None:
        """Vectors made elsewhere (another process) for this model: appended to the cache as this run's
        own are, or without one kept unless one is already here."""
        if self.parts is not None:
            if vectors:
                self.parts.append(pa.table({"key": pa.array(list(vectors), pa.string()),
                                            "vector": vector_column(list(vectors.values()))}))
            return
        for key, vector in vectors.items():
            self.vectors.setdefault(key, vector)


def paragraph_texts(crawl: Crawl, rows: Sequence[Suggestion]) -> list[str]:
    """The paragraph each row's anchor stands in: the source's prose block numbered ``paragraph``
    (``anchors.source_text``'s blocks), each source's blocks read once, in page order."""
    return paragraph_keys(crawl, rows, str)


#: Anchored rows whose paragraphs' keys are made by two processes (``paragraph_keys``).
KEYS_SPLIT_ROWS = 200_000
#: Rows a process takes at a time there (or a 32nd of them, if more).
KEYS_CHUNK_ROWS = 20_000


def paragraph_keys(crawl: Crawl, rows: Sequence[Suggestion], key: Callable[[str], str],
                   workers: int = 1, sources: np.ndarray | None = None) -> list[str]:
    """``key`` of each row's paragraph (the source's prose block numbered ``paragraph``), made a
    paragraph at a time (the texts are never held at once), each source's blocks read once, in page
    order; with enough rows and ``workers`` above 1, the rows are shared in chunks of that order
    with a forked second process, which is handed only each row's page number and paragraph (not
    the rows: reading them there would copy their memory; a million synthetic pages, ~3M rows).
    ``sources``: each row's source page number, if the caller has them (``source_pages``)."""
    sources = source_pages(crawl, rows) if sources is None else sources
    paragraphs = np.fromiter((s.paragraph for s in rows), np.int64, len(rows))
    order = np.argsort(sources, kind="stable")  # page order, each source's rows as they stand
    pages = crawl.pages

    def keys_of(part: np.ndarray) -> list[str]:
        made, source, blocks = [], -1, []
        for k in part.tolist():
            if sources[k] != source:
                source = int(sources[k])
                blocks = [t for t in block_texts(pages[source], PROSE_KINDS) if t.strip()]
            made.append(key(blocks[paragraphs[k]]))
        return made

    split = worth_a_fork(len(rows), workers, KEYS_SPLIT_ROWS)
    chunk = max(KEYS_CHUNK_ROWS, len(rows) // 32)
    keys = [""] * len(rows)
    at = 0
    for made in in_chunks(keys_of, order, fork=split, chunk=chunk, name="ls-paragraph-keys"):
        for k, made_key in zip(order[at:at + len(made)].tolist(), made, strict=True):
            keys[k] = made_key
        at += len(made)
    return keys


def source_pages(crawl: Crawl, rows: Sequence[Suggestion]) -> np.ndarray:
    """Each row's source page: its number in ``crawl.pages``."""
    index = crawl.page_index()
    return np.fromiter((index[s.source_url] for s in rows), np.int64, len(rows))


def add_passage_scores(crawl: Crawl, rows: Sequence[Suggestion], embeddings: Embeddings,
                       passages: PassageVectors, workers: int = 1) -> None:
    """Set ``parts['passage']``: cosine of each anchored row's paragraph and its target page. The rows
    name their paragraph by its block; only the paragraphs' keys are held at once (a text list was
    ~270 MB at 100k synthetic pages), made by ``workers`` processes (``paragraph_keys``), and their
    texts are read again only for those to embed."""
    anchored = [s for s in rows if s.paragraph >= 0]
    if not anchored:
        return
    sources = source_pages(crawl, anchored)
    keys = paragraph_keys(crawl, anchored, passages.key, workers, sources)
    row = embeddings.row()
    targets = np.fromiter((row[s.target_url] for s in anchored), np.int64, len(anchored))
    scores = passages.cosines(  # each distinct paragraph once
        keys, lambda at: [t[:PASSAGE_CHARS] for t in paragraph_texts(crawl, [anchored[i] for i in at])],
        embeddings.vectors, targets, places=sources)
    del keys
    for s, score in zip(anchored, scores.tolist(), strict=True):
        s.parts["passage"] = round(score, 6)
