"""Embedding with the real bundled model: model checks, chunking, page vectors, the cache."""

from __future__ import annotations

import time

import numpy as np
import pyarrow.parquet as pq
import pytest
from crawlkit import COMPOST, ESPRESSO, GRINDER, SITE, bundled_model, later, page, url

from postprocess.errors import InputError
from postprocess.options import Options
from postprocess.stages import embed
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
    expected = [c.copy() for c in emb.chunk_vectors]
    save_vectors(tmp_path / "vectors.parquet", emb)
    back = read_vectors(tmp_path / "vectors.parquet")
    assert back.urls == emb.urls and np.allclose(back.vectors, emb.vectors)
    assert all(np.array_equal(a, b) for a, b in zip(back.chunk_vectors, expected, strict=True))
    assert isinstance(back.chunk_vectors.matrix, np.memmap)  # mapped from its file, not read
    with pytest.raises(InputError, match="run the embed stage first"):
        read_vectors(tmp_path / "missing.parquet")


def test_page_vectors_are_mapped_from_one_file_that_saving_again_keeps(tmp_path):
    """The page vectors go to a page-vectors-*.f32 file named in vectors.parquet (which still holds
    them as a column for other readers); saved and read, they are that file's pages, not memory of
    the process; saving mapped vectors again into the same folder keeps their file, saving new ones
    removes it; a file that does not fit is one line."""
    import pyarrow.parquet as pq

    emb = embed_pages(build_crawl(SITE[:3], [], []), bundled_model(), Options())
    expected = emb.vectors.copy()
    saved = save_vectors(tmp_path / "vectors.parquet", emb)
    (page_file,) = tmp_path.glob("page-vectors-*.f32")
    assert saved.vector_file == page_file and page_file.stat().st_size == expected.size * 4
    assert isinstance(saved.vectors.base, np.memmap) and np.array_equal(saved.vectors, expected)
    back = read_vectors(tmp_path / "vectors.parquet")
    assert isinstance(back.vectors.base, np.memmap) and not back.vectors.flags.writeable
    assert np.array_equal(back.vectors, expected) and back.vector_file == page_file
    column = pq.read_table(tmp_path / "vectors.parquet")["vector"].to_pylist()
    assert np.array_equal(np.array(column, np.float32), expected)
    save_vectors(tmp_path / "vectors.parquet", back)
    assert list(tmp_path.glob("page-vectors-*.f32")) == [page_file]  # kept, not copied
    fresh = embed_pages(build_crawl(SITE[:3], [], []), bundled_model(), Options())
    save_vectors(tmp_path / "vectors.parquet", fresh)
    (new_file,) = tmp_path.glob("page-vectors-*.f32")
    assert new_file != page_file and np.array_equal(read_vectors(tmp_path / "vectors.parquet").vectors,
                                                    expected)
    with open(new_file, "r+b") as f:
        f.truncate(384 * 4)
    with pytest.raises(InputError, match="page vectors .* cannot be read .* run the embed stage again"):
        read_vectors(tmp_path / "vectors.parquet")


def test_chunk_vectors_go_to_one_file_that_later_stages_map(tmp_path):
    """With a cache, the chunks are written to one float32 file as they are read back and mapped from
    it; saving names that file in vectors.parquet and removes the files of earlier runs; a file that
    does not fit is one line."""
    model, out = bundled_model(), tmp_path / "out"
    in_memory = embed_pages(build_crawl(SITE, [], []), model, Options())
    first = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=out / "cache", chunks_dir=out)
    chunks = first.chunk_vectors
    assert isinstance(chunks.matrix, np.memmap) and chunks.path is not None and chunks.path.parent == out
    assert chunks.path.stat().st_size == sum(len(c) for c in in_memory.chunk_vectors) * 384 * 4
    assert all(np.array_equal(a, b) for a, b in zip(chunks, in_memory.chunk_vectors, strict=True))
    assert np.array_equal(first.vectors, in_memory.vectors)
    save_vectors(out / "vectors.parquet", first)
    assert [p.name for p in out.glob("chunk-vectors-*.f32")] == [chunks.path.name]  # kept, not copied
    again = from_cache(build_crawl(SITE, [], []), BUNDLED_ID, "", Options(), out / "cache", chunks_dir=out)
    assert again is not None and len(list(out.glob("chunk-vectors-*.f32"))) == 2
    save_vectors(out / "vectors.parquet", again)
    assert [p.name for p in out.glob("chunk-vectors-*.f32")] == [again.chunk_vectors.path.name]
    back = read_vectors(out / "vectors.parquet")
    assert all(np.array_equal(a, b) for a, b in zip(back.chunk_vectors, in_memory.chunk_vectors, strict=True))
    with open(back.chunk_vectors.path, "r+b") as f:
        f.truncate(384 * 4)
    with pytest.raises(InputError, match="cannot be read .* run the embed stage again"):
        read_vectors(out / "vectors.parquet")


def test_the_cache_is_read_a_batch_at_a_time_with_the_newest_part_first(tmp_path, monkeypatch):
    """Parts of several row groups, a page in two parts and twice in one: each page's vectors once,
    from the newest part that holds them, equal to embedding without a cache."""
    import pyarrow as pa

    from postprocess.stages import vector_cache

    monkeypatch.setattr(vector_cache, "BATCH_ROWS", 2)
    model, cache = bundled_model(), tmp_path / "cache"
    embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=cache)
    folder = cache / f"embeddings-{model_slug(BUNDLED_ID)}"
    (part,) = folder.glob("part-*.parquet")
    assert pq.ParquetFile(part).num_row_groups > 1
    table = pq.read_table(part)
    doubled = pa.concat_tables([table.slice(0, 2), table.slice(0, 1), table.slice(2)])
    pq.write_table(doubled, part, row_group_size=2)
    newer = table.slice(1, 1)  # one page again, its vector altered: the newest part must win
    altered = pa.table({"key": newer["key"], "vector": pa.array([[0.5] * 384], pa.list_(pa.float32())),
                        "chunks": newer["chunks"]})
    pq.write_table(altered, folder / "part-99999999T999999999999Z-1-0001.parquet")
    got = from_cache(build_crawl(SITE, [], []), BUNDLED_ID, "", Options(), cache)
    plain = embed_pages(build_crawl(SITE, [], []), model, Options())
    assert got is not None and got.urls == plain.urls
    altered_row = table["key"].to_pylist().index(newer["key"][0].as_py())
    for i in range(len(plain.urls)):
        assert np.array_equal(got.chunk_vectors[i], plain.chunk_vectors[i])
        expected = np.full(384, 0.5, np.float32) if i == altered_row else plain.vectors[i]
        assert np.array_equal(got.vectors[i], expected)


def test_a_cache_read_that_fails_leaves_no_chunk_file(tmp_path, monkeypatch):
    from postprocess.stages import chunk_vectors

    model, out = bundled_model(), tmp_path / "out"
    embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=out / "cache")

    def broken(self, block):  # noqa: ANN001, ANN202 - the disk fills up after the first block
        if self.rows:
            raise OSError("No space left on device")
        self.rows += len(block)
        return 0

    monkeypatch.setattr(chunk_vectors.RowWriter, "add", broken)
    monkeypatch.setattr("postprocess.stages.vector_cache.BATCH_ROWS", 2)
    with pytest.raises(OSError, match="No space"):
        from_cache(build_crawl(SITE, [], []), BUNDLED_ID, "", Options(), out / "cache", chunks_dir=out)
    assert list(out.glob("chunk-vectors-*")) == []  # neither a complete-looking file nor a .tmp


def test_vectors_of_the_layout_before_the_chunk_file_are_still_read(tmp_path):
    import pyarrow as pa

    from postprocess.stages.vector_cache import vector_column

    emb = embed_pages(build_crawl(SITE[:3], [], []), bundled_model(), Options())
    table = pa.table({"url": pa.array(emb.urls), "vector": vector_column(list(emb.vectors)),
                      "chunks": vector_column(list(emb.chunk_vectors))})
    pq.write_table(table.replace_schema_metadata({"model_id": BUNDLED_ID, "dimension": "384"}),
                   tmp_path / "vectors.parquet")
    back = read_vectors(tmp_path / "vectors.parquet")
    assert all(np.array_equal(a, b) for a, b in zip(back.chunk_vectors, emb.chunk_vectors, strict=True))


def test_pages_of_the_same_content_are_embedded_once_and_read_back_for_each(tmp_path):
    """Two URLs with the same title and text share a cache key: the cache gives its vectors to both
    (the run stopped with 'lost vectors it was just given' when a key was wanted twice), with or
    without the model, several times in one batch or across batches."""
    copies = [page(url(f"/coffee/espresso-copy-{i}/"), SITE[0]["title"], SITE[0]["text"]) for i in range(3)]
    crawl = build_crawl([*SITE, *copies], [], [])
    model, cache = bundled_model(), tmp_path / "cache"
    first = embed_pages(crawl, model, Options(), cache_dir=cache)
    again = from_cache(crawl, BUNDLED_ID, "", Options(), cache)
    assert again is not None
    original = first.urls.index(SITE[0]["url"])
    for got in (first, again):
        for i in [got.urls.index(c["url"]) for c in copies]:
            assert np.array_equal(got.vectors[i], got.vectors[original])
            assert np.array_equal(got.chunk_vectors[i], got.chunk_vectors[original])
    assert np.array_equal(again.vectors, first.vectors)


def _counting_encode(model, monkeypatch, fail_at: int | None = None) -> list[int]:
    """The texts of each call of the real model's ``encode``; the call numbered ``fail_at`` (from 1)
    is interrupted, as a killed run would be."""
    real, sizes = model.encode, []

    def encode(texts, *args, **kwargs):
        sizes.append(len(texts))
        if len(sizes) == fail_at:
            raise KeyboardInterrupt
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(model, "encode", encode)
    return sizes


def test_a_cold_run_embeds_and_appends_a_step_of_pages_at_a_time(tmp_path, monkeypatch):
    """Each ``EMBED_STEP_PAGES`` pages are encoded and appended to the cache as their own part: a run
    holds one step's texts and vectors, not the whole site's; the vectors are the same."""
    model = bundled_model()
    whole = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path / "whole")
    monkeypatch.setattr(embed, "EMBED_STEP_PAGES", 2)
    sizes = _counting_encode(model, monkeypatch)
    stepped = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path / "stepped")
    parts = sorted((tmp_path / "stepped" / f"embeddings-{model_slug(BUNDLED_ID)}").glob("part-*.parquet"))
    steps = -(-len(SITE) // 2)
    assert [pq.read_table(p).num_rows for p in parts] == [2] * (steps - 1) + [len(SITE) - 2 * (steps - 1)]
    assert len(sizes) == steps and sum(sizes) == stepped.stats["texts"] == whole.stats["texts"]
    assert stepped.urls == whole.urls and np.allclose(stepped.vectors, whole.vectors, atol=1e-6)
    assert stepped.stats["processes"] == 1  # the transformer's torch uses every core itself


def test_a_run_killed_while_embedding_keeps_the_steps_it_finished(tmp_path, monkeypatch):
    """Killed in its third step, a cold run leaves its first two steps in the cache: the next run
    embeds only the pages after them."""
    model = bundled_model()
    monkeypatch.setattr(embed, "EMBED_STEP_PAGES", 2)
    _counting_encode(model, monkeypatch, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    parts = list((tmp_path / f"embeddings-{model_slug(BUNDLED_ID)}").glob("part-*.parquet"))
    assert sorted(pq.read_table(p).num_rows for p in parts) == [2, 2]
    monkeypatch.setattr(model, "encode", type(model).encode.__get__(model))
    again = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path)
    assert again.stats["embedded_pages"] == len(SITE) - 4 and again.stats["cached_pages"] == 4


def test_pages_of_the_same_content_are_encoded_once(tmp_path, monkeypatch):
    """Copies of a page (same title and text: one cache key) cost one page's texts, not one each."""
    copies = [page(url(f"/coffee/espresso-copy-{i}/"), SITE[0]["title"], SITE[0]["text"]) for i in range(3)]
    model = bundled_model()
    alone = embed_pages(build_crawl(SITE, [], []), model, Options(), cache_dir=tmp_path / "alone")
    sizes = _counting_encode(model, monkeypatch)
    both = embed_pages(build_crawl([*SITE, *copies], [], []), model, Options(), cache_dir=tmp_path / "both")
    assert sum(sizes) == alone.stats["texts"] and both.stats["embedded_pages"] == len(SITE)
