"""``suggest()`` in memory with the real model: the API evaluation uses, near duplicates, caps."""

from __future__ import annotations

import dataclasses

import pytest
from crawlkit import ESPRESSO, GRINDER, POUR_OVER, SITE, SITE_LINKS, bundled_model, page, url

from postprocess.options import Options
from postprocess.pipeline import suggest
from postprocess.stages.embed import embed_pages
from postprocess.stages.load import build_crawl

pytestmark = pytest.mark.slow
LOW = Options(min_score=0.2, min_confidence=0.0)  # the ranking's mechanics, whatever the confidence


@pytest.fixture(scope="module")
def site():
    crawl = build_crawl(SITE, SITE_LINKS, [])
    return crawl, embed_pages(crawl, bundled_model(), LOW)


def test_suggest_ranks_per_source_and_respects_the_filters(site):
    crawl, emb = site
    result = suggest(crawl, LOW, bundled_model(), embeddings=emb)
    linked = {(lk.source_url, lk.target_url) for lk in crawl.links}
    assert result.rows and all((s.source_url, s.target_url) not in linked for s in result.rows)
    order = [(s.confidence, s.score) for s in result.rows]
    assert order == sorted(order, reverse=True)  # most confident first, then by score
    for source, group in result.by_source().items():
        assert [s.rank for s in group] == list(range(1, len(group) + 1))
        assert all(s.source_url == source != s.target_url for s in group)
    assert set(result.timings) == {"index", "rank", "anchors", "confidence"}  # embeddings were given


def test_hidden_link_comes_back_as_a_suggestion(site):
    crawl, emb = site
    hidden = dataclasses.replace(crawl, links=[lk for lk in crawl.links if lk.target_url != GRINDER])
    before = {(s.source_url, s.target_url) for s in suggest(crawl, LOW, embeddings=emb).rows}
    after = suggest(hidden, dataclasses.replace(LOW, per_source=10), embeddings=emb)
    assert (ESPRESSO, GRINDER) not in before
    assert (ESPRESSO, GRINDER) in {(s.source_url, s.target_url) for s in after.rows}


@pytest.mark.parametrize("per_target", [1])
def test_per_target_cap(site, per_target):
    crawl, emb = site
    result = suggest(crawl, dataclasses.replace(LOW, per_target=per_target), embeddings=emb)
    counts: dict[str, int] = {}
    for s in result.rows:
        counts[s.target_url] = counts.get(s.target_url, 0) + 1
    assert max(counts.values()) <= per_target
    assert result.rejected["over_cap"] > 0


def test_near_duplicates_go_to_cannibalisation_not_the_queue():
    copy = page(url("/coffee/espresso-copy/"), "How to pull a good espresso shot | Example Kitchen",
                SITE[0]["text"])
    crawl = build_crawl([*SITE, copy], SITE_LINKS, [])
    result = suggest(crawl, LOW, bundled_model())
    pair = tuple(sorted((ESPRESSO, copy["url"])))
    assert [(c.source_url, c.target_url) for c in result.cannibalisation] == [pair]
    assert result.cannibalisation[0].parts["similarity"] > 0.95
    assert not any({s.source_url, s.target_url} == set(pair) for s in result.rows)


def test_date_decay_lowers_old_sources():
    old = dict(SITE[1], published="2020-01-01")  # the pour-over page is an old dated post
    crawl = build_crawl([SITE[0], old, *SITE[2:]], SITE_LINKS, [])
    emb = embed_pages(crawl, bundled_model(), LOW)
    plain = {(s.source_url, s.target_url): s for s in suggest(crawl, LOW, embeddings=emb).rows}
    decayed = suggest(crawl, dataclasses.replace(LOW, date_decay_days=365), embeddings=emb)
    for s in decayed.rows:
        if s.source_url == POUR_OVER:
            assert s.parts["date_factor"] < 0.1 and s.score < plain[(s.source_url, s.target_url)].score
        else:
            assert s.parts["date_factor"] == 1.0


def test_rows_whose_paragraph_is_not_about_the_target_leave(site):
    crawl, emb = site
    kept = suggest(crawl, LOW, embeddings=emb)
    strict = suggest(crawl, dataclasses.replace(LOW, min_passage=0.99), embeddings=emb)
    assert kept.rows and all(s.parts["passage"] >= LOW.min_passage for s in kept.rows)
    assert strict.rows == [] and strict.rejected["passage_off_topic"] >= len(kept.rows)


def test_two_processes_make_the_queue_one_does(site, monkeypatch):
    """The TF-IDF index made in a second process while the first indexes names, the anchors chosen in
    chunks shared with a second process, the confidence model learned in another while the ranking
    runs (in one process then: three on two cores ran no faster): the queue, the near duplicates,
    the rejections and the model are those of one process."""
    from postprocess import background
    from postprocess.stages import candidates

    crawl, emb = site
    one = suggest(crawl, dataclasses.replace(LOW, workers=1), bundled_model(), embeddings=emb)
    forks: list[bool] = []
    real = background.Background.__init__

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        real(self, *args, **kwargs)
        forks.append(self.forked)

    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background, "SPLIT_MIN_SOURCES", 1)
    monkeypatch.setattr(background, "CHUNK", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    monkeypatch.setattr(candidates, "SPILL_PAIRS", 5)  # the pairs' parts on disk, in both processes
    two = suggest(crawl, dataclasses.replace(LOW, workers=2), bundled_model(), embeddings=emb)
    # the TF-IDF index, the confidence model, and the anchors if the learner is done by then (no
    # third process works on two cores); the finder's passes over pages need two chunks of 64 pages
    # to fork: test_postprocess_anchors checks them in two processes
    assert forks[:2] == [True, True] and all(forks)
    assert [dataclasses.asdict(s) for s in two.rows] == [dataclasses.asdict(s) for s in one.rows]
    assert [dataclasses.asdict(s) for s in two.cannibalisation] == [
        dataclasses.asdict(s) for s in one.cannibalisation]
    assert two.rejected == one.rejected
    assert two.confidence.to_json() == one.confidence.to_json()


def test_the_finders_last_steps_wait_for_the_tfidf_process_to_leave(site, tmp_path, monkeypatch):
    """The anchor finder's last steps (its names tabled, the links indexed: its largest transients)
    start once the process making the TF-IDF index has left, in ``suggest`` and in ``run``: the two
    never hold their memory side by side (100k synthetic pages: 1.26 GB together)."""
    from crawlkit import SITE, SITE_LINKS, write_crawl

    from postprocess import background, cli
    from postprocess.stages.anchors import AnchorFinder

    children_then: list[list[int]] = []
    real = AnchorFinder._pages_named

    def named(self):  # noqa: ANN001, ANN202 - records the children still there
        children_then.append(sorted(background._children))
        return real(self)

    forked: list[str] = []
    init = background.Background.__init__

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        init(self, *args, **kwargs)
        forked.append(self._name if self.forked else "")

    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    monkeypatch.setattr(AnchorFinder, "_pages_named", named)
    crawl, emb = site
    suggest(crawl, dataclasses.replace(LOW, workers=2), bundled_model(), embeddings=emb)
    directory = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS)
    assert cli.main(["run", "--crawl", str(directory), "--out", str(tmp_path / "out"), "--workers", "2"]) == 0
    assert forked.count("ls-lexical_neighbours") == 2 and children_then == [[], []]


def test_a_run_starts_its_tfidf_job_before_building_the_page_index(tmp_path, monkeypatch):
    """``run`` on two cores starts the ranking's TF-IDF job (it needs the pages alone) as the index
    stage begins, so that it works on the second core while this one builds the page index (one core,
    ~150 s at a million pages); the ranking uses that job, starts no other, and the queue is the one
    made on one core."""
    from crawlkit import SITE, SITE_LINKS, write_crawl

    from postprocess import background, cli
    from postprocess.stages import index

    directory = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS)
    assert cli.main(["run", "--crawl", str(directory), "--out", str(tmp_path / "one"), "--workers", "1"]) == 0
    forked: list[str] = []
    init = background.Background.__init__

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        init(self, *args, **kwargs)
        forked.append(self._name if self.forked else "")

    building: list[list[str]] = []
    real_build = index.build_index

    def build(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - records the forks made by then
        building.append(list(forked))
        return real_build(*args, **kwargs)

    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    monkeypatch.setattr(index, "build_index", build)
    assert cli.main(["run", "--crawl", str(directory), "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    assert building == [["ls-lexical_neighbours"]] and forked.count("ls-lexical_neighbours") == 1
    for name in ("suggestions.csv", "candidates.parquet", "anchored.parquet", "confidence.json"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name


def test_a_large_site_learns_its_confidence_here_before_the_ranking(site, monkeypatch):
    """Past ``LEARN_BESIDE_MAX_PAGES`` the model is learned in this process, first (a forked learner
    keeps the pages of the heap the ranking writes, a copy that grows with the site); the TF-IDF
    index, the ranking (its sources in chunks shared by two processes: no learner beside it now) and
    the anchors take the second core, and the queue, the near duplicates, the rejections and the
    model are the same."""
    from postprocess import background, pipeline

    crawl, emb = site
    beside = suggest(crawl, dataclasses.replace(LOW, workers=2), bundled_model(), embeddings=emb)
    forks: list[bool] = []
    steps: list[str] = []
    real_init, real_learn, real_pool = (background.Background.__init__, pipeline.learn_confidence,
                                        pipeline.candidate_pool)

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        real_init(self, *args, **kwargs)
        forks.append(self.forked)

    def learned(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        steps.append("learn")
        return real_learn(*args, **kwargs)

    def pooled(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        steps.append("rank")
        return real_pool(*args, **kwargs)

    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background, "SPLIT_MIN_SOURCES", 1)
    monkeypatch.setattr(background, "CHUNK", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    monkeypatch.setattr(pipeline, "learn_confidence", learned)
    monkeypatch.setattr(pipeline, "candidate_pool", pooled)
    monkeypatch.setattr(pipeline, "LEARN_BESIDE_MAX_PAGES", len(crawl.pages) - 1)
    here = suggest(crawl, dataclasses.replace(LOW, workers=2), bundled_model(), embeddings=emb)
    # the TF-IDF index, the confidence model (here; this site has too few links to rank folds: the
    # prior), the ranking, the anchors
    assert forks == [True, False, True, True]
    assert steps[0] == "learn" and steps[-1] == "rank"  # its folds rank too; the site's ranking comes last
    assert [dataclasses.asdict(s) for s in here.rows] == [dataclasses.asdict(s) for s in beside.rows]
    assert [dataclasses.asdict(s) for s in here.cannibalisation] == [
        dataclasses.asdict(s) for s in beside.cannibalisation]
    assert here.rejected == beside.rejected
    assert here.confidence.to_json() == beside.confidence.to_json()


#: Forty pages, each a thing a kitchen site writes about, whose texts link five others by name.
THINGS = ["espresso", "grinder", "kettle", "teapot", "whisk", "skillet", "colander", "ladle", "mandoline",
          "spatula", "blender", "toaster", "steamer", "wok", "griddle", "peeler", "rolling pin", "sieve",
          "thermometer", "scale", "mortar", "juicer", "kneader", "cleaver", "zester", "tongs", "strainer",
          "saucepan", "casserole", "baster", "dehydrator", "smoker", "roaster", "slicer", "mixer",
          "percolator", "chemex", "aeropress", "moka pot", "french press"]


def _kitchen() -> list[dict]:
    """Pages and links of ``THINGS``: page i links i+1, i+2, i+3, i+5 and i+8 by name in its text and
    names i+13 without a link."""
    from crawlkit import blocks_of, link

    pages, links = [], []
    for i, thing in enumerate(THINGS):
        linked = [(i + k) % len(THINGS) for k in (1, 2, 3, 5, 8)]
        text = (f"Our {thing} guide covers choosing and caring for a {thing}.\n"
                + "\n".join(f"A {thing} pairs well with the {THINGS[j]} for daily cooking." for j in linked)
                + f"\nSome cooks keep a {THINGS[(i + 13) % len(THINGS)]} beside it.")
        pages.append(page(url(f"/{thing.replace(' ', '-')}/"), f"The {thing} guide | Example Kitchen", text,
                          blocks=blocks_of(text, [(THINGS[j], url(f"/{THINGS[j].replace(' ', '-')}/"))
                                                  for j in linked])))
        links += [link(pages[-1]["url"], url(f"/{THINGS[j].replace(' ', '-')}/"), THINGS[j]) for j in linked]
    return [pages, links]


def test_a_large_sites_folds_rank_and_anchor_their_sample_in_two_processes(tmp_path, monkeypatch):
    """A model learned in this process (a large site) ranks and anchors each fold's sample in chunks
    shared with a second process: the same model and queue as one process makes."""
    from crawlkit import write_crawl

    from postprocess import background, pipeline
    from postprocess.stages.load import load_crawl

    crawl = load_crawl(write_crawl(tmp_path / "crawl", *_kitchen()))
    emb = embed_pages(crawl, bundled_model(), LOW)
    monkeypatch.setattr(pipeline, "LEARN_BESIDE_MAX_PAGES", len(crawl.pages) - 1)
    one = suggest(crawl, dataclasses.replace(LOW, workers=1), bundled_model(), embeddings=emb)
    forks: list[tuple[bool, bool]] = []  # (in the learning, forked)
    learning = [False]
    real_init, real_learn = background.Background.__init__, pipeline.learn_confidence

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        real_init(self, *args, **kwargs)
        forks.append((learning[0], self.forked))

    def learned(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        learning[0] = True
        try:
            return real_learn(*args, **kwargs)
        finally:
            learning[0] = False

    monkeypatch.setattr(background, "SPLIT_MIN_SOURCES", 1)
    monkeypatch.setattr(background, "CHUNK", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    monkeypatch.setattr(pipeline, "learn_confidence", learned)
    two = suggest(crawl, dataclasses.replace(LOW, workers=2), bundled_model(), embeddings=emb)
    assert one.confidence.source == "site"
    # each of the three folds: its ranking, then its anchoring, both in two processes
    assert [forked for inside, forked in forks if inside] == [True] * 6
    assert two.confidence.to_json() == one.confidence.to_json()
    assert [dataclasses.asdict(s) for s in two.rows] == [dataclasses.asdict(s) for s in one.rows]
