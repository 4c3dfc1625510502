"""The review app on a real uvicorn server on 127.0.0.1: states, filters, export, CSRF, token, Chromium.

The output folder is written by the project's own writer (``report.write_suggestions``) from
the crawlkit site, with suggestions whose sentences are the pages' own; decisions go to a
fresh SQLite file per test.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlencode, urlsplit
from urllib.request import HTTPErrorProcessor, Request, build_opener

import pyarrow as pa
import pytest
from crawlkit import COMPOST, ESPRESSO, GRINDER, POUR_OVER, ROSES, TOMATOES, traced_peak, write_site

from linkspider.settings import LINKSPIDER_CHROMIUM_PATH
from postprocess.apps import report
from postprocess.apps.review.anchors import find_anchor
from postprocess.apps.review.app import create_app
from postprocess.apps.review.listing import Filters, count_states, review_rows, row_id, screen
from postprocess.apps.review.queue import load_queue
from postprocess.apps.review.security import CSRF_COOKIE, TOKEN_ENV
from postprocess.apps.review.server import serving
from postprocess.decisions.store import DecisionStore, default_path
from postprocess.errors import PREFIX
from postprocess.stages import openings
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Block, Page, load_crawl
from postprocess.stages.openings import opening_column, opening_words

REPO = Path(__file__).resolve().parents[1]
TOKEN = "a-test-token-of-32-characters-xx"

GRINDER_SENTENCE = ("A burr grinder gives the even particle size that espresso needs, because a blade "
                    "grinder leaves dust and boulders that extract unevenly.")
DOSE_SENTENCE = "Dose eighteen grams of coffee into the portafilter basket, level it and tamp firmly."
FINES_SENTENCE = ("Even grounds from a burr grinder matter here too, since fines clog the filter and slow "
                  "the draw down.")
ROSES_SENTENCE = "Spread it around tomatoes, roses and vegetables as a mulch or dig it into new beds."
MULCH_SENTENCE = "After pruning, feed the roses and spread a thick mulch of compost around them."


def suggestion(source: str, target: str, confidence: float, anchor: str, context: str,
               anchor_type: str = "text") -> Suggestion:
    return Suggestion(source, target, confidence, {"similarity": confidence}, 1, anchor, anchor_type, context,
                      "title", "", confidence)


ROWS = [
    suggestion(ESPRESSO, GRINDER, 0.9, "burr grinder", GRINDER_SENTENCE),
    suggestion(ESPRESSO, POUR_OVER, 0.6, "grams of coffee", DOSE_SENTENCE),
    suggestion(ESPRESSO, TOMATOES, 0.2, "Growing tomatoes", "", "title"),
    suggestion(POUR_OVER, GRINDER, 0.7, "burr grinder", FINES_SENTENCE),
    suggestion(COMPOST, ROSES, 0.5, "roses", ROSES_SENTENCE),
    suggestion(ROSES, COMPOST, 0.75, "compost", MULCH_SENTENCE),
]
#: Sources in review order: by their most confident row.
SOURCE_ORDER = [ESPRESSO, ROSES, POUR_OVER, COMPOST]


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("review")
    out = base / "out"
    report.write_suggestions(out, ROWS, load_crawl(write_site(base / "crawl")))
    return out


# --- an HTTP client with cookies, like a browser ----------------------------------------------------

class _NoRedirects(HTTPErrorProcessor):
    def http_response(self, request, response):  # noqa: ANN001, ANN201 - urllib's signature
        return response

    https_response = http_response


@dataclass
class Answer:
    status: int
    headers: Message  # names in any case
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


@dataclass
class Client:
    """Keeps the cookies the server sets; sends Origin like a browser's own page unless told otherwise."""

    base: str
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, path: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None,
                method: str | None = None) -> Answer:
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        sent.update(headers or {})
        body = urlencode(data).encode() if data is not None else None
        request = Request(self.base + path, body, {k: v for k, v in sent.items() if v is not None},
                          method=method)
        opener = build_opener(_NoRedirects)
        try:
            response = opener.open(request, timeout=30)
        except HTTPError as error:
            response = error
        with response:
            for value in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(value).items():
                    self.cookies[name] = morsel.value
            return Answer(response.status, response.headers, response.read())

    def page(self, query: str = "") -> Answer:
        answer = self.request("/review" + (f"?{query}" if query else ""), headers={"Accept": "text/html"})
        assert answer.status == 200, answer.text
        return answer

    def csrf(self) -> str:
        match = re.search(r'name="csrf-token" content="([^"]+)"', self.page().text)
        assert match
        return match.group(1)

    def decide(self, source: str, target: str, action: str, *, anchor: str = "", reason: str = "",
               csrf: str | None = None, origin: str | None = "same", accept: str = "application/json",
               **headers: str) -> Answer:
        token = self.csrf() if csrf is None else csrf
        fields = {"source_url": source, "target_url": target, "action": action, "anchor": anchor,
                  "reason": reason, "csrf_token": token, "next": "/review?state=all"}
        sent = {"Accept": accept, "Origin": self.base if origin == "same" else origin, **headers}
        return self.request("/review/decide", fields, sent)


@dataclass
class Review:
    base: str
    store: DecisionStore

    def client(self) -> Client:
        return Client(self.base)


@pytest.fixture
def review(out_dir: Path, tmp_path: Path) -> Iterator[Review]:
    """The app on a free port of 127.0.0.1 with a fresh decisions database; 2 rows per page."""
    store = DecisionStore(tmp_path / "decisions.sqlite")
    with serving(create_app(load_queue(out_dir), store, page_size=2)) as base:
        yield Review(base, store)


def row_ids(html: str) -> list[str]:
    return re.findall(r'<article class="row[^"]*" id="(r[0-9a-f]+)"', html)


def counts_on(html: str) -> dict[str, int]:
    return {state: int(n) for state, n in re.findall(r'data-count="(\w+)">(\d+)<', html)}


# --- the page ---------------------------------------------------------------------------------------

def test_page_groups_the_queue_by_source_with_anchor_target_and_confidence(review):
    html = review.client().page("state=all").text  # all 6 rows: page 1 of 3 holds 2
    assert "rows 1–2 of 6" in html and "page 1 of 3" in html
    assert row_ids(html) == [row_id(ESPRESSO, GRINDER), row_id(ESPRESSO, POUR_OVER)]
    assert html.count('<section class="group">') == 1 and "How to pull a good espresso shot" in html
    assert ("A <mark>burr grinder</mark> gives the even particle size that espresso needs" in html)
    assert "Choosing a burr grinder for coffee" in html and "confidence <b>0.90</b>" in html
    assert "A burr grinder crushes coffee beans between two burrs" in html  # the target's opening words
    assert counts_on(html) == {"pending": 6, "approved": 0, "rejected": 0, "live": 0}
    for key in ("<kbd>j</kbd>", "<kbd>a</kbd>", "<kbd>r</kbd>", "<kbd>e</kbd>", "<kbd>u</kbd>"):
        assert key in html  # the help line
    assert "Content-Security-Policy" in review.client().request("/review").headers


def test_pages_follow_the_review_order(review):
    client = review.client()
    seen = [row_ids(client.page(f"state=all&page={n}").text) for n in (1, 2, 3)]
    order = [row_id(s.source_url, s.target_url) for s in
             sorted(ROWS, key=lambda s: (SOURCE_ORDER.index(s.source_url), -s.confidence))]
    assert sum(seen, []) == order
    assert row_ids(client.page("state=all&page=9").text) == seen[2]  # past the end: the last page
    title_row = client.page("state=all&page=2").text
    assert "no sentence: write</span> <mark>Growing tomatoes</mark>" in title_row


@pytest.mark.parametrize(("query", "expected"), [
    ("state=all&source=espresso", [(ESPRESSO, GRINDER), (ESPRESSO, POUR_OVER), (ESPRESSO, TOMATOES)]),
    ("state=all&source=PRUNING+ROSES", [(ROSES, COMPOST)]),  # the title, any case
    ("state=all&target=burr-grinder", [(ESPRESSO, GRINDER), (POUR_OVER, GRINDER)]),
    ("state=all&min_confidence=0.7", [(ESPRESSO, GRINDER), (ROSES, COMPOST), (POUR_OVER, GRINDER)]),
    ("state=all&min_confidence=0.7&target=grinder", [(ESPRESSO, GRINDER), (POUR_OVER, GRINDER)]),
    ("state=approved", []),
])
def test_filters(out_dir, tmp_path, query, expected):
    with serving(create_app(load_queue(out_dir), DecisionStore(tmp_path / "d.sqlite"))) as base:
        assert row_ids(Client(base).page(query).text) == [row_id(*p) for p in expected]


@pytest.mark.parametrize(("query", "words"), [
    ("state=maybe", "unknown state 'maybe'"),
    ("min_confidence=high", "min_confidence must be a number"),
    ("min_confidence=1.5", "min_confidence must be a number between 0 and 1"),
    ("page=0", "page must be a whole number"),
    ("page=-2", "page must be a whole number"),
])
def test_bad_filters_are_400(review, query, words):
    answer = review.client().request(f"/review?{query}")
    assert answer.status == 400 and words in answer.text


@pytest.mark.parametrize(("context", "words", "span"), [
    ("A burr grinder gives", "burr grinder", (2, 14)),
    ("A burr grinder gives", "burr  grinder", (2, 14)),
    ("A burr\ngrinder gives", "burr grinder", (2, 14)),
    ("grinders and a grinder", "grinder", (15, 22)),  # not inside "grinders"
    ("use (espresso) beans", "(espresso)", (4, 14)),  # punctuation at the edges
    ("a C++ compiler", "C++", (2, 5)),
    ("A burr grinder gives", "burr grind", None),
    ("A burr grinder gives", "Burr", None),
    ("", "burr", None),
])
def test_find_anchor(context, words, span):
    assert find_anchor(context, words) == span


def test_opening_words_are_the_first_words_of_the_running_text():
    blocks = (Block("heading", "Espresso at home"), Block("paragraph", "An espresso shot forces hot water."),
              Block("code", "grind --fine"), Block("list_item", "Dose eighteen grams and tamp."))
    page = Page("https://example.test/a/", blocks=blocks, text="Espresso at home An espresso shot")
    assert opening_words(page) == "An espresso shot forces hot water. Dose eighteen grams and tamp."
    assert opening_words(page, words=3) == "An espresso shot …"
    assert opening_words(Page("https://example.test/b/", text="Only text here")) == "Only text here"
    assert opening_words(page, words=11) == "An espresso shot forces hot water. Dose eighteen grams and tamp."
    assert opening_words(page, words=8) == "An espresso shot forces hot water. Dose eighteen …"
    blank = Page("https://example.test/c/", blocks=(Block("paragraph", " "),), text="Not read")
    assert opening_words(blank) == ""  # prose there is, of no words: the page's text is not read instead


def test_the_opening_words_column_is_made_a_batch_of_pages_at_a_time(monkeypatch):
    """pages.parquet's opening words as an Arrow column, in the pages' order, made a batch of pages at
    a time: only a batch's strings are ever Python objects (a million pages: ~0.3 GB of them and a
    dict by URL were made beside the column), the column the one the pages' words give."""
    monkeypatch.setattr(openings, "OPENING_BATCH", 100)
    pages = [Page(f"https://example.test/{n}/", text=" ".join(f"word{n}x{k}" for k in range(40)))
             for n in range(2_000)]
    column, peak = traced_peak(lambda: opening_column(pages))
    expected = [opening_words(p) for p in pages]
    assert column.type == pa.string() and column.to_pylist() == expected
    made = sum(sys.getsizeof(text) for text in expected)  # ~1.5 MB of strings
    assert peak < made / 4, (peak, made)
    assert opening_column([]).to_pylist() == []


class _SplitCounted(str):
    """A block's text that records each of its splits."""

    splits: list[str] = []

    def split(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        _SplitCounted.splits.append(str(self))
        return super().split(*args, **kwargs)


def test_opening_words_read_only_the_blocks_they_need():
    """A long page's opening: its blocks' words are read until there are more than enough, not the
    whole of its prose (100k synthetic pages: the report's openings 5 s of CPU)."""
    texts = [_SplitCounted(t) for t in ("Hot water", "forces its way through the puck", "Dose eighteen grams",
                                        "then tamp")]
    page = Page("https://example.test/a/", blocks=tuple(Block("paragraph", t) for t in texts))
    _SplitCounted.splits = []
    assert opening_words(page, words=4) == "Hot water forces its …"
    assert _SplitCounted.splits == ["Hot water", "forces its way through the puck"]


# --- decisions --------------------------------------------------------------------------------------

def test_approve_stores_the_row_and_moves_it_out_of_pending(review):
    client = review.client()
    answer = client.decide(ESPRESSO, GRINDER, "approve", anchor="burr grinder")
    assert answer.status == 200, answer.text
    body = json.loads(answer.body)
    assert body["row"]["state"] == "approved"
    assert body["before"] == {"state": "pending", "anchor": "burr grinder", "reason": None}
    assert body["counts"] == {"pending": 5, "approved": 1, "rejected": 0, "live": 0}
    decision = review.store.get(ESPRESSO, GRINDER)
    assert (decision.state, decision.anchor) == ("approved", "burr grinder")
    assert decision.context == GRINDER_SENTENCE
    assert decision.source_title == "How to pull a good espresso shot"
    assert decision.target_title == "Choosing a burr grinder for coffee" and decision.confidence == 0.9
    assert row_id(ESPRESSO, GRINDER) not in row_ids(client.page().text)
    assert row_ids(client.page("state=approved").text) == [row_id(ESPRESSO, GRINDER)]
    assert counts_on(client.page().text) == {"pending": 5, "approved": 1, "rejected": 0, "live": 0}


def test_reject_with_a_reason(review):
    answer = review.client().decide(COMPOST, ROSES, "reject", reason="  off topic:   roses are  elsewhere ")
    assert answer.status == 200, answer.text
    decision = review.store.get(COMPOST, ROSES)
    assert (decision.state, decision.anchor) == ("rejected", "roses")
    assert decision.reason == "off topic: roses are elsewhere"
    html = review.client().page("state=rejected").text
    assert row_ids(html) == [row_id(COMPOST, ROSES)] and "off topic: roses are elsewhere" in html


def test_reject_without_a_reason(review):
    assert review.client().decide(ROSES, COMPOST, "reject").status == 200
    assert review.store.get(ROSES, COMPOST).reason is None


@pytest.mark.parametrize(("words", "stored"), [
    ("particle size", "particle size"),
    ("  even   particle\tsize ", "even particle size"),  # white space as the sentence has it
    ("blade grinder", "blade grinder"),  # not the first occurrence of "grinder"
    ("A burr grinder gives", "A burr grinder gives"),
])
def test_change_the_anchor_to_other_words_of_the_sentence(review, words, stored):
    answer = review.client().decide(ESPRESSO, GRINDER, "approve", anchor=words)
    assert answer.status == 200, answer.text
    decision = review.store.get(ESPRESSO, GRINDER)
    assert (decision.state, decision.anchor) == ("approved", stored)
    html = review.client().page("state=approved").text
    assert f"<mark>{stored}</mark>" in html


@pytest.mark.parametrize(("source", "target", "words", "message"), [
    (ESPRESSO, GRINDER, "pour-over kettle", "is not a whole-word part of the sentence"),
    (ESPRESSO, GRINDER, "grind", "is not a whole-word part"),  # part of "grinder"
    (ESPRESSO, GRINDER, "urr grinder", "is not a whole-word part"),
    (ESPRESSO, GRINDER, "Burr Grinder", "is not a whole-word part"),  # the sentence's own words
    (ESPRESSO, GRINDER, "...", "has no word in it"),
    (ESPRESSO, GRINDER, "x" * 201, "longer than 200"),
    (ESPRESSO, TOMATOES, "tomatoes", "has no sentence"),  # a title anchor keeps its words
])
def test_an_anchor_outside_the_sentence_is_refused(review, source, target, words, message):
    answer = review.client().decide(source, target, "approve", anchor=words)
    assert answer.status == 400 and message in answer.text, answer.text
    assert review.store.get(source, target) is None


def test_a_title_anchor_is_approved_as_it_is(review):
    assert review.client().decide(ESPRESSO, TOMATOES, "approve", anchor="Growing tomatoes").status == 200
    assert review.store.get(ESPRESSO, TOMATOES).anchor == "Growing tomatoes"


def test_reset_makes_the_row_pending_again(review):
    client = review.client()
    client.decide(POUR_OVER, GRINDER, "reject", reason="no")
    answer = client.decide(POUR_OVER, GRINDER, "reset")
    assert answer.status == 200 and b'"state": "pending"' in answer.body
    assert review.store.get(POUR_OVER, GRINDER) is None
    assert [h["state"] for h in review.store.history(POUR_OVER, GRINDER)] == ["rejected", "pending"]
    assert row_ids(client.page("source=pour-over").text) == [row_id(POUR_OVER, GRINDER)]


def test_a_plain_form_comes_back_to_the_page(review):
    answer = review.client().decide(ROSES, COMPOST, "approve", accept="text/html")
    assert answer.status == 303
    assert answer.headers["location"] == f"/review?state=all#{row_id(ROSES, COMPOST)}"
    assert review.store.get(ROSES, COMPOST).state == "approved"


@pytest.mark.parametrize(("source", "target", "action", "status", "words"), [
    (ESPRESSO, ROSES, "approve", 404, "no suggestion from"),
    (ESPRESSO, GRINDER, "publish", 400, "unknown action 'publish'"),
    ("", GRINDER, "approve", 400, "give source_url and target_url"),
])
def test_unknown_rows_and_actions_are_refused(review, source, target, action, status, words):
    answer = review.client().decide(source, target, action)
    assert answer.status == status and words in answer.text
    assert review.store.decisions() == []


def test_a_live_link_is_not_changed_by_hand(review):
    review.store.decide(ESPRESSO, GRINDER, "approved", anchor="burr grinder")
    review.store.record_live([(ESPRESSO, GRINDER)])
    answer = review.client().decide(ESPRESSO, GRINDER, "reject")
    assert answer.status == 409 and "live" in answer.text
    assert review.store.get(ESPRESSO, GRINDER).state == "live"


def test_decisions_outside_this_queue_are_listed_and_counted(review):
    """A new run holds decided pairs back, so they are not in its queue: the page lists them from the
    store; reset, such a pair leaves the list (the next run may propose it again)."""
    review.store.decide(COMPOST, TOMATOES, "rejected", anchor="tomatoes",
                        context="Spread it around tomatoes.", reason="linked already",
                        target_title="Growing tomatoes at home", confidence=0.4)
    review.store.decide(ROSES, GRINDER, "live", anchor="secateurs")
    client = review.client()
    html = client.page("state=rejected").text
    assert row_ids(html) == [row_id(COMPOST, TOMATOES)]
    assert "Spread it around <mark>tomatoes</mark>." in html and "linked already" in html
    assert counts_on(html) == {"pending": 6, "approved": 0, "rejected": 1, "live": 1}
    assert client.decide(COMPOST, TOMATOES, "reset").status == 200
    assert review.store.get(COMPOST, TOMATOES) is None
    assert row_id(COMPOST, TOMATOES) not in row_ids(client.page("state=all&page=4").text)


def test_approved_rows_export_as_csv(review):
    client = review.client()
    client.decide(ESPRESSO, GRINDER, "approve", anchor="particle size")
    client.decide(ROSES, COMPOST, "approve")
    client.decide(COMPOST, ROSES, "reject")
    answer = client.request("/review/approved.csv")
    assert answer.status == 200 and answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert 'filename="approved.csv"' in answer.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [(r["source_url"], r["target_url"], r["anchor"]) for r in rows] == [
        (ESPRESSO, GRINDER, "particle size"), (ROSES, COMPOST, "compost")]
    assert rows[0]["context"] == GRINDER_SENTENCE
    assert rows[1]["target_title"] == "Making compost in your garden"
    assert list(rows[0]) == ["source_url", "target_url", "anchor", "context", "confidence", "source_title",
                             "target_title", "decided_at"]


def test_counts_and_screens_as_pure_functions(out_dir, tmp_path):
    store = DecisionStore(tmp_path / "d.sqlite")
    store.decide(ESPRESSO, GRINDER, "approved")
    rows = review_rows(load_queue(out_dir), store.decisions())
    assert count_states(rows) == {"pending": 5, "approved": 1, "rejected": 0, "live": 0}
    shown = screen(rows, Filters(state="pending", page=2), size=2)
    assert (shown.total, shown.pages, shown.first, shown.last) == (5, 3, 3, 4)
    assert [g.source_url for g in shown.groups] == [ROSES, POUR_OVER]


# --- cross-site requests ----------------------------------------------------------------------------

@pytest.mark.parametrize("attack", ["no token", "wrong token", "forged cookie", "foreign origin",
                                    "null origin", "no origin or referer", "foreign referer",
                                    "cross-site fetch"])
def test_cross_site_changes_are_refused_and_nothing_is_stored(review, attack):
    client = review.client()
    good = client.csrf()
    kwargs: dict[str, str | None] = {}
    if attack == "no token":
        kwargs["csrf"] = ""
    elif attack == "wrong token":
        kwargs["csrf"] = client.csrf()[::-1]
    elif attack == "forged cookie":  # double submit with a value the server never signed
        client.cookies[CSRF_COOKIE] = kwargs["csrf"] = "forged.0000"
    elif attack == "foreign origin":
        kwargs["origin"] = "http://evil.example"
    elif attack == "null origin":
        kwargs["origin"] = "null"
    elif attack == "no origin or referer":
        kwargs["origin"] = None
    elif attack == "foreign referer":
        kwargs.update(origin=None, Referer="http://evil.example/review")
    elif attack == "cross-site fetch":
        kwargs["Sec-Fetch-Site"] = "cross-site"
    answer = client.decide(ESPRESSO, GRINDER, "approve", **{"csrf": good, **kwargs})
    assert answer.status == 403, answer.text
    assert review.store.decisions() == []


def test_a_same_origin_referer_is_enough_without_origin(review):
    client = review.client()
    answer = client.decide(ESPRESSO, GRINDER, "approve", origin=None, Referer=review.base + "/review")
    assert answer.status == 200 and review.store.get(ESPRESSO, GRINDER).state == "approved"


def test_a_cookie_from_another_session_does_not_match(review):
    alice, mallory = review.client(), review.client()
    answer = alice.decide(ESPRESSO, GRINDER, "approve", csrf=mallory.csrf())
    assert answer.status == 403 and review.store.decisions() == []


def test_loopback_server_refuses_other_host_names(review):
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example."""
    answer = review.client().request("/review", headers={"Host": "evil.example:80"})
    assert answer.status == 400 and "Host" in answer.text
    assert review.client().request("/health", headers={"Host": "localhost"}).status == 200


def test_every_page_forbids_framing_and_sniffing(review):
    for path in ("/review", "/health", "/review/approved.csv", "/review/static/review.js"):
        headers = review.client().request(path).headers
        assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff", path


# --- the access token -------------------------------------------------------------------------------

@pytest.fixture
def guarded(out_dir: Path, tmp_path: Path) -> Iterator[Review]:
    """The app as it runs off loopback (a token, any Host), served on 127.0.0.1 for the test."""
    store = DecisionStore(tmp_path / "decisions.sqlite")
    with serving(create_app(load_queue(out_dir), store, token=TOKEN, loopback=False)) as base:
        yield Review(base, store)


@pytest.mark.parametrize("path", ["/review", "/health", f"/recommend?url={ESPRESSO}", "/review/approved.csv",
                                  "/", "/review/static/review.js"])
def test_without_the_token_every_request_is_401(guarded, path):
    answer = guarded.client().request(path)
    assert answer.status == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "y"}
    assert guarded.client().request(path, headers=wrong).status == 401


def test_a_bearer_token_opens_the_api(guarded):
    answer = guarded.client().request("/health", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status == 200 and b'"status": "ok"' in answer.body


def test_token_login_sets_a_session_cookie_and_drops_the_token_from_the_address(guarded):
    client = guarded.client()
    assert client.request("/review?token=wrong-token-wrong-token").status == 401
    answer = client.request(f"/review?state=all&token={TOKEN}")
    assert answer.status == 303 and answer.headers["location"] == "/review?state=all"
    assert TOKEN not in str(client.cookies)  # the cookie holds a value derived from the token
    assert client.page("state=all").status == 200
    assert client.decide(ESPRESSO, GRINDER, "approve").status == 200
    assert guarded.store.get(ESPRESSO, GRINDER).state == "approved"
    with_bearer = guarded.client()
    refused = with_bearer.decide(ESPRESSO, POUR_OVER, "approve", csrf="", Authorization=f"Bearer {TOKEN}")
    assert refused.status == 403  # the token opens the door; a change still needs the CSRF token


def test_cookies_are_secure_behind_a_tls_proxy(guarded):
    """A TLS proxy on this host says so with X-Forwarded-Proto (uvicorn trusts it from 127.0.0.1)."""
    plain = guarded.client().request(f"/review?token={TOKEN}")
    assert "Secure" not in plain.headers["Set-Cookie"]
    proxied = guarded.client().request(f"/review?token={TOKEN}", headers={"X-Forwarded-Proto": "https"})
    assert proxied.status == 303 and "Secure" in proxied.headers["Set-Cookie"]


# --- the command line -------------------------------------------------------------------------------

def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    environment.update(PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "postprocess", "serve", *args], cwd=REPO, env=environment,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def serve_fails(*args: str, env: dict[str, str] | None = None) -> str:
    process = serve(*args, env=env)
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    lines = stderr.strip().splitlines()
    assert process.returncode == 2 and len(lines) == 1 and lines[0].startswith(PREFIX), stderr
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_off_loopback_without_a_token_refuses_to_start(out_dir, host):
    line = serve_fails("--out", str(out_dir), "--host", host, "--port", "0")
    assert f"--host {host} is not loopback" in line and TOKEN_ENV in line


def test_a_short_token_refuses_to_start(out_dir):
    line = serve_fails("--out", str(out_dir), "--host", "0.0.0.0", "--port", "0", env={TOKEN_ENV: "short"})
    assert "shorter than 16 characters" in line


@pytest.mark.parametrize(("kind", "words"), [("folder", "is a folder"),
                                             ("not sqlite", "not a SQLite database")])
def test_a_bad_database_is_one_line(out_dir, tmp_path, kind, words):
    db = tmp_path / "decisions.sqlite"
    if kind == "folder":
        db.mkdir()
    else:
        db.write_bytes(b"not a database, just bytes" * 100)
    line = serve_fails("--out", str(out_dir), "--port", "0", "--db", str(db))
    assert words in line and str(db) in line


def start(out: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, str]:
    """``serve --port 0`` in a subprocess; its base URL and the line it printed."""
    process = serve("--out", str(out), "--port", "0", *args, env=env)
    line = process.stdout.readline()
    match = re.search(r"on (http://\S+)/ ", line)
    if not match:
        process.kill()
        pytest.fail(f"no address in {line!r}: {process.stderr.read()}")
    return process, match.group(1), line


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.communicate(timeout=30)


def test_a_token_from_the_environment_guards_the_cli_server(out_dir, tmp_path):
    process, base, line = start(out_dir, "--db", str(tmp_path / "d.sqlite"), env={TOKEN_ENV: TOKEN})
    try:
        assert TOKEN not in line and "/review?token=<token>" in line
        assert Client(base).request("/health").status == 401
        assert Client(base).request("/health", headers={"Authorization": f"Bearer {TOKEN}"}).status == 200
    finally:
        stop(process)


def test_decisions_survive_a_restart_in_the_default_database(tmp_path):
    """The database sits beside --out by default; a new server (and a new run's folder) finds it."""
    out = tmp_path / "run" / "out"
    report.write_suggestions(out, ROWS, load_crawl(write_site(tmp_path / "crawl")))
    process, base, line = start(out)
    client = Client(base)
    try:
        assert str(default_path(out)) in line
        assert client.decide(ESPRESSO, GRINDER, "approve", anchor="particle size").status == 200
        assert client.decide(COMPOST, ROSES, "reject", reason="no").status == 200
        kept = client.csrf()
    finally:
        stop(process)
    process, base, _ = start(out)
    try:
        client.base = base  # the same browser, with its cookies, after the restart
        assert counts_on(client.page().text) == {"pending": 4, "approved": 1, "rejected": 1, "live": 0}
        assert "<mark>particle size</mark>" in client.page("state=approved").text
        answer = client.decide(ROSES, COMPOST, "approve", csrf=kept)  # the open page's token still works
        assert answer.status == 200, answer.text
    finally:
        stop(process)
    states = {d.pair: (d.state, d.anchor) for d in DecisionStore(default_path(out)).decisions()}
    assert states == {(ESPRESSO, GRINDER): ("approved", "particle size"),
                      (COMPOST, ROSES): ("rejected", "roses"), (ROSES, COMPOST): ("approved", "compost")}


# --- in Chromium ------------------------------------------------------------------------------------

chromium = pytest.mark.skipif(not Path(LINKSPIDER_CHROMIUM_PATH).is_file(),
                              reason="chromium missing: run scripts/setup.sh")


@chromium
def test_mouse_approves_and_rejects_in_chromium(review):
    from review_browser import review_in_browser

    approved, rejected = review_in_browser(review.base + "/review", approve=1, reject=1, reason="too vague")
    assert approved == [(ESPRESSO, GRINDER)] and rejected == [(ESPRESSO, POUR_OVER)]
    assert {d.pair: (d.state, d.reason) for d in review.store.decisions()} == {
        (ESPRESSO, GRINDER): ("approved", None), (ESPRESSO, POUR_OVER): ("rejected", "too vague")}


#: Select ``words`` in the sentence of row ``id``, as a mouse drag would.
SELECT_WORDS = """([id, words]) => {
    const text = [...document.querySelector('#' + id + ' p.context').childNodes]
        .find(node => node.nodeType === Node.TEXT_NODE && node.textContent.includes(words));
    const at = text.textContent.indexOf(words), range = document.createRange();
    range.setStart(text, at);
    range.setEnd(text, at + words.length);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
}"""


@chromium
def test_keyboard_shortcuts_in_chromium(out_dir, tmp_path):
    from review_browser import chromium_page

    store = DecisionStore(tmp_path / "d.sqlite")
    order = [(ESPRESSO, GRINDER), (ESPRESSO, POUR_OVER), (ESPRESSO, TOMATOES), (ROSES, COMPOST),
             (POUR_OVER, GRINDER), (COMPOST, ROSES)]
    ids = [row_id(*p) for p in order]

    def wait(index: int, state: str | None = None) -> None:
        page.wait_for_selector(f'#{ids[index]}[data-state="{state}"]' if state else f"#{ids[index]}.current")

    with serving(create_app(load_queue(out_dir), store)) as base, chromium_page() as page:
        page.goto(base + "/review")
        assert [page.locator("article.row").nth(i).get_attribute("id") for i in range(6)] == ids
        wait(0)
        page.keyboard.press("a")  # approve the first row; the focus moves on
        wait(0, "approved")
        wait(1)
        page.keyboard.press("r")  # reject the second ...
        wait(1, "rejected")
        assert store.get(ESPRESSO, POUR_OVER).state == "rejected"
        page.keyboard.press("u")  # ... and undo: pending again, focus back on it
        wait(1, "pending")
        wait(1)
        assert store.get(ESPRESSO, POUR_OVER) is None
        page.keyboard.press("j")
        wait(2)
        page.keyboard.press("k")
        wait(1)
        page.keyboard.press("R")  # reject with a reason: type it, Enter
        page.keyboard.type("wrong sense")
        page.keyboard.press("Enter")
        wait(1, "rejected")
        wait(2)
        page.keyboard.press("j")
        page.keyboard.press("j")
        wait(4)
        page.evaluate(SELECT_WORDS, [ids[4], "fines clog the filter"])  # words selected with the mouse ...
        page.keyboard.press("e")  # ... become the anchor; Enter approves with them
        assert page.locator(f'#{ids[4]} input[name="anchor"]').input_value() == "fines clog the filter"
        page.keyboard.press("Enter")
        wait(4, "approved")
        assert page.locator('[data-count="approved"]').inner_text() == "2"
        assert page.locator(f"#{ids[4]} mark").inner_text() == "fines clog the filter"
        wait(5)
        page.keyboard.press("e")  # words that are not in the sentence: refused and said, nothing stored
        page.keyboard.type("not in the sentence")
        page.keyboard.press("Enter")
        page.wait_for_selector("#status.error")
        assert "is not a whole-word part" in page.locator("#status").inner_text()
        assert "<kbd>u</kbd> undo" in page.locator("#help").inner_html()
    assert {d.pair: (d.state, d.anchor, d.reason) for d in store.decisions()} == {
        (ESPRESSO, GRINDER): ("approved", "burr grinder", None),
        (POUR_OVER, GRINDER): ("approved", "fines clog the filter", None),
        (ESPRESSO, POUR_OVER): ("rejected", "grams of coffee", "wrong sense"),
    }


@chromium
def test_without_javascript_the_forms_still_work(review):
    from review_browser import chromium_page

    with chromium_page(javascript=False) as page:
        page.goto(review.base + "/review")
        row = page.locator(f"#{row_id(ESPRESSO, GRINDER)}")
        row.locator('input[name="anchor"]').fill("blade grinder")
        row.locator("form.approve button").click()
        page.wait_for_url(re.compile(r"/review#"))
        page.locator(f"#{row_id(ESPRESSO, POUR_OVER)} form.reject button").click()
        page.wait_for_url(re.compile(r"/review#"))
        assert urlsplit(page.url).path == "/review"
    assert {d.pair: (d.state, d.anchor) for d in review.store.decisions()} == {
        (ESPRESSO, GRINDER): ("approved", "blade grinder"),
        (ESPRESSO, POUR_OVER): ("rejected", "grams of coffee")}
