"""Anchor phrases: verbatim in running text, outside links and identifiers, naming the target."""

from __future__ import annotations

import numpy as np
import pytest
from crawlkit import CHAIN, ESPRESSO, GRINDER, POUR_OVER, SITE, SITE_LINKS, TOMATOES, link, page, url

from postprocess.stages.anchors import (
    EVIDENCE_ORDER,
    MAX_WORDS,
    SENTENCE_END,
    STOPWORDS,
    AnchorFinder,
    NameOwners,
    _sub_phrases,
    add_anchors,
    clean_title,
    context_of,
    normalise,
    short_title,
    site_title_parts,
    source_text,
    source_texts,
)
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Block, Crawl, Link, Page, build_crawl
from postprocess.stages.phrases import PhraseTable, phrase_hashes
from postprocess.stages.tokeniser import WORD, bare


@pytest.mark.parametrize(
    ("word", "norm"),
    [("Queries", "query"), ("models", "model"), ("class", "class"), ("is", "is"), ("Django", "django"),
     ("bus", "bus"), ("don’t", "don't")],
)
def test_normalise(word, norm):
    assert normalise(word) == norm


TITLES = ["Models | Django documentation | Django", "Forms | Django documentation | Django",
          "Views | Django documentation | Django", "Making queries | Django documentation | Django"]


def test_site_title_parts_and_clean_title():
    parts = site_title_parts(TITLES)
    assert parts == {"django documentation", "django"}
    assert clean_title(TITLES[3], parts) == "Making queries"
    assert clean_title("Django", parts) == "Django"  # nothing left: keep the title


@pytest.mark.parametrize(
    ("title", "short"),
    [("Making queries", "Making queries"),
     ("How to pull a good espresso shot at home", "How to pull a good espresso"),
     ("Alpha beta gamma delta epsilon of zeta", "Alpha beta gamma delta epsilon"),  # no dangling stopword
     ("", "")],
)
def test_short_title(title, short):
    assert short_title(title) == short


def prose(text: str, **kw: object) -> Page:
    """A Page whose main content is ``text``, one paragraph a line."""
    blocks = tuple(Block("paragraph", line) for line in text.split("\n") if line.strip())
    return Page(text=text, blocks=blocks, **kw)


@pytest.mark.parametrize(
    ("text", "needle", "context"),
    [
        ("First one. The needle is here. Last one.", "needle", "The needle is here."),
        ("No end at all with needle", "needle", "No end at all with needle"),
        ("Line one\nneedle line\nthree", "needle", "needle line"),
    ],
)
def test_context_is_the_sentence(text, needle, context):
    src = source_text(prose(text, url="u"))
    start = src.text.index(needle)
    assert context_of(src.text, src.bounds, start, start + len(needle)) == context


def test_long_sentence_context_is_cut_around_the_anchor():
    text = ("word " * 200) + "needle " + ("word " * 200)
    src = source_text(prose(text, url="u"))
    start = src.text.index("needle")
    ctx = context_of(src.text, src.bounds, start, start + 6, limit=100)
    assert "needle" in ctx and len(ctx) <= 100


def test_a_sources_words_their_spans_forms_and_where_each_form_stands():
    """Every word of the running text with its character span, its normal form (the plural
    stripped, the case folded) and, per form, the numbers of the words written that way or another."""
    text = "Queries and a query: QUERY’s set.\n— Models, model-forms & e.g. models"
    src = source_text(prose(text, url="u"))
    assert src.raw == ["Queries", "and", "a", "query", "QUERY’s", "set",
                       "Models", "model-forms", "e.g", "models"]
    assert [src.text[a:b] for a, b in src.spans] == src.raw
    assert src.norms == ["query", "and", "a", "query", "query'", "set", "model", "model-form", "e.g", "model"]
    assert src.positions["query"] == [0, 3] and src.positions["model"] == [6, 9]
    assert src.sentence_of == [0, 0, 0, 0, 0, 0, 1, 1, 1, 2] and src.block_of == [0] * 6 + [1] * 4
    assert source_text(prose("", url="u")).positions == {}


def _anchor(crawl, source, targets, allow_title=False):
    rows = [Suggestion(source, t, 1.0 - i / 10) for i, t in enumerate(targets)]
    add_anchors(crawl, rows, allow_title=allow_title)
    return rows


def test_the_finder_keeps_only_the_name_parts_that_several_pages_carry():
    """A part of a title on one page names that page; the finder keeps the set of parts on more
    than one page, not a count for every part of every name."""
    crawl = build_crawl(SITE, SITE_LINKS, [])
    finder = AnchorFinder(crawl)
    parts = {}
    for one in crawl.pages:
        for part in {p for key, _ in finder._page_names(one) for p in _sub_phrases(key)}:
            parts[part] = parts.get(part, 0) + 1
    assert finder.shared_parts == {part for part, n in parts.items() if n > 1}
    assert finder.shared_parts and any(n == 1 for n in parts.values())
    assert not hasattr(finder, "name_pages")


def test_anchor_stands_verbatim_in_the_source_and_names_the_target():
    crawl = build_crawl(SITE, SITE_LINKS, [])
    [s] = _anchor(crawl, GRINDER, [ESPRESSO])
    text = next(p.text for p in crawl.pages if p.url == GRINDER)
    assert s.anchor_type == "text"
    assert s.anchor in text and s.anchor in s.context and s.context in " ".join(text.split())
    # the pour-over page links it with "espresso", but one dictionary word is not enough: a part of
    # its title that no other page carries is
    assert (s.anchor, s.evidence) == ("espresso shot", "part")


def test_anchor_is_never_inside_an_existing_link():
    crawl = build_crawl(SITE, SITE_LINKS, [])  # ESPRESSO already links "burr grinder" to GRINDER
    [s] = _anchor(crawl, ESPRESSO, [GRINDER])
    assert "burr grinder" not in s.anchor.lower()
    without_link = build_crawl(SITE, [], [])  # the link hidden (as the evaluation does): its words are free
    [free] = _anchor(without_link, ESPRESSO, [GRINDER])
    assert free.anchor == "burr grinder"


def test_one_page_never_gets_the_same_anchor_twice():
    source = page(url("/s/"), "Source", "We roast coffee beans every day. Our coffee beans come from Peru.")
    first = page(url("/beans/"), "Coffee beans | Shop", "All about beans.")
    second = page(url("/beans-guide/"), "Coffee beans | Shop", "A guide to beans.")
    crawl = build_crawl([source, first, second], [], [])
    rows = _anchor(crawl, source["url"], [first["url"], second["url"]])
    assert rows[0].anchor == "coffee beans" and rows[0].anchor_type == "text"
    assert rows[1].anchor == ""  # the same words never carry two targets on one page


def test_no_qualifying_phrase_means_no_anchor_unless_titles_are_asked_for():
    crawl = build_crawl(SITE, SITE_LINKS, [])
    [s] = _anchor(crawl, CHAIN, [TOMATOES])  # nothing about tomatoes on the chain page
    assert (s.anchor, s.anchor_type) == ("", "")
    [t] = _anchor(crawl, CHAIN, [TOMATOES], allow_title=True)
    assert (t.anchor, t.anchor_type, t.context) == ("Growing tomatoes at home", "title", "")


def test_phrases_do_not_cross_sentences_or_start_with_stopwords():
    source = page(url("/s/"), "S", "Brewing is fun. Coffee grinders matter. The grinder of choice.")
    target = page(url("/t/"), "Coffee grinder | Shop", "x")
    crawl = build_crawl([source, target], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == "Coffee grinders"


def test_every_suggestion_of_a_source_gets_a_distinct_anchor():
    crawl = build_crawl(SITE, [], [])
    rows = _anchor(crawl, POUR_OVER, [ESPRESSO, GRINDER, TOMATOES, CHAIN])
    anchors = [r.anchor.lower() for r in rows if r.anchor]
    assert anchors and len(set(anchors)) == len(anchors)
    text = next(p.text for p in crawl.pages if p.url == POUR_OVER)
    assert all(r.anchor in text for r in rows if r.anchor)


def test_release_number_names_its_notes_but_release_notes_name_nothing():
    notes = [page(url(f"/releases/1.{i}/"), f"Django 1.{i} release notes | Docs", f"Bug fixes in 1.{i}.")
             for i in range(10)]
    source = page(url("/s/"), "S", "Read the release notes. Version 1.3 fixed the crash.")
    crawl = build_crawl([source, *notes], [], [])
    [s] = _anchor(crawl, source["url"], [url("/releases/1.3/")])
    assert s.anchor == "1.3" and s.evidence == "part"


@pytest.mark.parametrize(
    ("sentence", "title", "anchor"),
    [
        ("Connect a handler to the signal when the model saves.", "Signals | Docs", ""),  # a verb/noun
        ("Press enquiries go to our office in Leeds.", "The French press guide | Shop", ""),
        ("Take good care of the beans.", "Care | Shop", ""),
        ("This is a new guide to brewing.", "Dialling in a new bag of espresso | Shop", ""),  # weak words
        ("Use the QuerySet to filter rows.", "QuerySet API reference | Docs", "QuerySet"),  # an identifier
        ("Brew it in a French press for four minutes.", "The French press guide | Shop", "French press"),
        ("Turn on CSRF protection for forms.", "CSRF | Docs", "CSRF"),  # an acronym
        ("RUN VACUUM AFTER A BULK DELETE.", "VACUUM | Docs", ""),  # shouting is not a name
    ],
)
def test_one_common_word_is_never_an_anchor(sentence, title, anchor):
    source = page(url("/s/"), "S", sentence)
    target = page(url("/t/"), title, "x")
    crawl = build_crawl([source, target], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == anchor


def test_a_word_the_site_capitalises_inside_sentences_is_a_name():
    source = page(url("/s/"), "S", "We moved the blog to Django last year.")
    target = page(url("/t/"), "Django | Docs", "x")
    others = [page(url(f"/o{i}/"), f"O{i}", f"Most of this runs on Django and works well {i}.")
              for i in range(3)]
    filler = [page(url(f"/f{i}/"), f"F{i}", f"Nothing about frameworks here {i}.") for i in range(80)]
    crawl = build_crawl([source, target, *others, *filler], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == "Django"
    common = build_crawl([source, target, *others], [], [])  # on most of the site's pages: a common word
    [c] = _anchor(common, source["url"], [target["url"]])
    assert c.anchor == ""
    alone = build_crawl([source, target], [], [])  # once is not a habit: "django" is an English word then
    [t] = _anchor(alone, source["url"], [target["url"]])
    assert t.anchor == ""


def test_a_name_part_two_pages_share_names_neither():
    source = page(url("/s/"), "S", "Most home ovens run cool, so check yours.")
    one = page(url("/baguettes/"), "Baguettes in a home oven | Blog", "x")
    two = page(url("/steam/"), "Creating steam in a home oven | Blog", "x")
    crawl = build_crawl([source, one, two], [], [])
    assert [s.anchor for s in _anchor(crawl, source["url"], [one["url"], two["url"]])] == ["", ""]
    alone = build_crawl([source, one], [], [])
    [s] = _anchor(alone, source["url"], [one["url"]])
    assert (s.anchor, s.evidence) == ("home ovens", "part")


def test_a_code_name_must_be_spelled_as_the_links_spell_it():
    text = "Call it when func is set."
    block = Block("paragraph", text, code=((13, 17),))
    source = Page(url=url("/s/"), title="S", text=text, blocks=(block,))
    target = Page(url=url("/expr/"), title="Query expressions", text="x")
    other = Page(url=url("/o/"), title="O", text="Use Func here.")
    crawl = Crawl(pages=[source, target, other], links=[Link(other.url, target.url, "Func")])
    [s] = _anchor(crawl, source.url, [target.url])
    assert s.anchor == ""  # `func` the argument is not `Func` the class


@pytest.mark.parametrize(
    ("block", "anchor"),
    [
        (Block("heading", "The sites framework"), ""),
        (Block("code", "from django.contrib import sites framework"), ""),
        (Block("table_cell", "sites framework"), ""),
        (Block("caption", "The sites framework at work"), ""),
        (Block("paragraph", "Enable the sites framework first."), "sites framework"),
        (Block("list_item", "Enable the sites framework first."), "sites framework"),
        (Block("quote", "Enable the sites framework first."), "sites framework"),
        (Block("definition", "Enable the sites framework first."), "sites framework"),
        (Block("paragraph", "Edit contrib/sites framework.py now."), ""),  # a path
        (Block("paragraph", "Set SITE_sites framework_ID."), ""),  # inside an identifier
        (Block("paragraph", "See the sites framework docs.", links=((8, 23, url("/elsewhere/")),)), ""),
        # a whole inline code name may carry the link, a part of one may not
        (Block("paragraph", "Use sites framework settings.", code=((4, 19),)), "sites framework"),

        (Block("paragraph", "Use sites framework settings.", code=((4, 29),)), ""),  # part of a code name
        # a run-in label (a bold "Sites framework." opening a list item) or a bare list of names
        # is a heading in disguise, not running text
        (Block("list_item", "Sites framework. One database, several sites."), ""),
        (Block("list_item", "Sites framework: one database, several sites."), ""),
        (Block("paragraph", "Flatpages, redirects, sites framework."), ""),
        (Block("list_item", "The sites framework. It serves several sites."), "sites framework"),
    ],
)
def test_anchors_stand_only_where_a_link_can_go(block, anchor):
    source = Page(url=url("/s/"), title="S", text=block.text, blocks=(block,))
    target = Page(url=url("/sites/"), title="The sites framework", h1="The sites framework", text="x")
    crawl = Crawl(pages=[source, target], links=[Link(source.url, url("/elsewhere/"), "x")])
    [s] = _anchor(crawl, source.url, [target.url])
    assert s.anchor == anchor


def test_a_hidden_link_frees_its_words_but_a_visible_one_blocks_them():
    block = Block("paragraph", "Enable the sites framework first.", links=((11, 26, url("/sites/")),))
    source = Page(url=url("/s/"), title="S", text=block.text, blocks=(block,))
    target = Page(url=url("/sites/"), title="The sites framework", text="x")
    linked = Crawl(pages=[source, target], links=[Link(source.url, target.url, "sites framework")])
    [s] = _anchor(linked, source.url, [target.url])
    assert s.anchor == ""
    hidden = Crawl(pages=[source, target], links=[])
    [h] = _anchor(hidden, source.url, [target.url])
    assert h.anchor == "sites framework"


@pytest.mark.parametrize(("code", "anchor"), [("default", ""), ("CharField", "CharField")])
def test_a_common_word_in_code_is_still_a_common_word(code, anchor):
    text = f"Set the {code} option."
    block = Block("paragraph", text, code=((8, 8 + len(code)),))
    source = Page(url=url("/s/"), title="S", text=text, blocks=(block,))
    target = Page(url=url("/t/"), title=f"{code} | Docs", h1=code, text="x")
    others = [Page(url=url(f"/o{i}/"), title="O", text=f"Use {code}.") for i in range(3)]
    crawl = Crawl(pages=[source, target, *others], links=[Link(o.url, target.url, code) for o in others])
    [s] = _anchor(crawl, source.url, [target.url])
    assert s.anchor == anchor


@pytest.mark.parametrize(("text", "anchor"), [("Turn on debug logging first.", ""),
                                              ("Set DEBUG to False in production.", "DEBUG")])
def test_a_constant_the_links_write_in_capitals_is_not_the_plain_word(text, anchor):
    source = page(url("/s/"), "S", text)
    target = page(url("/settings/"), "Settings | Docs", "x")
    others = [page(url(f"/o{i}/"), "O", "Set DEBUG.") for i in range(3)]
    links = [link(o["url"], target["url"], "DEBUG") for o in others]
    crawl = build_crawl([source, target, *others], links, [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == anchor


def test_a_code_name_only_the_target_defines_names_it():
    text = "The shared lock table holds (max_connections + 10) entries."
    at = text.index("max_connections")
    source = Page(url=url("/locks/"), title="Locks", text=text,
                  blocks=(Block("paragraph", text, code=((at, at + 15),)),))
    term = Block("term", "max_connections (integer)", code=((0, 15), (17, 24)))
    target = Page(url=url("/config/"), title="20.3. Connections and Authentication", text="x",
                  blocks=(term, Block("definition", "Sets the maximum number of connections.")))
    other = Page(url=url("/other/"), title="Other", text="y",
                 blocks=(Block("term", "integer", code=((0, 7),)),))
    crawl = Crawl(pages=[source, target, other], links=[])
    [s] = _anchor(crawl, source.url, [target.url])
    assert (s.anchor, s.evidence) == ("max_connections", "term")
    both = Page(url=url("/also/"), title="Also", text="z", blocks=(term,))  # defined twice: nobody's name
    [t] = _anchor(Crawl(pages=[source, target, both], links=[]), source.url, [target.url])
    assert t.anchor == ""


@pytest.mark.parametrize(("text", "anchor"), [
    ("Privileges are described in Section 5.7.3 below.", "Section 5.7.3"),
    ("See Chapter 5 for the rest.", "Chapter 5"),
    ("See Section 5.71 instead.", ""),
])
def test_a_numbered_reference_names_the_numbered_page(text, anchor):
    source = page(url("/s/"), "S", text)
    target = page(url("/ddl-priv/"), "5.7. Privileges | PostgreSQL", "x")
    chapter = page(url("/ddl/"), "Chapter 5. Data Definition | PostgreSQL", "x")
    crawl = build_crawl([source, target, chapter], [], [])
    wanted = chapter["url"] if "Chapter" in text else target["url"]
    [s] = _anchor(crawl, source["url"], [wanted])
    assert s.anchor == anchor


def test_a_call_in_code_is_linked_whole_with_its_parentheses():
    text = "Use reverse() in views and reverse ( x ) nowhere."
    source = Page(url=url("/s/"), title="S", text=text, blocks=(Block("paragraph", text, code=((4, 13),)),))
    target = Page(url=url("/urls/"), title="django.urls utility functions", text="x")
    others = [Page(url=url(f"/o{i}/"), title="O", text="reverse()") for i in range(3)]
    links = [Link(o.url, target.url, "reverse()") for o in others]
    crawl = Crawl(pages=[source, target, *others], links=links)
    [s] = _anchor(crawl, source.url, [target.url])
    assert s.anchor == "reverse()"
    plain = Page(url=url("/s/"), title="S", text="Call save(now) later.",
                 blocks=(Block("paragraph", "Call save(now) later."),))
    [t] = _anchor(Crawl(pages=[plain, target], links=[]), plain.url, [target.url])
    assert t.anchor == ""


@pytest.mark.parametrize(
    ("sentence", "title", "slug"),
    [  # the word senses issue 8 found in the queue
        ("Django protects you against cross site scripting.", "The sites framework | Docs",
         "/ref/contrib/sites/"),
        ("Always use the latest patch release of your version.", "Submitting patches | Docs",
         "/internals/contributing/writing-code/submitting-patches/"),
        ("Press enquiries go to our office in Leeds.", "The French press guide | Shop",
         "/guides/french-press/"),
        ("Iced coffee: brew strong, then pour over ice.", "Pour-over basics | Shop", "/guides/pour-over/"),
        ("A tool that does not track you.", "What the tool does | Shop", "/guides/does/"),
        ("Fixed data loss bugs in the cache.", "Django 1.4.19 release notes | Docs", "/releases/1.4.19/"),
    ],
)
def test_the_word_senses_that_went_wrong_are_no_anchors(sentence, title, slug):
    source = page(url("/s/"), "S", sentence)
    target = page(url(slug), title, "x")
    others = [page(url(f"/releases/1.4.{i}/"), f"Django 1.4.{i} release notes | Docs", "y") for i in range(3)]
    crawl = build_crawl([source, target, *others], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == ""


def test_words_inside_another_pages_longer_name_are_not_its_anchor():
    """"model fields" in "custom model fields" names the custom fields how-to, not the field reference."""
    source = page(url("/s/"), "S", "Removing custom model fields breaks old migrations.\n"
                                   "Model fields map columns to attributes.")
    fields = page(url("/ref/fields/"), "Model fields | Docs", "x")
    custom = page(url("/howto/custom/"), "Custom model fields | Docs", "y")
    crawl = build_crawl([source, fields, custom], [], [])
    [s] = _anchor(crawl, source["url"], [fields["url"]])
    assert s.anchor == "Model fields" and s.context == "Model fields map columns to attributes."
    [t] = _anchor(crawl, source["url"], [custom["url"]])
    assert t.anchor == "custom model fields"
    alone = build_crawl([source, fields], [], [])  # no longer name around: the first one is taken
    [u] = _anchor(alone, source["url"], [fields["url"]])
    assert u.context == "Removing custom model fields breaks old migrations."


def test_the_words_around_an_anchor_are_looked_up_as_names_only_where_a_name_can_stand():
    """Every name is trimmed and at most MAX_WORDS long, so the words around an anchor are looked up
    in the names' tables only as phrases that neither start nor end with a stopword: "of the custom
    model fields in the" asks for phrases such as "custom model", never "the custom" or "fields in
    the"; the custom fields how-to's longer name is still found around "model fields"."""
    source = page(url("/s/"), "S", "The removal of the custom model fields in the app breaks old migrations.")
    fields = page(url("/ref/fields/"), "Model fields | Docs", "x")
    custom = page(url("/howto/custom/"), "Custom model fields | Docs", "y")
    crawl = build_crawl([source, fields, custom], [], [])
    finder = AnchorFinder(crawl)
    asked: list[tuple[str, ...]] = []

    class Asked:
        def __init__(self, table):
            self.table = table

        def get(self, key, default=None):
            asked.append(key)
            return self.table.get(key, default)

    finder._page_named, finder._link_named = Asked(finder._page_named), Asked(finder._link_named)
    [s] = rows = [Suggestion(source["url"], fields["url"], 1.0)]
    add_anchors(crawl, rows, finder)
    assert s.anchor == ""  # "model fields" stands inside the how-to's name
    assert asked and ("custom", "model") in asked
    assert all(key[0] not in STOPWORDS and key[-1] not in STOPWORDS for key in asked)
    assert all(len(key) <= MAX_WORDS for key in asked)


def test_a_name_links_give_a_page_stands_around_anchors_for_that_set_of_links_only():
    """"custom model fields" is the how-to's name only while three links call it that: with them, the
    words in it are not the field reference's anchor; a finder for the same pages without those links
    takes them, and shares the pages' own names with the first finder instead of copying them."""
    text = "Removing custom model fields breaks old migrations.\nModel fields map columns to attributes."
    source = prose(text, url=url("/s/"), title="S")
    fields = Page(url=url("/ref/fields/"), title="Model fields", text="x")
    custom = Page(url=url("/howto/c/"), title="Howto C", text="y")
    users = [Page(url=url(f"/u{i}/"), title="U", text="See custom model fields.") for i in range(3)]
    linked = Crawl(pages=[source, fields, custom, *users],
                   links=[Link(u.url, custom.url, "custom model fields") for u in users])
    unlinked = Crawl(pages=linked.pages, links=[])
    finder = AnchorFinder(linked)
    other = finder.with_links(unlinked)
    for crawl, chosen, expected in ((linked, finder, 1), (unlinked, other, 0), (linked, finder, 1)):
        [row] = rows = [Suggestion(source.url, fields.url, 1.0)]
        add_anchors(crawl, rows, chosen)
        assert row.context == text.split("\n")[expected]
    assert other._page_named is finder._page_named and not other._link_named


def test_an_anchor_records_how_often_the_site_links_its_words():
    """link_probability: (pages linking the words + 1) / (pages whose running text holds them + 1);
    plain_words: every word in a dictionary, or a lower-case member name in code."""
    target = page(url("/ref/tags/"), "Template tags | Docs", "x")
    users = [page(url(f"/u{i}/"), "U", f"Write a template tag {i} here.") for i in range(20)]
    links = [link(users[0]["url"], target["url"], "template tag")]
    source = page(url("/s/"), "S", "A template tag renders the URLconf name.")
    conf = page(url("/urls/"), "URLconf | Docs", "x")
    crawl = build_crawl([source, target, conf, *users], links, [])
    [s, c] = _anchor(crawl, source["url"], [target["url"], conf["url"]])
    assert s.anchor == "template tag" and c.anchor == "URLconf"
    assert s.parts["phrase_pages"] == 21 and s.parts["link_probability"] == pytest.approx(2 / 22, abs=1e-6)
    assert (s.parts["plain_words"], c.parts["plain_words"]) == (1.0, 0.0)
    text = "Call save() and then QuerySet.update() later."
    code = ((5, 11), (21, 38))
    member = Page(url=url("/m/"), title="M", text=text, blocks=(Block("paragraph", text, code=code),))
    instances = Page(url=url("/instances/"), title="Model instance reference", text="x")
    querysets = Page(url=url("/querysets/"), title="QuerySet API", text="x")
    uses = [Page(url=url(f"/o{i}/"), title="O", text="save() QuerySet.update()") for i in range(3)]
    named = [Link(o.url, instances.url, "save()") for o in uses] + [
        Link(o.url, querysets.url, "QuerySet.update()") for o in uses]
    crawl = Crawl(pages=[member, instances, querysets, *uses], links=named)
    [m, q] = _anchor(crawl, member.url, [instances.url, querysets.url])
    assert (m.anchor, m.parts["plain_words"]) == ("save()", 1.0)
    assert (q.anchor, q.parts["plain_words"]) == ("QuerySet.update()", 0.0)


@pytest.mark.parametrize(("sentence", "anchor"), [
    ("Cold air stales bread within a day.", ""),  # the verb: not the page's name
    ("Stale breads of every kind make good crumbs.", "Stale breads"),  # the last word may take a plural
    ("Settings files hold every value.", "Settings files"),  # the title writes "settings" so
])
def test_only_the_last_word_of_a_name_takes_a_plural_its_names_do_not_write(sentence, anchor):
    source = page(url("/s/"), "S", sentence)
    crumbs = page(url("/crumbs/"), "Crumbs from stale bread | Blog", "x")
    settings = page(url("/settings/"), "Django settings file | Docs", "x")
    crawl = build_crawl([source, crumbs, settings], [], [])
    rows = _anchor(crawl, source["url"], [crumbs["url"], settings["url"]])
    assert [s.anchor for s in rows if s.anchor] == ([anchor] if anchor else [])


def test_a_member_knows_the_classes_its_target_documents_it_under():
    """``get_object()`` inside a ``class …SingleObjectMixin`` entry and ``Model.save()`` written with its
    class are members of those classes; the row says whether its paragraph names one of them."""
    target = Page(url=url("/mixins/"), title="Single object mixins", text="x", blocks=(
        Block("term", "class django.views.generic.detail.SingleObjectMixin", code=((6, 51),)),
        Block("definition", "get_object(queryset=None)", code=((0, 10),)),
        Block("definition", "Returns the single object.", code=()),
        Block("term", "reverse(viewname)", code=((0, 7),)),
        Block("term", "Model.save(force_insert=False)", code=((0, 6), (6, 10))),
    ))
    finder = AnchorFinder(Crawl(pages=[target], links=[]))
    assert finder.owners(target) == {"get_object": {"SingleObjectMixin"}, "save": {"Model"}}

    def member_row(text: str) -> Suggestion:
        at = text.index("get_object()")
        source = Page(url=url("/s/"), title="Feeds", text=text,
                      blocks=(Block("paragraph", text, code=((at, at + 12),)),))
        users = [Page(url=url(f"/u{i}/"), title="U", text="get_object()") for i in range(3)]
        links = [Link(u.url, target.url, "get_object()") for u in users]
        [s] = _anchor(Crawl(pages=[source, target, *users], links=links), source.url, [target.url])
        assert s.anchor == "get_object()"
        return s

    feed = member_row("The feed's get_object() method returns the category.")
    assert (feed.parts["class_member"], feed.parts["class_named"]) == (1.0, 0.0)
    mixin = member_row("SingleObjectMixin calls get_object() to find the object.")
    assert (mixin.parts["class_member"], mixin.parts["class_named"]) == (1.0, 1.0)


def test_pages_linking_each_anchor_text_are_counted_alike_from_columns_and_objects():
    from postprocess.stages.anchors import _linking_pages
    from postprocess.stages.links import LinkTable

    links = [Link("a", "t", "Template tags"), Link("a", "t", "template tag"), Link("b", "t", "template tag"),
             Link("b", "u", "the"), Link("c", "t", "template tag", position="nav"), Link("c", "u", "URLconf")]
    counted = _linking_pages(links)
    assert counted == {("template", "tag"): 2, ("the",): 1, ("urlconf",): 1}
    assert _linking_pages(LinkTable.from_links(links)) == counted


def test_anchor_counts_and_spellings_are_alike_from_columns_and_objects():
    """The link table counts each distinct (anchor, target) once with its number of links: the same
    counts, in the same order, and the same spellings as a loop over every link."""
    from postprocess.stages.anchors import anchor_counts
    from postprocess.stages.links import LinkTable

    links = [Link("a", "t", "Template tags"), Link("a", "t", "template tag"), Link("b", "t", "template tag"),
             Link("b", "u", "URLconf"), Link("c", "t", "template tag", position="nav"),
             Link("c", "u", "URLconf"), Link("u", "u", "URLconf"), Link("b", "t", "the"),
             Link("a", "u", "template  tag")]
    table = LinkTable.from_links(links)
    uses, per_target = anchor_counts(links)
    assert uses == {("template", "tag"): 4, ("urlconf",): 2}
    assert per_target == {"t": {("template", "tag"): 3}, "u": {("urlconf",): 2, ("template", "tag"): 1}}
    table_uses, table_per_target = anchor_counts(table)
    assert list(table_uses.items()) == list(uses.items())
    assert [(t, list(c.items())) for t, c in table_per_target.items()] == [
        (t, list(c.items())) for t, c in per_target.items()]
    pages = [Page(url=u, title=u, text="x", kind="content") for u in "abctu"]
    by_rows = AnchorFinder(Crawl(pages=pages, links=links))
    by_columns = AnchorFinder(Crawl(pages=pages, links=table))
    assert by_rows.spellings == by_columns.spellings
    assert by_columns.spellings["u"] == {"URLconf", "template tag"}
    assert by_rows.link_names == by_columns.link_names


def test_the_finders_passes_over_every_page_count_alike_in_two_processes(monkeypatch):
    """Proper nouns, the pages each word and name stands on: counted in chunks shared by two
    processes, the same as in one."""
    from postprocess import background
    from postprocess.stages import anchors

    pages = [page(url(f"/p{i}"), f"Moka pot {i}", f"The Moka pot and Chemex brew {i}. A kettle helps Chemex. "
                  f"Use the moka pot daily.") for i in range(40)]
    crawl = build_crawl(pages, [], [])
    one = AnchorFinder(crawl)
    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(anchors, "in_chunks", _counting_chunks(anchors.in_chunks))
    two = AnchorFinder(crawl, workers=2)
    assert _counting_chunks.calls == 2  # proper nouns, then words and names on the pages
    assert two.proper == one.proper and "chemex" in two.proper
    assert two.word_pages == one.word_pages and two.word_pages["kettle"] == 40
    assert two.occurrences == one.occurrences


def test_the_finders_counts_are_the_same_in_batches_of_a_few_pages(monkeypatch):
    """Proper nouns and the pages per word and per name, counted a batch of pages at a time (the
    words seen so far kept as ids from batch to batch): the same as in one batch."""
    from postprocess.stages import anchors

    pages = [page(url(f"/p{i}"), f"Moka pot {i}", f"The Moka pot and Chemex brew {i}. A kettle helps Chemex. "
                  f"Use the moka pot{' daily' * (i % 3)}. Ask Hario {i % 4}.") for i in range(20)]
    crawl = build_crawl(pages, [], [])
    one = AnchorFinder(crawl)
    monkeypatch.setattr(anchors, "PROSE_BATCH_PAGES", 3)
    batched = AnchorFinder(crawl)
    assert batched.proper == one.proper and {"chemex", "hario"} <= batched.proper
    assert batched.word_pages == one.word_pages and batched.word_pages["daily"] == 13
    assert batched.occurrences == one.occurrences and batched.occurrences[("moka", "pot")] == 20


def test_a_phrase_the_finder_is_given_twice_counts_its_pages_once():
    """The finder hands the phrase count one list of the phrases its sources give (link names, name
    parts, terms; no set of them all is made): a phrase in it twice counts its pages once."""
    from postprocess.stages.anchors import _prose_counts

    pages = [page(url(f"/p{i}"), f"Moka pot {i}", f"The Moka pot and Chemex brew {i}. A Hario kettle.")
             for i in range(6)]
    crawl = build_crawl(pages, [], [])
    keys = [("moka", "pot"), ("chemex",), ("hario", "kettle"), ("aeropress",)]
    words_once, once = _prose_counts(crawl, keys)
    words_twice, twice = _prose_counts(crawl, [*keys, ("chemex",), ("moka", "pot"), ("chemex",)])
    assert twice == once and words_twice == words_once
    assert twice[("moka", "pot")] == 6 and twice[("chemex",)] == 6 and ("aeropress",) not in twice


def test_a_phrase_counts_on_a_page_only_inside_one_prose_block():
    """The pages a possible name stands on: a page's prose blocks are scanned as one text with a
    break between blocks, so a paragraph ending "French" and the next starting "Press" do not make
    "French press"; a NUL character inside a block is a space, not that break."""
    pages = [page(url("/french-press"), "French press", "Coarse grounds and a plunger."),
             page(url("/a"), "Brewing at home", "Brew with a French\nPress the plunger slowly."),
             page(url("/b"), "Rinsing kit", "Rinse the French press daily."),
             page(url("/c"), "Cleaning kit", "Clean the French\x00press weekly.")]
    finder = AnchorFinder(build_crawl(pages, [], []))
    assert finder.occurrences[("french", "press")] == 2  # /b and /c
    assert finder.word_pages["press"] == 3 and finder.word_pages["french"] == 3


def _counting_chunks(real):  # noqa: ANN001, ANN202 - in_chunks, counted, with chunks of 3 pages
    _counting_chunks.calls = 0

    def counted(work, items, fork=True, chunk=None):  # noqa: ANN001, ANN202
        _counting_chunks.calls += 1
        return real(work, items, fork, chunk=3)

    return counted


def test_name_owners_read_a_page_s_url_or_the_set_of_pages_sharing_a_name():
    """The pages' own names in a table: a name one page gives (twice or once) reads as its URL, a
    name two pages give as the set of both, a name no page gives as nothing."""
    urls = ["https://x/moka", "https://x/chemex", "https://x/moka-care"]
    names = [("moka", "pot"), ("moka", "pot"), ("chemex",), ("moka", "pot"), ("care",)]
    owners = NameOwners(phrase_hashes(names), np.array([0, 0, 1, 2, 2], dtype=np.int32), urls)
    assert owners.get(("chemex",)) == "https://x/chemex" and owners.get(("care",)) == "https://x/moka-care"
    assert owners.get(("moka", "pot")) == frozenset({"https://x/moka", "https://x/moka-care"})
    assert owners.get(("moka",)) is None and ("moka",) not in owners and ("chemex",) in owners
    assert len(owners) == 3


def test_the_finder_holds_the_pages_names_and_the_phrases_counts_as_tables_of_hashes():
    """What the finder keeps a page (its names' owners, the pages each phrase stands on) is held as
    hashes (~16-32 bytes a phrase), and reads as the dicts it replaced did."""
    pages = [page(url(f"/moka-{i}"), f"Moka pot recipe {i}", f"Brew the Moka pot recipe {i} on a low flame.")
             for i in range(30)] + [page(url("/chemex"), "Chemex", "The Chemex filters slowly.")]
    finder = AnchorFinder(build_crawl(pages, [], []))
    assert finder._page_named.get(("chemex",)) == url("/chemex")
    assert finder._page_named.get(("moka", "pot", "recipe", "3")) == url("/moka-3")
    assert finder._page_named.get(("moka", "pot")) is None  # a part 30 titles carry: no page's name
    assert finder.occurrences.get(("moka", "pot", "recipe", "3")) == 1
    assert finder.occurrences.get(("chemex",)) == 1
    assert isinstance(finder.occurrences, PhraseTable)
    assert finder._page_named.nbytes <= 32 * len(finder._page_named)
    assert finder.occurrences.nbytes <= 32 * len(finder.occurrences)


@pytest.mark.parametrize("text", [
    "Call save() or Model.save(), not f (), ()() or count()s.\n\nÉté’s naïve café() — ok!  Next",
    "()", "() ()", "", "word", "a.b.c() end.", "x() y()\n\n\nz()?", "a.b. c!\n\n?x .\n", "?", "...  ",
    "a?\tb\r\nc. d!\u00a0e",
])
def test_a_sources_words_and_sentences_stand_where_the_text_has_them(text):
    """The words, their spans and the sentence ends, made from a split's lengths, are where a scan
    of the text finds them: a call's brackets are dropped from its word and its span, brackets that
    follow no word are no word, and a text of brackets alone has none."""
    src = source_text(prose(text, url="u"))
    found = list(WORD.finditer(src.text))
    assert src.raw == [bare(m.group()) for m in found]
    assert src.spans == [(m.start(), m.end() - (2 if m.group().endswith("()") else 0)) for m in found]
    assert src.bounds == [m.end() for m in SENTENCE_END.finditer(src.text)]
    assert [src.text[a:b] for a, b in src.spans] == src.raw


def test_the_pass_over_every_pages_words_leaves_the_normal_forms_cache_as_it_was():
    """The finder's count of words and phrases over every page keeps its own map of the words it
    normalised (``Vocabulary``): it never fills ``normalise``'s cache with the site's whole vocabulary
    (228k words at 100k synthetic pages, held by the main process through the run)."""
    from postprocess.stages.anchors import _prose_counts

    pages = [page(url(f"/p{i}"), f"Moka pot {i}", f"The Moka pot {i} and word{i}x brew. A Hario kettle.")
             for i in range(6)]
    crawl = build_crawl(pages, [], [])
    normalise.cache_clear()
    word_pages, found = _prose_counts(crawl, [("moka", "pot"), ("kettle",)])
    assert normalise.cache_info().currsize == 0
    assert word_pages["word3x"] == 1 and word_pages["kettle"] == 6 and found[("moka", "pot")] == 6


def test_asking_whether_a_phrase_can_be_a_name_keeps_nothing():
    """``_nameable`` is asked about every part of every title and slug: it holds none of them (an
    LRU cache of them held ~60 MB at 100k pages, more misses than hits)."""
    import tracemalloc

    from postprocess.stages.anchors import _nameable

    keys = [(f"grinder{i}", "burr") for i in range(20_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert all(map(_nameable, keys))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 50_000, held
    assert not _nameable(("the", "guide")) and not _nameable(("of", "the")) and not _nameable(())
    assert not _nameable(tuple("abcdefg")) and _nameable(("the", "burr", "grinder"))


def test_the_targets_names_share_one_rank_a_value():
    """Every target's names are kept through the anchoring: names of the same evidence and length hold
    one float, not one each."""
    finder = AnchorFinder(build_crawl(SITE, SITE_LINKS, []))
    names = [name for row in SITE for name in finder.names(finder.pages[row["url"]])]
    assert len(names) > len({(n.evidence, len(n.words)) for n in names})
    assert len({id(n.rank) for n in names}) == len({(n.evidence, len(n.words)) for n in names})
    assert all(n.rank == EVIDENCE_ORDER[n.evidence] + len(n.words) / 10 for n in names)


def test_a_targets_names_are_kept_as_one_string_and_read_back_the_same():
    """The names kept for every target through the anchoring are one string a target (a forked process
    reading them copies a page of them, not the ~11 names, tuples and words of ~1.8 KB): read back,
    they are the names made, surest first."""
    finder = AnchorFinder(build_crawl(SITE, SITE_LINKS, []))
    made = {row["url"]: finder.names(finder.pages[row["url"]]) for row in SITE}
    assert any(made.values())
    for target, names in made.items():
        assert isinstance(finder._names[target], str)
        again = finder.names(finder.pages[target])
        assert again == names and [n.rank for n in again] == [n.rank for n in names]
        assert all(a is not b for a, b in zip(again, names, strict=True)) or not names
        firsts = {n.words[0] for n in names[::2]}  # a source that writes the first word of every other name
        assert finder.names(finder.pages[target], firsts) == [n for n in names if n.words[0] in firsts]


def test_names_with_a_separator_in_a_word_are_kept_as_they_are():
    from postprocess.stages.anchors import Name, _packed, _unpacked

    odd = [Name(("a\x00b",), "link", 5.1)]
    assert _packed(odd) is odd and _unpacked(_packed(odd)) == odd and _unpacked(odd, {"b"}) == []
    plain = [Name(("query", "set"), "title", 4.2), Name(("set",), "part", 2.1)]
    assert isinstance(_packed(plain), str) and _unpacked(_packed(plain)) == plain
    assert _unpacked(_packed([])) == []


def _words_as_the_tokeniser_splits(text: str
                                   ) -> tuple[list[str], list[tuple[int, int]], dict[str, list[int]]]:
    """A text's words (a call without its brackets), their spans and each normal form's positions,
    made word by word with the tokeniser's pattern."""
    found = list(WORD.finditer(text))
    raw = [bare(m.group()) for m in found]
    positions: dict[str, list[int]] = {}
    for k, word in enumerate(raw):
        positions.setdefault(normalise(word), []).append(k)
    return raw, [(m.start(), m.start() + len(w)) for m, w in zip(found, raw, strict=True)], positions


def test_sources_made_together_have_each_its_own_words_forms_and_positions():
    """Running texts made in one batch (one scan of all their texts) are each the page's own: its words,
    spans, normal forms, and the positions of each form in that page alone, as the tokeniser splits
    the page by itself; a word of one page never runs into the next."""
    texts = ["Queries and a query: QUERY’s set.\nCall save() or Model.save(), not f ().",
             "", "()", "queries\nMore queries — naïve café() ok. Models, models!",
             "end-\n-start x() y()\n\n\nz()?", "Été’s queries"]
    pages = [prose(text, url=f"u{k}") for k, text in enumerate(texts)]
    made = source_texts(pages, [None] * len(pages))
    for page_, src in zip(pages, made, strict=True):
        raw, spans, positions = _words_as_the_tokeniser_splits(src.text)
        assert src.text == "\n".join(line for line in page_.text.split("\n") if line.strip())
        assert src.raw == raw and src.spans == spans
        assert src.norms == [normalise(word) for word in raw]
        assert dict(src.positions.items()) == positions
        assert all(src.positions[form] == at for form, at in positions.items())
        assert src.sentence_of == [sum(end <= a for end in src.bounds) for a, _ in spans]


@pytest.mark.parametrize("kept", [0, 3, 1 << 16])
def test_forms_kept_from_earlier_batches_are_the_forms_of_later_ones(monkeypatch, kept):
    """A process keeps the normal forms it has made (``FORMS_KEPT`` of them) for later batches: texts
    made after others — the kept table empty, full after three forms, or roomy — have the forms the
    tokeniser gives their words, each form's positions their own; the table never outgrows its room."""
    from postprocess.stages import anchors

    monkeypatch.setattr(anchors, "FORMS_KEPT", kept)
    monkeypatch.setattr(anchors, "_forms_kept", {})
    texts = ["Queries and a query: QUERY’s set.", "More queries — naïve café() ok. Models, models!",
             "Été’s queries and models", "a SET of Naïve Cafés"]
    first = source_texts([prose(texts[0], url="a"), prose(texts[1], url="b")], [None, None])
    later = [source_texts([prose(text, url=f"u{k}")], [None])[0] for k, text in enumerate(texts)]
    assert len(anchors._forms_kept) <= kept and bool(anchors._forms_kept) == bool(kept)
    for src in [*first, *later]:
        raw, _, positions = _words_as_the_tokeniser_splits(src.text)
        assert src.norms == [normalise(word) for word in raw]
        assert dict(src.positions.items()) == positions


def test_a_form_the_scan_hashes_two_ways_is_one_form_with_all_its_positions(monkeypatch):
    """Should the scan give one normal form two hashes, its words are still one form, every position
    of it found (not the positions of one hash alone)."""
    from postprocess.stages import anchors
    from postprocess.stages.word_scan import Scan

    real = anchors.scan_texts

    def two_hashes(texts, *args, **kwargs):  # noqa: ANN001, ANN202
        joined, found, counts = real(texts, *args, **kwargs)
        forms = found.forms.copy()
        forms[0] ^= np.uint64(1)  # the first word ("Queries") hashed apart from "query"
        return joined, Scan(found.starts, found.ends, forms), counts

    monkeypatch.setattr(anchors, "scan_texts", two_hashes)
    src = source_texts([prose("Queries and a query, queries.", url="u")], [None])[0]
    assert src.positions["query"] == [0, 3, 4]
    assert src.norms == ["query", "and", "a", "query", "query"]
    assert len(src.positions) == 3


def test_sources_made_together_each_know_whether_they_write_a_reference_word():
    """A numbered reference ("Section 38.16.3") is looked for only in a source that writes section,
    chapter, appendix or part (any case, a plural too); each source of a batch knows whether it does,
    and its word positions (made when first asked for) are still its own."""
    texts = ["See Sections 2 and 3.", "In chapter 5.", "Appendix A.", "PART II", "A partial view.", "",
             "Nothing here.", "", "", "Part one."]
    made = source_texts([prose(text, url=f"u{k}") for k, text in enumerate(texts)], [None] * len(texts))
    assert [src.writes_reference for src in made] == [True, True, True, True, False, False, False, False,
                                                      False, True]
    assert made[0].positions["section"] == [1] and "part" not in made[4].positions
