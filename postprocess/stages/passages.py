"""Is the paragraph around an anchor about the target? Cosine of the paragraph's vector and the target's.

Two pages can be close while the sentence that would carry the link is about
something else ("Press enquiries" on an about page, near the French-press guide).
Each anchored row's paragraph (its block) is embedded with the page model and
compared with the target page's vector: the ``passage`` score part. Vectors are
kept by a hash of the text, in memory across calls and in
``OUT/cache/passages-<model>/`` (appended parts, ``vector_cache``) across runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from postprocess.stages.candidates import Suggestion
from postprocess.stages.embed import Embedder, Embeddings
from postprocess.stages.vector_cache import VectorParts, vector_column, vectors_of

#: Characters of a paragraph embedded (the model reads ~256 tokens; longer paragraphs are cut).
PASSAGE_CHARS = 1200


def _key(model_id: str, text: str) -> str:
    return hashlib.sha1(f"{model_id}\x00{text}".encode()).hexdigest()


class PassageVectors:
    """Paragraph vectors with a memory and an on-disk cache; the model is loaded only when needed."""

    def __init__(self, model: Embedder | Callable[[], Embedder], cache_dir: str | Path | None = None,
                 model_id: str | None = None) -> None:
        self._model = model if isinstance(model, Embedder) else None
        self._load = None if isinstance(model, Embedder) else model
        self.model_id = model_id or (self._model.model_id if self._model else "")
        self.vectors: dict[str, np.ndarray] = {}
        self.parts = VectorParts.for_model(cache_dir, "passages", self.model_id) if cache_dir else None
        self._on_disk: set[str] = set()
        if self.parts is not None:
            for table in self.parts.tables():
                self.vectors.update(zip(table["key"].to_pylist(), vectors_of(table["vector"]), strict=True))
            self._on_disk = set(self.vectors)
        self.embedded = 0

    @property
    def model(self) -> Embedder:
        if self._model is None:
            assert self._load is not None
            self._model = self._load()
            self.model_id = self.model_id or self._model.model_id
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (cut to PASSAGE_CHARS), embedding only those not seen before."""
        cut = [t[:PASSAGE_CHARS] for t in texts]
        keys = [_key(self.model_id, t) for t in cut]
        missing = sorted({k: t for k, t in zip(keys, cut, strict=True) if k not in self.vectors}.items())
        if missing:
            vecs = self.model.encode([t for _, t in missing])
            for (k, _), v in zip(missing, vecs, strict=True):
                self.vectors[k] = v
            self.embedded += len(missing)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

    def adopt(self, vectors: dict[str, np.ndarray]) -> None:
        """Vectors made elsewhere (another process) for this model, kept unless one is already here."""
        for key, vector in vectors.items():
            self.vectors.setdefault(key, vector)

    def save(self) -> None:
        """Append the vectors made since the last save as one new part of the cache."""
        if self.parts is None:
            return
        keys = sorted(set(self.vectors) - self._on_disk)
        if not keys:
            return
        self.parts.append(pa.table({"key": pa.array(keys, pa.string()),
                                    "vector": vector_column([self.vectors[k] for k in keys])}))
        self._on_disk.update(keys)


def add_passage_scores(rows: Sequence[Suggestion], embeddings: Embeddings, passages: PassageVectors) -> None:
    """Set ``parts['passage']``: cosine of each anchored row's paragraph and its target page."""
    anchored = [s for s in rows if s.passage]
    if not anchored:
        return
    vecs = passages.encode([s.passage for s in anchored])
    row = embeddings.row()
    for s, v in zip(anchored, vecs, strict=True):
        s.parts["passage"] = round(float(v @ embeddings.vectors[row[s.target_url]]), 6)
