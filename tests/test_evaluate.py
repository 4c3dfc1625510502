"""Hidden-link evaluation: the protocol, the metrics and the baselines."""

from __future__ import annotations

import math

import pytest

from postprocess.evaluation.evaluate import (
    Ranked,
    anchor_agreement,
    hide_links,
    jaccard,
    linked_pairs,
    mean_reciprocal_rank,
    overlap,
    recall_at_k,
    suggest_threshold,
)
from postprocess.stages.load import Link

PAGES = {f"http://s/{c}" for c in "abcdefghij"}


def link(source: str, target: str, anchor: str = "x", position: str = "content") -> Link:
    return Link(source_url=f"http://s/{source}", target_url=f"http://s/{target}", anchor_text=anchor,
                position=position)


def many_links() -> list[Link]:
    letters = "abcdefghij"
    out = [link(s, t, f"{s} to {t}") for s in letters for t in letters if s != t]
    out += [link("a", "b", "again"), link("a", "a", "self"), link("a", "zz", "unknown page")]
    out += [link(s, "a", "home", "nav") for s in letters]
    return out


def test_linked_pairs_keeps_content_links_between_known_pages_without_self_links() -> None:
    pairs = linked_pairs(many_links(), PAGES)
    assert len(pairs) == 90
    assert pairs[("http://s/a", "http://s/b")] == ["a to b", "again"]
    assert ("http://s/a", "http://s/a") not in pairs
    assert all(t != "http://s/zz" for _, t in pairs)


def test_nav_links_are_never_hidden() -> None:
    links = [link("a", "b", position="nav"), link("b", "c", position="footer"), link("c", "d")]
    _, hidden = hide_links(links, PAGES, 0.99, seed=1)
    assert list(hidden) == [("http://s/c", "http://s/d")]


def test_hiding_is_seeded_and_reproducible() -> None:
    links = many_links()
    first = hide_links(links, PAGES, 0.2, seed=7)[1]
    again = hide_links(list(reversed(links)), PAGES, 0.2, seed=7)[1]
    other = hide_links(links, PAGES, 0.2, seed=8)[1]
    assert first == again
    assert set(first) != set(other)
    assert len(first) == 18  # 20% of 90 pairs


def test_every_link_of_a_hidden_pair_is_removed_whatever_its_position() -> None:
    links = many_links() + [link("c", "a", "a in the footer", "footer")]
    visible, hidden = hide_links(links, PAGES, 0.5, seed=3)
    seen = {(x.source_url, x.target_url) for x in visible}
    assert hidden and not seen & set(hidden)
    assert len(visible) == len(links) - sum(1 for x in links if (x.source_url, x.target_url) in hidden)


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5])
def test_hide_fraction_must_be_a_proper_share(fraction: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        hide_links(many_links(), PAGES, fraction)


RANKINGS = {
    "s1": [Ranked("t1", 0.9, "alpha beta"), Ranked("t2", 0.8, "gamma"), Ranked("t3", 0.7, "delta")],
    "s2": [Ranked("t4", 0.6, "x"), Ranked("t5", 0.5, "y")],
}


@pytest.mark.parametrize(
    ("hidden", "k", "expected"),
    [
        ([("s1", "t1")], 1, 1.0),
        ([("s1", "t2")], 1, 0.0),
        ([("s1", "t2")], 2, 1.0),
        ([("s1", "t3"), ("s2", "t5")], 2, 0.5),
        ([("s1", "t3"), ("s2", "t5"), ("s2", "t9"), ("s3", "t1")], 5, 0.5),
        ([], 5, 0.0),
    ],
)
def test_recall_at_k(hidden: list[tuple[str, str]], k: int, expected: float) -> None:
    assert recall_at_k(RANKINGS, hidden, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("hidden", "depth", "expected"),
    [
        ([("s1", "t1")], 10, 1.0),
        ([("s1", "t3")], 10, 1 / 3),
        ([("s1", "t3")], 2, 0.0),
        ([("s1", "t2"), ("s2", "t9")], 10, 0.25),
        ([], 10, 0.0),
    ],
)
def test_mean_reciprocal_rank(hidden: list[tuple[str, str]], depth: int, expected: float) -> None:
    assert mean_reciprocal_rank(RANKINGS, hidden, depth) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "j", "o"),
    [
        ("QuerySet API reference", "queryset api reference", 1.0, 1.0),
        ("count()", "count", 1.0, 1.0),
        ("the QuerySet API", "QuerySet API reference", 0.5, 2 / 3),
        ("forms", "Working with forms", 1 / 3, 1.0),
        ("forms", "models", 0.0, 0.0),
        ("", "models", 0.0, 0.0),
        ("--", "--", 0.0, 0.0),
    ],
)
def test_anchor_similarity(a: str, b: str, j: float, o: float) -> None:
    assert jaccard(a, b) == pytest.approx(j)
    assert overlap(a, b) == pytest.approx(o)


def test_anchor_agreement_judges_found_pairs_only_and_any_editor_anchor_counts() -> None:
    hidden = {
        ("s1", "t1"): ["Alpha Beta"],  # found at 1, agrees
        ("s1", "t3"): ["epsilon", "delta guide"],  # found at 3, second anchor agrees (J = 0.5)
        ("s2", "t5"): ["zzz"],  # found at 2, disagrees
        ("s2", "t9"): ["x"],  # not found: not judged
    }
    share, judged = anchor_agreement(RANKINGS, hidden, k=5)
    assert judged == 3
    assert share == pytest.approx(2 / 3)
    share_k1, judged_k1 = anchor_agreement(RANKINGS, hidden, k=1)
    assert (share_k1, judged_k1) == (1.0, 1)


def test_suggested_threshold_separates_hidden_links_from_the_rest() -> None:
    rankings = {
        "s1": [Ranked("h1", 0.9), Ranked("n1", 0.5), Ranked("n2", 0.4)],
        "s2": [Ranked("h2", 0.8), Ranked("h3", 0.7), Ranked("n3", 0.3)],
    }
    hidden = [("s1", "h1"), ("s2", "h2"), ("s2", "h3")]
    cut = suggest_threshold(rankings, hidden)
    assert cut["f1_cut"] == 0.7
    assert cut["f1"] == 1.0
    assert cut["keep_90"] == 0.7
    assert cut["found"] == 3


def test_suggested_threshold_without_found_links_is_not_a_number() -> None:
    cut = suggest_threshold({"s": [Ranked("n", 0.5)]}, [("s", "h")])
    assert math.isnan(cut["f1_cut"]) and cut["found"] == 0


def test_hidden_pairs_can_be_limited_to_pages_that_may_receive_links() -> None:
    allowed = {"http://s/b", "http://s/c"}
    _, hidden = hide_links(many_links(), PAGES, 0.5, seed=0, targets=allowed)
    assert hidden and {t for _, t in hidden} <= allowed
    assert len(hidden) == 9  # half of the 18 pairs into b or c


# --------------------------------------------------------------------------- baselines and CLI, real model

def site_crawl(tmp_path):  # noqa: ANN001, ANN201 - Path -> Crawl
    from postprocess.stages.load import load_crawl
    from tests.crawlkit import write_site

    return load_crawl(write_site(tmp_path / "crawl"))


@pytest.mark.slow
def test_plain_baseline_ranks_the_same_topic_first_and_skips_self_and_linked_pairs(tmp_path) -> None:  # noqa: ANN001
    from postprocess.evaluation.baselines import plain_rankings
    from tests.crawlkit import ESPRESSO, GRINDER, POUR_OVER, ROSES, bundled_model

    crawl = site_crawl(tmp_path)
    rankings = plain_rankings(crawl.pages, crawl.links, bundled_model(), depth=3)
    espresso = rankings[ESPRESSO]
    assert [r.target_url for r in espresso][:1] == [POUR_OVER]  # GRINDER is already linked
    assert ESPRESSO not in {r.target_url for r in espresso}
    assert GRINDER not in {r.target_url for r in espresso}
    assert espresso[0].anchor == "Pour-over coffee brewing guide | Example Kitchen"  # the target's title
    assert [r.score for r in espresso] == sorted((r.score for r in espresso), reverse=True)
    limited = plain_rankings(crawl.pages, crawl.links, bundled_model(), depth=3, targets={ROSES})
    assert {r.target_url for rows in limited.values() for r in rows} == {ROSES}


def test_tfidf_baseline_ranks_pages_sharing_words(tmp_path) -> None:  # noqa: ANN001
    from postprocess.evaluation.baselines import tfidf_rankings
    from tests.crawlkit import COMPOST, ROSES, TOMATOES

    crawl = site_crawl(tmp_path)
    rankings = tfidf_rankings(crawl.pages, crawl.links, depth=2)
    assert {r.target_url for r in rankings[ROSES]} == {COMPOST, TOMATOES}
    assert TOMATOES not in {r.target_url for r in rankings[COMPOST]}  # already linked
    assert all(len(rows) <= 2 for rows in rankings.values())


def linked_site(directory):  # noqa: ANN001, ANN201 - Path -> Path
    """The crawlkit site with in-content links inside each topic (anchor: a phrase of the source)."""
    from tests.crawlkit import (
        CHAIN,
        COMPOST,
        ESPRESSO,
        GRINDER,
        POUR_OVER,
        ROSES,
        SITE,
        TOMATOES,
        TYRES,
        link,
        write_crawl,
    )

    links = [
        link(ESPRESSO, GRINDER, "burr grinder"), link(ESPRESSO, POUR_OVER, "coffee"),
        link(POUR_OVER, GRINDER, "burr grinder"), link(POUR_OVER, ESPRESSO, "espresso"),
        link(GRINDER, ESPRESSO, "espresso shot"), link(GRINDER, POUR_OVER, "pour-over"),
        link(TOMATOES, COMPOST, "compost"), link(ROSES, COMPOST, "compost"),
        link(COMPOST, TOMATOES, "tomatoes"), link(COMPOST, ROSES, "roses"),
        link(CHAIN, TYRES, "bicycle"), link(TYRES, CHAIN, "bicycle"),
    ]
    return write_crawl(directory, SITE, links)


@pytest.mark.slow
def test_evaluate_command_prints_the_table_and_writes_evaluation_json(tmp_path) -> None:  # noqa: ANN001
    import json
    import subprocess
    import sys

    crawl = linked_site(tmp_path / "crawl")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "postprocess", "evaluate", "--crawl", str(crawl), "--out", str(out),
         "--hide", "0.5", "--seed", "1", "--k", "1", "3"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "6 of 12 in-content linked pairs hidden" in done.stdout
    for method in ("default", "queue", "plain", "tfidf"):
        assert method in done.stdout
    payload = json.loads((out / "evaluation.json").read_text())
    assert payload["hidden_pairs"] == 6 and payload["k"] == [1, 3]
    assert [m["method"] for m in payload["methods"]] == ["default", "queue", "plain", "tfidf"]
    assert payload["confidence"]["model"] in ("site", "prior")
    for m in payload["methods"]:
        assert 0 <= m["recall"]["1"] <= m["recall"]["3"] <= 1
    assert not list(out.glob("*.tmp*"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hide", "1.5"], "--hide must be between 0 and 1"),
        (["--k", "0"], "--k values must be positive"),
        (["--methods", "magic"], "unknown method 'magic'"),
    ],
)
def test_evaluate_command_rejects_bad_options_in_one_line(tmp_path, capsys, args, message) -> None:  # noqa: ANN001
    from postprocess.cli import main

    crawl = linked_site(tmp_path / "crawl")
    status = main(["evaluate", "--crawl", str(crawl), "--out", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert message in err and "\n" not in err
    assert not (tmp_path / "out" / "evaluation.json").exists()


@pytest.mark.slow
def test_evaluate_command_on_a_crawl_without_content_links(tmp_path, capsys) -> None:  # noqa: ANN001
    from postprocess.cli import main
    from tests.crawlkit import SITE, link, write_crawl

    crawl = write_crawl(tmp_path / "crawl", SITE, [link(SITE[0]["url"], SITE[1]["url"], "x", "nav")])
    status = main(["evaluate", "--crawl", str(crawl), "--out", str(tmp_path / "out"), "--methods", "tfidf"])
    assert status == 2
    assert "no in-content links" in capsys.readouterr().err


def test_threshold_curve_counts_only_suggestions_above_each_cut() -> None:
    from postprocess.evaluation.evaluate import threshold_curve

    hidden = [("s1", "t1"), ("s1", "t3"), ("s2", "t5")]
    curve = threshold_curve(RANKINGS, hidden, [0.0, 0.65, 0.95], k=5)
    assert [c["recall"] for c in curve] == [1.0, pytest.approx(2 / 3, abs=1e-4), 0.0]
    assert [c["kept"] for c in curve] == [1.0, 0.6, 0.0]
