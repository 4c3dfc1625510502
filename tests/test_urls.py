"""Tables of cases for linkspider.urls."""

from __future__ import annotations

import pytest

from linkspider.urls import (
    UrlPolicy,
    canonical_url,
    in_scope,
    same_origin,
    scope_path,
    skip_reason,
    trap_reason,
)

CANONICAL = [
    # scheme, host, port, fragment
    ("HTTP://Example.COM/Path/", "http://example.com/Path/"),
    ("http://example.com", "http://example.com/"),
    ("http://example.com:80/a.html", "http://example.com/a.html"),
    ("https://example.com:443/a.html", "https://example.com/a.html"),
    ("http://example.com:443/a.html", "http://example.com:443/a.html"),
    ("https://example.com:80/a.html", "https://example.com:80/a.html"),
    ("http://127.0.0.1:8123/a.html", "http://127.0.0.1:8123/a.html"),
    ("http://example.com./a.html", "http://example.com/a.html"),
    ("http://example.com/a.html#section", "http://example.com/a.html"),
    ("http://example.com/#", "http://example.com/"),
    ("  http://example.com/a.html  ", "http://example.com/a.html"),
    ("http://[::1]:8080/a.html", "http://[::1]:8080/a.html"),
    ("http://[::1]:80/", "http://[::1]/"),
    ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ("http://user@Example.com/a.html", "http://user@example.com/a.html"),
    # path case kept, dot segments resolved
    ("http://example.com/Docs/Intro.HTML", "http://example.com/Docs/Intro.HTML"),
    ("http://example.com/a/./b/../c.html", "http://example.com/a/c.html"),
    ("http://example.com/a/b/..", "http://example.com/a/"),
    # percent-encoding
    ("http://example.com/%7euser/", "http://example.com/~user/"),
    ("http://example.com/a%2fb.html", "http://example.com/a%2Fb.html"),
    ("http://example.com/a b.html", "http://example.com/a%20b.html"),
    ("http://example.com/café.html", "http://example.com/caf%C3%A9.html"),
    ("http://example.com/caf%c3%a9.html", "http://example.com/caf%C3%A9.html"),
    ("http://example.com/100%.html", "http://example.com/100%25.html"),
    ("http://example.com/s?q=a%20b&x=%e2%82%ac", "http://example.com/s/?q=a%20b&x=%E2%82%AC"),
    ("http://example.com/s?q=a+b", "http://example.com/s/?q=a+b"),
    ("http://example.com/s?q=a%26b", "http://example.com/s/?q=a%26b"),
    # tracking parameters
    ("http://example.com/a.html?utm_source=x&utm_medium=y", "http://example.com/a.html"),
    ("http://example.com/a.html?UTM_Campaign=x", "http://example.com/a.html"),
    ("http://example.com/a.html?gclid=1&fbclid=2&msclkid=3", "http://example.com/a.html"),
    ("http://example.com/a.html?dclid=1&yclid=2&mc_cid=3&mc_eid=4", "http://example.com/a.html"),
    ("http://example.com/a.html?_ga=1&_hsenc=2&_hsmi=3", "http://example.com/a.html"),
    ("http://example.com/a.html?id=5&utm_source=x", "http://example.com/a.html?id=5"),
    ("http://example.com/a.html?ref=home", "http://example.com/a.html?ref=home"),
    # session ids
    ("http://example.com/a.html?jsessionid=ABC", "http://example.com/a.html"),
    ("http://example.com/a.html?PHPSESSID=abc&id=1", "http://example.com/a.html?id=1"),
    ("http://example.com/a.html?sid=1&sessionid=2", "http://example.com/a.html"),
    ("http://example.com/a.asp?ASPSESSIONIDQQGGGNCG=x", "http://example.com/a.asp"),
    ("http://example.com/a.html;jsessionid=ABC123", "http://example.com/a.html"),
    ("http://example.com/shop;jsessionid=ABC123?x=1", "http://example.com/shop/?x=1"),
    ("http://example.com/a;v=1.html", "http://example.com/a;v=1.html"),
    # index pages
    ("http://example.com/index.html", "http://example.com/"),
    ("http://example.com/docs/index.html", "http://example.com/docs/"),
    ("http://example.com/docs/index.htm", "http://example.com/docs/"),
    ("http://example.com/docs/INDEX.HTML", "http://example.com/docs/"),
    ("http://example.com/docs/index.php", "http://example.com/docs/index.php"),
    ("http://example.com/topics/auth/default.html", "http://example.com/topics/auth/default.html"),
    ("http://example.com/Default.aspx", "http://example.com/Default.aspx"),
    ("http://example.com/docs/index.html?x=1", "http://example.com/docs/?x=1"),
    ("http://example.com/docs/index.html#top", "http://example.com/docs/"),
    ("http://example.com/docs/myindex.html", "http://example.com/docs/myindex.html"),
    ("http://example.com/index.html/more", "http://example.com/index.html/more/"),
    # trailing slash (default 'add')
    ("http://example.com/topics", "http://example.com/topics/"),
    ("http://example.com/a/b.html", "http://example.com/a/b.html"),
    ("http://example.com/a/b/", "http://example.com/a/b/"),
    ("http://example.com/v1.2", "http://example.com/v1.2"),
    ("http://example.com/", "http://example.com/"),
    # query: sorted, empty parts and bare '?' removed
    ("http://example.com/a.html?b=2&a=1", "http://example.com/a.html?a=1&b=2"),
    ("http://example.com/a.html?", "http://example.com/a.html"),
    ("http://example.com/a.html?&&", "http://example.com/a.html"),
    ("http://example.com/a.html?a=1&&b=", "http://example.com/a.html?a=1&b="),
    ("http://example.com/a.html?flag", "http://example.com/a.html?flag"),
    ("http://example.com?x=1", "http://example.com/?x=1"),
    # not http(s): untouched
    ("mailto:someone@example.com", "mailto:someone@example.com"),
    ("ftp://example.com/a", "ftp://example.com/a"),
    ("/relative/path", "/relative/path"),
]


@pytest.mark.parametrize(("url", "expected"), CANONICAL)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


@pytest.mark.parametrize(("url", "expected"), CANONICAL)
def test_canonical_url_is_idempotent(url: str, expected: str) -> None:
    once = canonical_url(url)
    assert canonical_url(once) == once
    for slash in ("strip", "keep"):
        policy = UrlPolicy(trailing_slash=slash)
        once = canonical_url(url, policy)
        assert canonical_url(once, policy) == once


SLASH_POLICIES = [
    ("strip", "http://example.com/topics/", "http://example.com/topics"),
    ("strip", "http://example.com/topics", "http://example.com/topics"),
    ("strip", "http://example.com/", "http://example.com/"),
    ("strip", "http://example.com", "http://example.com/"),
    ("strip", "http://example.com/docs/index.html", "http://example.com/docs"),
    ("keep", "http://example.com/topics", "http://example.com/topics"),
    ("keep", "http://example.com/topics/", "http://example.com/topics/"),
    ("keep", "http://example.com/docs/index.html", "http://example.com/docs/"),
    ("add", "http://example.com/topics?x=1", "http://example.com/topics/?x=1"),
]


@pytest.mark.parametrize(("slash", "url", "expected"), SLASH_POLICIES)
def test_trailing_slash_policy(slash: str, url: str, expected: str) -> None:
    assert canonical_url(url, UrlPolicy(trailing_slash=slash)) == expected


POLICY_CASES = [
    (UrlPolicy(tracking_params=frozenset({"src"})), "http://e.com/a.html?src=x&id=1", "http://e.com/a.html?id=1"),
    (UrlPolicy(tracking_params=frozenset({"pk_*"})), "http://e.com/a.html?pk_campaign=x", "http://e.com/a.html"),
    (UrlPolicy(tracking_params=frozenset({"SRC"})), "http://e.com/a.html?src=x", "http://e.com/a.html"),
    (UrlPolicy(index_pages=frozenset()), "http://e.com/index.html", "http://e.com/index.html"),
]


@pytest.mark.parametrize(("policy", "url", "expected"), POLICY_CASES)
def test_canonical_url_with_policy(policy: UrlPolicy, url: str, expected: str) -> None:
    assert canonical_url(url, policy) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trailing_slash": "maybe"}, "trailing_slash must be one of"),
        ({"pagination_patterns": ("page(",)}, "bad pagination pattern"),
    ],
)
def test_bad_policy(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UrlPolicy(**kwargs)


SKIP = [
    ("http://e.com/", None),
    ("http://e.com/a.html", None),
    ("http://e.com/blog/page/2/", "pagination"),
    ("http://e.com/blog/page/2", "pagination"),
    ("http://e.com/blog/page/1/", "pagination"),
    ("http://e.com/page/10/", "pagination"),
    ("http://e.com/post/comment-page-2/", "pagination"),
    ("http://e.com/page/", None),
    ("http://e.com/page/about/", None),
    ("http://e.com/homepage/2/", None),
    ("http://e.com/page2/", None),
    ("http://e.com/blog/?page=3", "pagination"),
    ("http://e.com/blog/?page=1", "pagination"),
    ("http://e.com/blog/?PAGE=3", "pagination"),
    ("http://e.com/blog/?p=2", "pagination"),
    ("http://e.com/blog/?paged=2", "pagination"),
    ("http://e.com/blog/?pg=4", "pagination"),
    ("http://e.com/blog/?start=20", "pagination"),
    ("http://e.com/blog/?start=0", "pagination"),
    ("http://e.com/blog/?offset=40", "pagination"),
    ("http://e.com/blog/?page=3&sort=new", "pagination"),
    ("http://e.com/blog/?page=about", "parameter"),
    ("http://e.com/events/?start=2024-01-01", "parameter"),
    ("http://e.com/s/?q=shoes", "parameter"),
    ("http://e.com/a.html?id=5", "parameter"),
    ("http://e.com/a.html?flag", "parameter"),
    # tracking parameters never count, even on a URL that was not canonicalised
    ("http://e.com/a.html?utm_source=x", None),
    ("http://e.com/a.html?gclid=1&sid=2", None),
]


@pytest.mark.parametrize(("url", "expected"), SKIP)
def test_skip_reason(url: str, expected: str | None) -> None:
    assert skip_reason(url) == expected
    assert skip_reason(canonical_url(url)) == expected


KEEP = UrlPolicy(keep_params=frozenset({"lang", "Category"}), pagination_patterns=(r"/archive/\d{4}/",))
SKIP_WITH_POLICY = [
    ("http://e.com/a/?lang=fr", None),
    ("http://e.com/a/?category=x&lang=fr", None),
    ("http://e.com/a/?lang=fr&sort=new", "parameter"),
    ("http://e.com/a/?lang=fr&page=2", "pagination"),
    ("http://e.com/archive/2019/", "pagination"),
    ("http://e.com/archive/latest/", None),
]


@pytest.mark.parametrize(("url", "expected"), SKIP_WITH_POLICY)
def test_skip_reason_with_policy(url: str, expected: str | None) -> None:
    assert skip_reason(url, KEEP) == expected


SAME_ORIGIN = [
    ("http://e.com/a", "http://e.com/b/c", True),
    ("http://E.com/a", "http://e.com./b", True),
    ("http://e.com:80/a", "http://e.com/b", True),
    ("https://e.com:443/a", "https://e.com/b", True),
    ("http://e.com/a", "https://e.com/a", False),
    ("http://e.com/a", "http://www.e.com/a", False),
    ("http://e.com/a", "http://sub.e.com/a", False),
    ("http://127.0.0.1:8001/", "http://127.0.0.1:8002/", False),
    ("http://127.0.0.1:8001/", "http://127.0.0.1:8001/x.html", True),
    ("http://bücher.example/", "http://xn--bcher-kva.example/a", True),
    ("mailto:a@e.com", "http://e.com/", False),
    ("/relative", "/relative", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), SAME_ORIGIN)
def test_same_origin(a: str, b: str, expected: bool) -> None:
    assert same_origin(a, b) is expected
    assert same_origin(b, a) is expected


IN_SCOPE = [
    ("http://e.com/other/", "http://e.com/docs/", "host", True),
    ("http://e.com:8080/docs/", "http://e.com/docs/", "host", False),
    ("http://e.com/docs/a.html", "http://e.com/docs/", "path", True),
    ("http://e.com/docs/sub/b/", "http://e.com/docs/", "path", True),
    ("http://e.com/docs", "http://e.com/docs/", "path", True),
    ("http://e.com/docs/index.html", "http://e.com/docs/", "path", True),
    ("http://e.com/docsify/", "http://e.com/docs/", "path", False),
    ("http://e.com/other/", "http://e.com/docs/", "path", False),
    ("http://e.com/", "http://e.com/docs/", "path", False),
    ("http://e.com/docs/b.html", "http://e.com/docs/intro.html", "path", True),
    ("http://e.com/docs/b.html", "http://e.com/docs/index.html", "path", True),
    ("http://e.com/x.html", "http://e.com/", "path", True),
    ("http://other.com/docs/a.html", "http://e.com/docs/", "path", False),
    ("http://e.com:81/docs/a.html", "http://e.com/docs/", "path", False),
]


@pytest.mark.parametrize(("url", "start", "scope", "expected"), IN_SCOPE)
def test_in_scope(url: str, start: str, scope: str, expected: bool) -> None:
    assert in_scope(url, start, scope) is expected


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        ("http://e.com/docs/intro.html", "/docs/"),
        ("http://e.com/docs/", "/docs/"),
        ("http://e.com/docs", "/docs/"),
        ("http://e.com", "/"),
    ],
)
def test_scope_path(start: str, expected: str) -> None:
    assert scope_path(start) == expected


def test_in_scope_rejects_unknown_scope() -> None:
    with pytest.raises(ValueError, match="scope must be one of"):
        in_scope("http://e.com/", "http://e.com/", "domain")


@pytest.mark.parametrize(
    ("url", "trap"),
    [
        ("https://example.com/guides/espresso/", None),
        ("https://example.com/admin/admin/", None),  # twice in a row is a real path
        ("https://example.com/a/a/a/", "'a' repeats in the path"),
        ("https://example.com/loop/a/b/a/b/", "'a/b' repeats in the path"),
        ("https://example.com/docs/x/y/z/x/y/z/", "'x/y/z' repeats in the path"),
        ("https://example.com/a/b/c/a/b/d/", None),  # not back to back
        ("https://example.com/" + "s/" * 0 + "/".join(f"p{i}" for i in range(26)) + "/",
         "more than 25 path segments"),
        ("https://example.com/" + "x" * 401 + "/", "path longer than 400 characters"),
        ("https://example.com/search/?q=" + "y" * 301, "query string longer than 300 characters"),
    ],
)
def test_trap_reason(url: str, trap: str | None) -> None:
    assert trap_reason(url) == trap


def test_trap_limits_come_from_the_policy() -> None:
    strict = UrlPolicy(trap_repeats=2, trap_max_segments=3)
    assert trap_reason("https://example.com/admin/admin/", strict) == "'admin' repeats in the path"
    assert trap_reason("https://example.com/a/b/c/d/", strict) == "more than 3 path segments"
