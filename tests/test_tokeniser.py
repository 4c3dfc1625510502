"""One tokeniser for the lexical evidence and the anchors: the same words, compared in two forms."""

from __future__ import annotations

import pytest

from postprocess.stages.anchors import source_text
from postprocess.stages.lexical import scan_page_names
from postprocess.stages.load import Block, Page
from postprocess.stages.tokeniser import (
    NORMAL_FORMS_KEPT,
    bare,
    folded,
    normal_form,
    normalise,
    spaced,
    terms,
    words,
)

TEXTS = [
    "Use count() on a QuerySet, then call Model.save().",
    "We’re told the built-in e-mail backend isn't many-to-many; see django.db.models.Model.",
    "Django 3.2’s release notes. End of sentence. Next",
    "Rock ’n’ roll, O'Reilly's books - and a dash -- or two.",
    "",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use count() on a QuerySet.", ["use", "count()", "on", "a", "queryset"]),
        ("see django.db.models.Model", ["see", "django.db.models.model"]),
        ("end of sentence. Next", ["end", "of", "sentence", "next"]),
        ("the built-in e-mail backend", ["the", "built-in", "e-mail", "backend"]),
        ("We’re told it isn't", ["we're", "told", "it", "isn't"]),
        ("Django 3.2 - and -- more", ["django", "3.2", "and", "more"]),
        ("", []),
    ],
)
def test_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_words_are_the_terms_normalised() -> None:
    assert words("Making Queries about built-in Models’ fields") == [
        "making", "query", "about", "built-in", "model", "field"]
    assert words("Call save() or Model.save()") == ["call", "save", "or", "model.save"]
    assert words(None) == []


@pytest.mark.parametrize("text", TEXTS)
def test_the_lexical_evidence_and_the_anchors_read_the_same_words(text: str) -> None:
    """Every word the anchor search can wrap is a term the lexical evidence counts, in the same order
    (a call as its name: the anchor search adds its "()" back where the markup makes it code)."""
    page = Page(url="u", text=text, blocks=(Block("paragraph", text),) if text else ())
    assert [folded(word) for word in source_text(page).raw] == list(map(bare, terms(text)))


def test_a_name_is_not_found_inside_a_longer_word() -> None:
    """A name is mentioned only where it stands as whole words the anchor search could wrap: not
    inside a contraction ("we're" is not the ``re`` module) or a hyphenated word ("e-mail" is not
    the mail page)."""
    names = [("re",), ("mail",), ("built-in",), ("count()",)]
    found = scan_page_names(names, ["We're sure the e-mail is built-in: count() it.", "import re; mail it"])
    assert [dict(found[page]) for page in range(2)] == [{("built-in",): 1, ("count()",): 1},
                                                         {("re",): 1, ("mail",): 1}]


def test_a_word_in_its_normal_form_is_its_own_normal_form() -> None:
    """A word already normal comes back as itself (a cache or a name holds one string, not two)."""
    word = "".join(["mod", "el"])
    assert normal_form(word) is word
    assert normal_form("Models") == "model" and normal_form("queries") == "query"
    assert normal_form("save()") == "save" and normal_form("class") == "class"


def test_the_normal_forms_kept_are_bounded() -> None:
    """``normalise`` keeps the forms of its most recently used words, never a whole site's vocabulary:
    four times as many distinct words hold no more than one times as many do."""
    import tracemalloc

    def held(count: int) -> int:
        normalise.cache_clear()
        fresh = [f"w{i}x" for i in range(count)]
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            list(map(normalise, fresh))
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
            normalise.cache_clear()

    assert held(4 * NORMAL_FORMS_KEPT) < 1.5 * held(NORMAL_FORMS_KEPT)


def test_a_phrase_spaced_already_is_kept_as_it_is() -> None:
    """``spaced`` gives back the phrase itself when its words are one space apart (names and
    spellings held for every page share the page's string), else a spaced copy."""
    phrase = "".join(["Espresso ", "guide"])
    assert spaced(phrase) is phrase
    assert spaced("  Espresso\n guide ") == "Espresso guide"
