"""The anchor insertion into a post's stored markup (postprocess.apps.wordpress.markup), on tricky markup."""

from __future__ import annotations

import pytest

from postprocess.apps.wordpress.markup import insert_link

TARGET = "http://127.0.0.1:8080/2024/01/starter/"
A = f'<a href="{TARGET}">'


def para(html: str) -> str:
    """A paragraph block as the block editor stores it."""
    return f"<!-- wp:paragraph -->\n<p>{html}</p>\n<!-- /wp:paragraph -->"


def linked(raw: str, anchor: str, context: str | None = None) -> str:
    result = insert_link(raw, anchor, TARGET, context)
    assert result.linked, result.reason
    # Nothing but the two inserted tags changed: take them out and the markup is byte-identical.
    assert result.content.count(A) == raw.count(A) + 1
    start = result.content.index(A, result.start)
    end = result.content.index("</a>", start + len(A) + result.end - result.start)
    assert result.content[:start] + result.content[start + len(A):end] + result.content[end + 4:] == raw
    return result.content


def skipped(raw: str, anchor: str, context: str | None = None) -> str:
    result = insert_link(raw, anchor, TARGET, context)
    assert not result.linked
    assert result.content == raw
    return result.reason


def test_plain_paragraph_block_keeps_every_other_byte():
    raw = para("Feed the sourdough starter daily.") + "\n\n" + para("More text.")
    assert linked(raw, "sourdough starter") == raw.replace(
        "the sourdough starter", f"the {A}sourdough starter</a>")


def test_classic_post_top_level_text_is_running_text():
    raw = "First paragraph about bread.\n\nKeep your sourdough starter warm."
    assert linked(raw, "sourdough starter").endswith(f"Keep your {A}sourdough starter</a> warm.")


@pytest.mark.parametrize("raw, where", [
    (para('My <a href="/x/">sourdough starter</a> guide.'), "inside a link"),
    ("<!-- wp:heading -->\n<h2>Sourdough starter</h2>\n<!-- /wp:heading -->", "in a heading"),
    ('<!-- wp:code -->\n<pre class="wp-block-code"><code>sourdough starter = 1</code></pre>\n'
     "<!-- /wp:code -->", "in a code block"),
    ("<pre>feed the sourdough starter</pre>", "in a code block"),
    (para("[note]keep the sourdough starter warm[/note]"), "in a shortcode"),
    (para('[recipe name="sourdough starter"]'), "in a shortcode"),
    ("<figure><img src=x.jpg><figcaption>A sourdough starter</figcaption></figure>", "in a caption"),
    ("<table><tr><td>sourdough starter</td></tr></table>", "outside running text"),
])
def test_excluded_places(raw, where):
    assert skipped(raw, "sourdough starter") == f"anchor only {where}"


def test_block_comment_attributes_are_not_text():
    raw = ('<!-- wp:paragraph {"placeholder":"sourdough starter"} -->\n<p>Nothing here.</p>\n'
           "<!-- /wp:paragraph -->")
    assert skipped(raw, "sourdough starter") == "anchor not in the post"


def test_html_attributes_and_urls_are_not_text():
    raw = para('See <img alt="sourdough starter" src="/sourdough-starter.jpg"> and '
               '<span title="sourdough starter">it</span>.')
    assert skipped(raw, "sourdough starter") == "anchor not in the post"
    assert skipped(para("Go to example.com/sourdough now."), "sourdough") == "anchor not in the post"
    assert skipped(para("The file sourdough.py is here."), "sourdough") == "anchor not in the post"


def test_part_of_a_longer_word_is_not_an_anchor():
    assert skipped(para("Sourdoughs and starters."), "sourdough") == "anchor not in the post"
    assert skipped(para("A presourdough era."), "sourdough") == "anchor not in the post"
    assert skipped(para("my_sourdough_starter"), "sourdough") == "anchor not in the post"


def test_case_differs_and_the_text_keeps_its_own_case():
    assert f"{A}Sourdough Starter</a>" in linked(para("Sourdough Starter basics."), "sourdough starter")


def test_whitespace_entities_and_typographic_quotes():
    assert f"{A}sourdough&nbsp;starter</a>" in linked(para("My sourdough&nbsp;starter."), "sourdough starter")
    assert f"{A}sourdough\nstarter</a>" in linked(para("My sourdough\nstarter."), "sourdough starter")
    assert f"{A}Ben &amp; Jerry's starter</a>" in linked(para("Ask Ben &amp; Jerry's starter."),
                                                        "Ben & Jerry\u2019s starter")


def test_first_occurrence_in_running_text_wins():
    raw = ("<h2>sourdough starter</h2>\n" + para("First sourdough starter here.") + "\n"
           + para("Second sourdough starter there."))
    assert linked(raw, "sourdough starter").count(A) == 1
    assert f"First {A}sourdough starter</a>" in linked(raw, "sourdough starter")


def test_the_context_sentence_is_preferred():
    raw = para("A sourdough starter is alive. Feed the sourdough starter flour and water.")
    out = linked(raw, "sourdough starter", context="Feed the sourdough starter flour and water.")
    assert f"Feed the {A}sourdough starter</a> flour" in out
    # A context the post no longer holds: the first occurrence.
    out = linked(raw, "sourdough starter", context="A sentence that is gone.")
    assert f"A {A}sourdough starter</a> is alive" in out


def test_list_items_and_quotes_are_running_text():
    raw = '<!-- wp:list -->\n<ul><li>Water</li><li>A sourdough starter</li></ul>\n<!-- /wp:list -->'
    assert f"<li>A {A}sourdough starter</a></li>" in linked(raw, "sourdough starter")
    raw = '<blockquote class="wp-block-quote"><p>Love your sourdough starter.</p><cite>Me</cite></blockquote>'
    assert f"your {A}sourdough starter</a>." in linked(raw, "sourdough starter")


def test_anchor_split_by_inline_markup_is_wrapped_whole_when_balanced():
    assert f"my {A}<em>sour</em>dough starter</a> daily" in linked(
        para("I feed my <em>sour</em>dough starter daily."), "sourdough starter")
    assert f"a {A}sourdough <strong>starter</strong></a> b" in linked(
        para("a sourdough <strong>starter</strong> b"), "sourdough starter")
    assert f"a {A}<strong>sourdough</strong> <em>starter</em></a> b" in linked(
        para("a <strong>sourdough</strong> <em>starter</em> b"), "sourdough starter")
    assert f"<em>a {A}sourdough starter</a></em>" in linked(para("<em>a sourdough starter</em>"),
                                                            "sourdough starter")


def test_anchor_split_unbalanced_is_reported():
    assert skipped(para("a <strong>big sourdough</strong> starter b"),
                   "sourdough starter") == "anchor split by markup"
    assert skipped(para("a sourdough<br>starter b"), "sourdough starter") == "anchor not in the post"


def test_words_never_join_across_blocks():
    raw = para("the sourdough") + "\n" + para("starter is here")
    assert skipped(raw, "sourdough starter") == "anchor not in the post"


def test_inline_code_only_as_a_whole():
    assert f"Use {A}<code>QuerySet</code></a> here" in linked(para("Use <code>QuerySet</code> here."),
                                                              "queryset")
    assert skipped(para("Use <code>QuerySet filter</code> here."),
                   "queryset") == "anchor only in inline code (part of it)"


def test_already_linked_to_the_target():
    raw = para(f'See <a href="{TARGET}">the guide</a> on sourdough starter.')
    assert skipped(raw, "sourdough starter") == "already linked"
    # Another spelling of the same page (no trailing slash, relative) counts too.
    raw = para('See <a href="/2024/01/starter">it</a> on sourdough starter.')
    assert insert_link(raw, "sourdough starter", TARGET, base="http://127.0.0.1:8080/x/").reason == \
        "already linked"


def test_a_second_insertion_changes_nothing():
    raw = para("Feed the sourdough starter.")
    once = linked(raw, "sourdough starter")
    assert insert_link(once, "sourdough starter", TARGET).content == once


def test_target_is_escaped_in_the_attribute():
    out = insert_link(para("sourdough starter"), "sourdough starter", 'http://h/?a=1&b="2"').content
    assert '<a href="http://h/?a=1&amp;b=&quot;2&quot;">sourdough starter</a>' in out


def test_missing_and_empty_anchor():
    assert skipped(para("Nothing to see."), "sourdough starter") == "anchor not in the post"
    assert skipped(para("Nothing to see."), "  ") == "anchor not in the post"


def test_script_and_style_content_is_not_text():
    raw = "<script>var a = 'sourdough starter';</script><style>/* sourdough starter */</style>"
    assert skipped(raw, "sourdough starter") == "anchor not in the post"
