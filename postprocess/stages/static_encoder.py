"""The fast encoder (``--encoder static``): a model2vec static model distilled from the page model.

A static model looks each token's vector up in a table (made once from the
sentence-transformers model by model2vec's distillation) and averages them: no
transformer runs per text, so it embeds about two orders of magnitude faster on a CPU,
and finds fewer related pages (docs/benchmarks.md "Fast encoder (static)").

The table is distilled once per model, offline, into ``OUT/cache/static-<model-slug>/``
(written to a temporary folder, then renamed) and reused by later runs. A static model
has no length limit, so a page is cut into windows of ``WORDS_PER_CHUNK`` words
(``chunk_overlap`` words shared, at most ``max_chunks`` windows): the best-chunk
evidence of the ranking keeps working, and page vectors are combined as for the
transformer (title weight and mean of chunks).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from postprocess.errors import InputError
from postprocess.stages.output import progress as progress_bar
from postprocess.stages.static_vectors import WordTokens

log = logging.getLogger(__name__)

ENCODERS = ("transformer", "static")
#: Words per chunk of the static encoder (about the transformer's 256 tokens of English).
WORDS_PER_CHUNK = 256


def static_id(model_id: str) -> str:
    """The id the cache and vectors.parquet give the static model of ``model_id``."""
    from postprocess.stages.vector_cache import model_slug

    return f"static-{model_slug(model_id)}"


def static_dir(cache_dir: str | Path, model_id: str) -> Path:
    """Where the static model of ``model_id`` is kept: OUT/cache/static-<model-slug>/."""
    return Path(cache_dir) / static_id(model_id)


def word_chunks(text: str, words: int, overlap: int, max_chunks: int) -> list[str]:
    """Windows of ``words`` words (``overlap`` shared, at most half), at most ``max_chunks``."""
    tokens = text.split()
    if not tokens:
        return []
    step = max(1, words - max(0, min(overlap, words // 2)))
    chunks: list[str] = []
    for start in range(0, len(tokens), step):
        chunks.append(" ".join(tokens[start:start + words]))
        if start + words >= len(tokens) or len(chunks) >= max_chunks:
            break
    return chunks


def distil(source: str, folder: Path) -> None:
    """Distil a static model from the sentence-transformers model at ``source`` into ``folder``.

    Written to a temporary folder beside ``folder`` and renamed, so a run stopped half way
    leaves no model that looks complete.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise InputError(f"--encoder static needs model2vec with its distill extra: {exc}") from exc
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
    try:
        started = time.perf_counter()
        log.info("distilling a static model from %s into %s (once per model)", source, folder)
        # model2vec's progress bar ("Encoding tokens") is shown on a terminal only, not in logs.
        quiet = contextlib.nullcontext() if sys.stderr.isatty() else contextlib.redirect_stderr(io.StringIO())
        try:
            with quiet:
                model = distill(source, device="cpu")
        except Exception as exc:  # noqa: BLE001 - any distillation failure is one line for the user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot distil a static model from {source} offline: {first}") from exc
        model.save_pretrained(str(tmp))
        if folder.exists():  # another run finished first: keep its model
            return
        tmp.rename(folder)
        log.info("distilled a static model into %s in %.1f s", folder, time.perf_counter() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class StaticEmbedder:
    """A model2vec static model with the interface embed_pages uses (encode, chunks, ids)."""

    model: object
    model_id: str
    prefix: str

    def __post_init__(self) -> None:
        self._word_tokens = WordTokens(self.model) if WordTokens.fits(self.model) else None

    @property
    def dimension(self) -> int:
        return int(self.model.dim)

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """model2vec's vectors of ``texts`` (its table's dtype), a batch's words tokenised once where
        the tokenizer allows (``static_vectors``)."""
        if self._word_tokens is not None:
            return self._word_tokens.vectors(texts)
        return self.model.encode(texts, max_length=None, use_multiprocessing=False)

    def chunks(self, text: str, overlap: int, max_chunks: int) -> list[str]:
        return word_chunks(text, WORDS_PER_CHUNK, overlap, max_chunks)

    def encode(self, texts: Sequence[str], batch_size: int = 1024, progress: str | None = None) -> np.ndarray:
        """Unit vectors (float32) of ``texts``, in input order; no text is cut short."""
        dim = self.dimension
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        bar = progress_bar(len(texts), progress, "text") if progress else None
        step = max(batch_size, 1024)
        for start in range(0, len(texts), step):
            batch = [self.prefix + t for t in texts[start:start + step]]
            vecs = np.asarray(self._vectors(batch), dtype=np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            out[start:start + len(batch)] = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
            if bar is not None:
                bar.update(len(batch))
        if bar is not None:
            bar.close()
        return out


def load_static(source: str, model_id: str, prefix: str, cache_dir: str | Path) -> StaticEmbedder:
    """The static model of ``model_id``: from the cache folder, or distilled into it first."""
    folder = static_dir(cache_dir, model_id)
    if not (folder / "model.safetensors").is_file():
        distil(source, folder)
    try:
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(str(folder))
    except Exception as exc:  # noqa: BLE001 - a damaged folder is one line for the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"static model in {folder} cannot be loaded ({first}): delete the folder "
                         "to distil it again") from exc
    return StaticEmbedder(model=model, model_id=static_id(model_id), prefix=prefix)
