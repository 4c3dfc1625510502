"""Embedding with the real bundled model: model checks, chunking, page vectors, the cache."""

from __future__ import annotations

import time

import numpy as np
import pyarrow.parquet as pq
import pytest
from crawlkit import COMPOST, ESPRESSO, GRINDER, SITE, bundled_model, later, page, url

from postprocess.errors import InputError
from postprocess.options import Options
from postprocess.stages.embed import (
    BUNDLED_ID,
    BUNDLED_SHA256,
    bundled_model_dir,
    chunk_text,
    combine,
    default_prefix,
    embed_pages,
    from_cache,
    load_model,
    pick_device,
    read_vectors,
    save_vectors,
    sha256_file,
    title_text,
    verify_bundled,
)
from postprocess.stages.load import Page, build_crawl
from postprocess.stages.vector_cache import model_slug

pytestmark = pytest.mark.slow


def test_bundled_weights_have_the_published_hash():
    assert sha256_file(bundled_model_dir() / "model.safetensors") == BUNDLED_SHA256


def test_a_tampered_model_is_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(InputError, match="sha256"):
        verify_bundled(tmp_path)
    with pytest.raises(InputError, match="no model.safetensors"):
        verify_bundled(tmp_path / "missing")


def test_a_model_that_is_not_cached_fails_fast_without_downloading():
    bundled_model()  # libraries imported: time only the failed load
    started = time.perf_counter()
    with pytest.raises(InputError, match="cannot be loaded offline"):
        load_model("BAAI/bge-small-en-v1.5-not-cached-here")
    assert time.perf_counter() - started < 60  # no download attempt, no hang


def test_a_local_model_folder_loads_by_path():
    model = load_model(str(bundled_model_dir()))
    assert model.dimension == 384 and model.prefix == ""


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("intfloat/e5-small-v2", "query: "), ("intfloat/multilingual-e5-base", "query: "),
     ("BAAI/bge-small-en-v1.5", ""), ("nomic-ai/nomic-embed-text-v1.5", "clustering: "),
     ("sentence-transformers/all-MiniLM-L6-v2", "")],
)
def test_prefix_table(name, prefix):
    assert default_prefix(name) == prefix


def test_chunks_are_slices_within_the_token_limit_and_capped():
    model = bundled_model()
    text = " ".join(f"Sentence number {i} talks about coffee grinders and espresso." for i in range(400))
    chunks = chunk_text(text, model.tokenizer, model.max_tokens, overlap=32, max_chunks=8)
    assert len(chunks) == 8
    for chunk in chunks:
        assert chunk in text
        assert len(model.tokenizer(chunk, add_special_tokens=False)["input_ids"]) <= model.max_tokens
    assert model.max_tokens == 254  # 256 less [CLS] and [SEP]
    short = chunk_text("A short page.", model.tokenizer, model.max_tokens, 32, 8)
    assert short == ["A short page."]
    assert chunk_text("   ", model.tokenizer, model.max_tokens, 32, 8) == []


def test_consecutive_chunks_overlap():
    model = bundled_model()
    text = " ".join(f"w{i}" for i in range(2000))
    first, second = chunk_text(text, model.tokenizer, 50, overlap=10, max_chunks=2)
    assert set(first.split()[-3:]) <= set(second.split())


@pytest.mark.parametrize(
    ("title", "h1", "expected"),
    [("Models | Docs", "Models", "Models | Docs"), ("Docs", "Making queries", "Docs — Making queries"),
     ("", "Only h1", "Only h1"), ("", "", "")],
)
def test_title_text(title, h1, expected):
    assert title_text(Page(url="u", title=title, h1=h1)) == expected


def test_combine_weights_title_and_chunks():
    title = np.array([1.0, 0.0], np.float32)
    chunks = np.array([[0.0, 1.0], [0.0, 1.0]], np.float32)
    vec = combine(title, chunks, 0.3)
    assert np.linalg.norm(vec) == pytest.approx(1.0)
    assert vec[1] > vec[0] > 0
    assert np.allclose(combine(None, chunks, 0.3), [0.0, 1.0])
    assert np.allclose(combine(title, np.zeros((0, 2), np.float32), 0.3), [1.0, 0.0])


def test_related_pages_are_nearer_than_unrelated_ones():
    emb = embed_pages(build_crawl(SITE, [], []), bundled_model(), Options())
    row = emb.row()
    v = emb.vectors
    assert v[row[ESPRESSO]] @ v[row[GRINDER]] > v[row[ESPRESSO]] @ v[row[COMPOST]] + 0.2
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert all(len(c) >= 1 for c in emb.chunk_vectors)


def test_pages_without_text_get_no_vector():
    pages = [*SITE, page(url("/empty/"), "Empty page", "")]
    emb = embed_pages(build_crawl(pages, [], []), bundled_model(), Options())
    assert url("/empty/") not in emb.urls and len(emb.urls) == len(SITE)


def test_cache_reuses_unchanged_pages(tmp_path):
    model = bundled_model()
    first = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    assert first.stats["embedded_pages"] == len(SITE)
    again = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    assert again.stats["embedded_pages"] == 0 and again.stats["cached_pages"] == len(SITE)
    assert np.allclose(first.vectors, again.vectors)
    changed = [later(SITE[0], text="Espresso is now a page about descaling the machine with citric acid."),
               later(SITE[1], title="A new title for pour-over"), *SITE[2:]]
    third = embed_pages(build_crawl(changed, [], []), model, Options(), cache_dir=tmp_path)
    assert third.stats["embedded_pages"] == 2
    other = embed_pages(build_crawl(SITE, [], []), model, Options(max_chunks=1), cache_dir=tmp_path)
    assert other.stats["embedded_pages"] == len(SITE)  # chunking is part of the key


def test_the_cache_is_appended_to_never_rewritten(tmp_path):
    """A rerun after one page changed writes one new part with that page; older parts stay as they are."""
    model = bundled_model()
    embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    folder = tmp_path / f"embeddings-{model_slug(BUNDLED_ID)}"
    (first,) = folder.glob("part-*.parquet")
    before = (first.stat().st_mtime_ns, first.read_bytes())
    assert pq.read_table(first).num_rows == len(SITE)
    embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    assert list(folder.glob("part-*.parquet")) == [first]  # nothing new: no empty part
    changed = [later(SITE[0], text="Espresso is now a page about descaling the machine with citric acid."),
               *SITE[1:]]
    third = embed_pages(build_crawl(changed, [], []), model, Options(), cache_dir=tmp_path)
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) == 2 and (first.stat().st_mtime_ns, first.read_bytes()) == before
    assert pq.read_table(parts[1]).num_rows == 1 and third.stats["embedded_pages"] == 1
    cached = from_cache(build_crawl(changed, [], []), BUNDLED_ID, "", Options(), tmp_path)
    assert cached is not None and np.allclose(cached.vectors, third.vectors)


def test_an_unreadable_cache_part_is_named_and_its_pages_embedded_again(tmp_path, caplog):
    model = bundled_model()
    embed_pages(build_crawl(SITE[:2], [], []), model, Options(), cache_dir=tmp_path)
    (part,) = (tmp_path / f"embeddings-{model_slug(BUNDLED_ID)}").glob("part-*.parquet")
    part.write_bytes(part.read_bytes()[:40])
    again = embed_pages(build_crawl(SITE[:2], [], []), model, Options(), cache_dir=tmp_path)
    assert again.stats["embedded_pages"] == 2
    assert part.name in caplog.text and "unreadable" in caplog.text


def test_a_cache_file_of_the_older_layout_is_still_read(tmp_path):
    model = bundled_model()
    first = embed_pages(build_crawl(SITE[:3], [], []), model, Options(), cache_dir=tmp_path)
    folder = tmp_path / f"embeddings-{model_slug(BUNDLED_ID)}"
    (part,) = folder.glob("part-*.parquet")
    part.rename(tmp_path / f"embeddings-{model_slug(BUNDLED_ID)}.parquet")
    again = embed_pages(build_crawl(SITE[:3], [], []), model, Options(), cache_dir=tmp_path)
    assert again.stats["embedded_pages"] == 0 and np.allclose(again.vectors, first.vectors)


def test_device_auto_takes_the_cpu_when_torch_sees_no_gpu():
    import torch

    if torch.cuda.is_available():
        assert pick_device("auto") == "cuda"
    else:
        assert pick_device("auto") == "cpu" and pick_device("cpu") == "cpu"
        with pytest.raises(InputError, match="--device cuda: torch sees no CUDA device"):
            pick_device("cuda")
    assert bundled_model().device in ("cpu", "cuda")
    with pytest.raises(InputError, match="--device must be"):
        pick_device("tpu")


def test_embedding_stats_say_which_device_and_how_fast(tmp_path):
    emb = embed_pages(build_crawl(SITE[:3], [], []), bundled_model(), Options())
    assert emb.stats["device"] in ("cpu", "cuda") and emb.stats["texts_per_second"] > 0


def test_vectors_round_trip(tmp_path):
    emb = embed_pages(build_crawl(SITE[:3], [], []), bundled_model(), Options())
    save_vectors(tmp_path / "vectors.parquet", emb)
    back = read_vectors(tmp_path / "vectors.parquet")
    assert back.urls == emb.urls and np.allclose(back.vectors, emb.vectors)
    assert all(np.allclose(a, b) for a, b in zip(back.chunk_vectors, emb.chunk_vectors, strict=True))
    with pytest.raises(InputError, match="run the embed stage first"):
        read_vectors(tmp_path / "missing.parquet")
