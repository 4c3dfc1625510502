"""Is the paragraph around an anchor about the target? Cosine of the paragraph's vector and the target's.

Two pages can be close while the sentence that would carry the link is about
something else ("Press enquiries" on an about page, near the French-press guide).
Each anchored row's paragraph (its block) is embedded with the page model and
compared with the target page's vector: the ``passage`` score part. Vectors are
kept by a hash of the text in ``OUT/cache/passages-<model>/`` (appended parts,
``vector_cache``) across runs; a run holds only those it made, and reads the others
from the cache when a pool asks for them (each distinct paragraph once).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from linkspider.items import PROSE_KINDS
from postprocess.stages.candidates import Suggestion
from postprocess.stages.embed import Embedder, Embeddings
from postprocess.stages.load import Crawl, block_texts
from postprocess.stages.vector_cache import VectorParts, vector_column

#: Characters of a paragraph embedded (the model reads ~256 tokens; longer paragraphs are cut).
PASSAGE_CHARS = 1200


def _key(model_id: str, text: str) -> str:
    return hashlib.sha1(f"{model_id}\x00{text}".encode()).hexdigest()


class PassageVectors:
    """Paragraph vectors: those made in this run in memory, the others read from the on-disk cache when
    asked for (only those, never the whole cache); the model is loaded only when a paragraph is new."""

    def __init__(self, model: Embedder | Callable[[], Embedder], cache_dir: str | Path | None = None,
                 model_id: str | None = None) -> None:
        self._model = model if isinstance(model, Embedder) else None
        self._load = None if isinstance(model, Embedder) else model
        self.model_id = model_id or (self._model.model_id if self._model else "")
        self.vectors: dict[str, np.ndarray] = {}  # made (or adopted) in this run
        self.parts = VectorParts.for_model(cache_dir, "passages", self.model_id) if cache_dir else None
        self._saved: set[str] = set()
        self.embedded = 0

    @property
    def model(self) -> Embedder:
        if self._model is None:
            assert self._load is not None
            self._model = self._load()
            self.model_id = self.model_id or self._model.model_id
        return self._model

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(one unit vector per distinct paragraph, the row of each of ``texts`` in it); paragraphs are
        cut to PASSAGE_CHARS, and only those neither made in this run nor in the cache are embedded."""
        cut = [t[:PASSAGE_CHARS] for t in texts]
        return self.lookup_keys([_key(self.model_id, t) for t in cut], lambda at: [cut[i] for i in at])

    def key(self, text: str) -> str:
        """The cache key of a paragraph (cut to PASSAGE_CHARS) for this model."""
        return _key(self.model_id, text[:PASSAGE_CHARS])

    def lookup_keys(self, keys: Sequence[str], texts_of: Callable[[list[int]], list[str]]
                    ) -> tuple[np.ndarray, np.ndarray]:
        """``lookup`` of the paragraphs with these keys: ``texts_of(positions)`` gives the texts (cut)
        of those at ``positions`` in ``keys``, asked only for the ones to embed (none from a warm cache)."""
        distinct = list(dict.fromkeys(keys))
        if not distinct:
            return np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int64)
        if self.parts is not None and any(k not in self.vectors for k in distinct):
            matrix, found = self.parts.lookup(distinct)
        else:
            matrix, found = np.zeros((len(distinct), 0), np.float32), np.zeros(len(distinct), dtype=bool)
        cached = {k for k, there in zip(distinct, found.tolist(), strict=True) if there}
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k not in self.vectors and k not in cached:
                first.setdefault(k, i)
        wanted = sorted(first)
        missing = list(zip(wanted, texts_of([first[k] for k in wanted]), strict=True)) if wanted else []
        if missing:
            vecs = self.model.encode([t for _, t in missing])
            for (k, _), v in zip(missing, vecs, strict=True):
                self.vectors[k] = v
            self.embedded += len(missing)
        made = [i for i, k in enumerate(distinct) if k in self.vectors and k not in cached]
        if made:  # into the rows the cache left empty (all of them when it had none)
            if matrix.shape[1] == 0:
                matrix = np.zeros((len(distinct), len(self.vectors[distinct[made[0]]])), np.float32)
            matrix[made] = np.stack([self.vectors[distinct[i]] for i in made])
        position = {k: i for i, k in enumerate(distinct)}
        return matrix, np.array([position[k] for k in keys], dtype=np.int64)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (cut to PASSAGE_CHARS), embedding only those not seen before."""
        matrix, rows = self.lookup(texts)
        return matrix[rows] if len(rows) else np.zeros((0, 0), dtype=np.float32)

    def adopt(self, vectors: dict[str, np.ndarray]) -> None:
        """Vectors made elsewhere (another process) for this model, kept unless one is already here."""
        for key, vector in vectors.items():
            self.vectors.setdefault(key, vector)

    def save(self) -> None:
        """Append the vectors made since the last save as one new part of the cache."""
        if self.parts is None:
            return
        keys = sorted(set(self.vectors) - self._saved)
        if keys:
            self.parts.append(pa.table({"key": pa.array(keys, pa.string()),
                                        "vector": vector_column([self.vectors[k] for k in keys])}))
        self._saved.update(keys)


def paragraph_texts(crawl: Crawl, rows: Sequence[Suggestion]) -> list[str]:
    """The paragraph each row's anchor stands in: the source's prose block numbered ``paragraph``
    (``anchors.source_text``'s blocks), each source's blocks read once, in page order."""
    index = crawl.page_index()
    texts = [""] * len(rows)
    source, blocks = None, []
    for k in sorted(range(len(rows)), key=lambda k: index[rows[k].source_url]):
        if rows[k].source_url != source:
            source = rows[k].source_url
            blocks = [t for t in block_texts(crawl.pages[index[source]], PROSE_KINDS) if t.strip()]
        texts[k] = blocks[rows[k].paragraph]
    return texts


def add_passage_scores(crawl: Crawl, rows: Sequence[Suggestion], embeddings: Embeddings,
                       passages: PassageVectors) -> None:
    """Set ``parts['passage']``: cosine of each anchored row's paragraph and its target page. The rows
    name their paragraph by its block; only the paragraphs' keys are held at once, and their texts
    are read again only for those to embed."""
    anchored = [s for s in rows if s.paragraph >= 0]
    if not anchored:
        return
    keys = list(map(passages.key, paragraph_texts(crawl, anchored)))
    matrix, of_row = passages.lookup_keys(  # each distinct paragraph once
        keys, lambda at: [t[:PASSAGE_CHARS] for t in paragraph_texts(crawl, [anchored[i] for i in at])])
    del keys
    row = embeddings.row()
    for s, r in zip(anchored, of_row.tolist(), strict=True):
        s.parts["passage"] = round(float(matrix[r] @ embeddings.vectors[row[s.target_url]]), 6)
