"""The fast encoder (--encoder static): distilled once from the real bundled model, reused, kept apart."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from crawlkit import SITE, bundled_model, write_site

from postprocess.errors import PREFIX
from postprocess.options import Options
from postprocess.stages import embed, static_encoder, static_vectors
from postprocess.stages.embed import BUNDLED_ID, bundled_model_dir, cache_key, embed_pages, from_cache
from postprocess.stages.load import load_crawl
from postprocess.stages.static_encoder import load_static, static_dir, word_chunks
from postprocess.stages.static_vectors import WordTokens

REPO = Path(__file__).resolve().parents[1]
STATIC = Options(encoder="static")
LOW = ["--min-score", "0.2"]


@pytest.fixture(scope="session")
def static_cache(tmp_path_factory) -> Path:
    """A cache folder holding the static model distilled from the bundled model (once per session)."""
    cache = tmp_path_factory.mktemp("static-cache")
    load_static(str(bundled_model_dir()), BUNDLED_ID, "", cache)
    return cache


def _no_distil(source: str, folder: Path) -> None:
    raise AssertionError(f"distilled again into {folder}")


def postprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "postprocess", *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=600)


@pytest.mark.parametrize(
    ("words", "size", "overlap", "max_chunks", "expected"),
    [(0, 4, 0, 8, []),
     (3, 4, 0, 8, [[0, 1, 2]]),
     (8, 4, 0, 8, [[0, 1, 2, 3], [4, 5, 6, 7]]),
     (8, 4, 1, 8, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7]]),
     (8, 4, 3, 8, [[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7]]),  # overlap capped at half a chunk
     (20, 4, 0, 2, [[0, 1, 2, 3], [4, 5, 6, 7]])],  # only the first max_chunks windows
)
def test_word_chunks(words, size, overlap, max_chunks, expected):
    text = "  ".join(f"w{i}" for i in range(words))
    assert word_chunks(text, size, overlap, max_chunks) == [" ".join(f"w{i}" for i in c) for c in expected]


@pytest.mark.slow
def test_distilled_once_into_its_folder_then_reused(static_cache, monkeypatch):
    folder = static_dir(static_cache, BUNDLED_ID)
    assert folder.name == "static-sentence-transformers-all-minilm-l6-v2"
    assert (folder / "model.safetensors").is_file()
    assert [p.name for p in static_cache.iterdir()] == [folder.name]  # no temporary folder left
    written = (folder / "model.safetensors").stat().st_mtime_ns
    monkeypatch.setattr(static_encoder, "distil", _no_distil)
    again = load_static(str(bundled_model_dir()), BUNDLED_ID, "", static_cache)
    assert again.model_id == "static-sentence-transformers-all-minilm-l6-v2"
    assert (folder / "model.safetensors").stat().st_mtime_ns == written


@pytest.mark.slow
def test_vectors_are_unit_length_and_related_texts_are_closer(static_cache):
    model = load_static(str(bundled_model_dir()), BUNDLED_ID, "", static_cache)
    texts = ["Roasting coffee beans at home", "Brewing espresso from freshly roasted coffee",
             "Adjusting the gears of a road bicycle", "word " * 5000]
    vectors = model.encode(texts)
    assert vectors.shape == (4, model.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert model.encode([]).shape == (0, model.dimension)


@pytest.mark.slow
def test_cache_keeps_transformer_and_static_vectors_apart(static_cache, tmp_path):
    crawl = load_crawl(write_site(tmp_path / "crawl"))
    cache = tmp_path / "cache"
    shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(cache, BUNDLED_ID))
    transformer = embed_pages(crawl, bundled_model(), Options(), cache)
    static = embed_pages(crawl, bundled_model(), STATIC, cache)
    assert static.model_id == "static-sentence-transformers-all-minilm-l6-v2"
    assert transformer.vectors.shape[1] == 384 and static.vectors.shape[1] == 256
    assert static.stats["embedded_pages"] == len(static.urls)  # none taken from the transformer's
    folders = sorted(p.name for p in cache.glob("embeddings-*") if any(p.glob("part-*.parquet")))
    assert folders == ["embeddings-sentence-transformers-all-minilm-l6-v2",
                       "embeddings-static-sentence-transformers-all-minilm-l6-v2"]
    page = crawl.pages[0]
    assert cache_key(BUNDLED_ID, "", Options(), page) != cache_key(BUNDLED_ID, "", STATIC, page)
    for options, expected in ((Options(), transformer), (STATIC, static)):
        cached = from_cache(crawl, BUNDLED_ID, "", options, cache)
        assert cached is not None and cached.model_id == expected.model_id
        assert np.array_equal(cached.vectors, expected.vectors)


@pytest.mark.slow
def test_run_with_the_static_encoder_end_to_end(static_cache, tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(out / "cache", BUNDLED_ID))
    result = postprocess("--crawl", str(crawl), "--out", str(out), "--encoder", "static", *LOW)
    assert result.returncode == 0, result.stderr
    vectors = pq.read_table(out / "vectors.parquet")
    assert vectors.schema.metadata[b"model_id"] == b"static-sentence-transformers-all-minilm-l6-v2"
    assert vectors.num_rows == len(SITE)
    assert list((out / "cache" / "embeddings-static-sentence-transformers-all-minilm-l6-v2").glob("part-*"))
    assert (out / "suggestions.csv").read_text().count("\n") > 1


@pytest.mark.slow
def test_static_run_never_loads_the_transformer(static_cache, tmp_path):
    """With the static model in the cache, the transformer's weights are not needed at all."""
    model = tmp_path / "mini"
    shutil.copytree(bundled_model_dir(), model, ignore=shutil.ignore_patterns("model.safetensors"))
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(out / "cache", "mini"))
    result = postprocess("--crawl", str(crawl), "--out", str(out), "--model", str(model),
                         "--encoder", "static", *LOW)
    assert result.returncode == 0, result.stderr
    assert pq.read_table(out / "vectors.parquet").schema.metadata[b"model_id"] == b"static-mini"
    # The transformer stage still needs them: the same folder fails there with one line.
    broken = postprocess("--crawl", str(crawl), "--out", str(tmp_path / "out2"), "--model", str(model))
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1, broken.stderr


def test_unknown_encoder_is_one_line(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    result = postprocess("--crawl", str(crawl), "--out", str(out), "--encoder", "fast")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX) and "--encoder" in lines[0], result.stderr
    assert not (out / "suggestions.csv").exists()


def test_help_names_the_encoder_option():
    result = postprocess("run", "--help")
    assert result.returncode == 0, result.stderr
    assert "--encoder" in result.stdout and "static" in result.stdout


def _run_session(static_cache, tmp_path, workers):  # noqa: ANN001, ANN202
    """A ``run`` session (static encoder, ``workers`` processes) on the written site, its cache warm,
    and its output folder: for tests that run the stages one by one."""
    from postprocess import cli
    from postprocess.options import options_from

    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(out / "cache", BUNDLED_ID))
    args = cli.build_parser("run").parse_args(["run", "--crawl", str(crawl), "--out", str(out),
                                               "--encoder", "static", "--workers", workers, *LOW])
    return cli.Session(args=args, options=options_from(args), out=out), out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_anchoring_process_lets_the_evidence_go_once_the_learning_child_has_it(static_cache, tmp_path):
    """With the confidence model learned in a forked child, the process that goes on to anchor frees
    the lexical evidence (TF-IDF, names) once it has ranked: the child holds its own copy."""
    import gc

    from postprocess import cli
    from postprocess.stages.scoring import Evidence

    session, out = _run_session(static_cache, tmp_path, "2")
    stages = {stage.__name__: stage for stage in cli.RUNNERS["run"]}
    for name in ("stage_embed", "stage_index", "stage_rank"):
        stages[name](session)
    gc.collect()
    assert session.learning is not None and session.learning.forked
    assert session.evidence is None and not [o for o in gc.get_objects() if isinstance(o, Evidence)]
    stages["stage_anchors"](session)
    assert session.confidence is not None and (out / "confidence.json").is_file()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_anchored_rows_are_read_back_once_the_finder_and_the_pool_are_let_go(static_cache, tmp_path,
                                                                                 monkeypatch):
    """With the confidence learned by a job (two processes), the anchoring's rows are read back from
    where it left them only after the finder (the names it looked up, ~4 KB a page), the candidate
    pool and the learning job are let go: the rows take the memory those held."""
    import gc

    from postprocess import cli
    from postprocess.stages import anchors
    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.suggestions import Pool

    alive: list[list[str]] = []
    read = anchors.ChosenAnchors.pairs

    def pairs(chosen):  # noqa: ANN001, ANN202 - ChosenAnchors.pairs, what is alive noted first
        gc.collect()
        alive.append([type(o).__name__ for o in gc.get_objects() if isinstance(o, AnchorFinder | Pool)])
        return read(chosen)

    monkeypatch.setattr(anchors.ChosenAnchors, "pairs", pairs)
    session, out = _run_session(static_cache, tmp_path, "2")
    stages = {stage.__name__: stage for stage in cli.RUNNERS["run"]}
    for name in ("stage_embed", "stage_index", "stage_rank"):
        stages[name](session)
    assert session.learning is not None and session.finder is not None
    stages["stage_anchors"](session)
    assert alive == [[]]
    assert session.confidence is not None and session.rows and (out / "anchored.parquet").is_file()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_queue_and_the_report_are_made_without_the_anchor_finder(static_cache, tmp_path, workers):
    """Once anchored and learned, the finder (the names it looked up, ~4 KB a page), the evidence
    and the learning job that held them are let go before the queue and the report are made."""
    import gc

    from postprocess import cli
    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.scoring import Evidence

    session, out = _run_session(static_cache, tmp_path, workers)
    for stage in cli.RUNNERS["run"][:-1]:
        stage(session)
    gc.collect()
    assert session.finder is None and session.evidence is None and session.learning is None
    assert not [o for o in gc.get_objects() if isinstance(o, AnchorFinder | Evidence)]
    cli.RUNNERS["run"][-1](session)  # the report
    assert (out / "report.html").is_file() and session.rows


@pytest.mark.slow
def test_evaluate_with_the_static_encoder_embeds_paragraphs_as_it_embeds_pages(static_cache, tmp_path):
    """The passage check compares a paragraph's vector with its target page's: with ``--encoder
    static`` both come from the static model (the transformer's paragraph vectors are another size)."""
    import json

    from test_evaluate import linked_site

    crawl, out = linked_site(tmp_path / "crawl"), tmp_path / "out"
    shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(out / "cache", BUNDLED_ID))
    done = subprocess.run([sys.executable, "-m", "postprocess", "evaluate", "--crawl", str(crawl),
                           "--out", str(out), "--hide", "0.5", "--seed", "1", "--encoder", "static",
                           "--methods", "default"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [default] = json.loads((out / "evaluation.json").read_text())["methods"]
    assert default["method"] == "default" and default["recall"]["5"] > 0


@pytest.mark.slow
def test_the_static_encoders_steps_are_shared_with_a_second_process(static_cache, tmp_path, monkeypatch):
    """The static encoder works on one core: with more than one step of pages a forked second process
    takes steps too, each process appending its own to the cache; the vectors are one process's."""
    crawl = load_crawl(write_site(tmp_path / "crawl"))
    for name in ("one", "two", "alone"):
        shutil.copytree(static_dir(static_cache, BUNDLED_ID), static_dir(tmp_path / name, BUNDLED_ID))
    one = embed_pages(crawl, bundled_model(), Options(encoder="static", workers=2), tmp_path / "one")
    monkeypatch.setattr(embed, "EMBED_STEP_PAGES", 2)
    two = embed_pages(crawl, bundled_model(), Options(encoder="static", workers=2), tmp_path / "two")
    assert one.stats["processes"] == 1 and two.stats["processes"] == 2
    assert two.urls == one.urls and np.array_equal(two.vectors, one.vectors)
    assert all(np.array_equal(two.chunk_vectors[i], one.chunk_vectors[i]) for i in range(len(one.urls)))
    parts = list((tmp_path / "two").glob("embeddings-*/part-*.parquet"))
    assert len(parts) == -(-len(one.urls) // 2) and two.stats["texts"] == one.stats["texts"]
    alone = embed_pages(crawl, bundled_model(), Options(encoder="static", workers=1), tmp_path / "alone")
    assert alone.stats["processes"] == 1 and np.array_equal(alone.vectors, one.vectors)


@pytest.mark.slow
def test_a_batchs_words_tokenised_once_give_model2vecs_vectors_bit_for_bit(static_cache):
    """The static encoder tokenises each distinct word of a batch once and averages its rows itself:
    the same float16 vectors as model2vec's own encode, bit for bit, for chunks of every length, and
    for texts it must tokenise whole (a control character the normaliser deletes between two words, a
    tab, a run of punctuation longer than the tokenizer's limit, an added token inside a word)."""
    embedder = load_static(str(bundled_model_dir()), BUNDLED_ID, "", static_cache)
    model = embedder.model
    assert WordTokens.fits(model)
    texts = [chunk for page in SITE for chunk in word_chunks(page["text"], 256, 32, 8)]
    texts += [" ".join(texts)[:n] for n in range(1, 400, 7)]  # cut mid-word, many token counts
    texts += ["", "naïve café Ünïcode", "x\x1cy z", "tab\tseparated words", "word " * 600,
              "!" * 600 + "?" * 100,  # one word past the tokenizer's limit, its tokens not all alike
              "[UNK] foo[UNK]bar", "中文 text", "a" * 130 + " b", "가" * 60, "ﬁ ＡＢＣ ligature",
              "  leading and trailing  "]
    expected = model.encode(texts, max_length=None, use_multiprocessing=False)
    assert expected.dtype == np.float16
    mine = WordTokens(model).vectors(texts)
    assert mine.dtype == expected.dtype and mine.tobytes() == expected.tobytes()
    assert np.array_equal(embedder.encode(texts), _unit(expected))

    tokenised: list[int] = []
    tokenize = model.tokenize

    def counting(sentences):  # noqa: ANN001, ANN202 - model2vec's own call, counted
        tokenised.append(len(sentences))
        return tokenize(sentences)

    model.tokenize = counting
    try:
        words = WordTokens(model)
        words.vectors(["espresso grinder burr"] * 40 + ["burr grinder"] * 10)
        words.vectors(["grinder burr", "espresso"])
        words.vectors(["a conical burr grinder"])
    finally:
        del model.tokenize
    assert tokenised == [3, 2]  # the distinct words, once each, when first met


@pytest.mark.slow
def test_the_known_words_let_go_past_their_limit_change_no_vector(static_cache, monkeypatch):
    """Past ``KNOWN_WORDS`` the words known are let go and the batch's learnt again: the vectors of
    texts met after that are still model2vec's."""
    model = load_static(str(bundled_model_dir()), BUNDLED_ID, "", static_cache).model
    monkeypatch.setattr(static_vectors, "KNOWN_WORDS", 6)
    texts = [chunk for page in SITE for chunk in word_chunks(page["text"], 8, 0, 50)][:40]
    words = WordTokens(model)
    for start in range(0, len(texts), 4):
        batch = texts[start:start + 4]
        expected = model.encode(batch, max_length=None, use_multiprocessing=False)
        assert words.vectors(batch).tobytes() == expected.tobytes()
    assert len({w for text in texts for w in text.split()}) > 32  # more than a batch holds
    assert len(words._number) <= 32  # the last batch's words, the others let go


def _unit(vectors: np.ndarray) -> np.ndarray:
    """``StaticEmbedder.encode``'s step after model2vec's: float32 rows made unit length."""
    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
