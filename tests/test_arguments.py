"""Spider arguments: strings in, a validated CrawlArguments or a one-line ArgumentError out."""

from __future__ import annotations

import pytest

from linkspider.arguments import ArgumentError, CrawlArguments, parse_arguments


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"start": "https://example.com/"},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "off", None),
        ),
        (
            {"start": " http://example.com:8080/docs/ ", "out": "runs/a", "max_pages": "25"},
            CrawlArguments("http://example.com:8080/docs/", "runs/a", 25, "host", "off", None),
        ),
        (
            {"start": "HTTPS://Example.com", "scope": "PATH", "render": "1", "job": "nightly-1"},
            CrawlArguments("HTTPS://Example.com", "data/crawl", 0, "path", "all", "nightly-1"),
        ),
        (
            {"start": "https://example.com/", "_job": "6487ec79947edab326d6db28a2d86511"},
            CrawlArguments(
                "https://example.com/", "data/crawl", 0, "host", "off", "6487ec79947edab326d6db28a2d86511"
            ),
        ),
        (
            {"start": "https://example.com/", "job": "mine", "_job": "scrapyd"},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "off", "mine"),
        ),
        (
            {"start": "https://example.com/", "render": "false", "max_pages": "0"},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "off", None),
        ),
        (
            {"start": "https://example.com/", "render": " Auto "},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "auto", None),
        ),
        (
            {"start": "https://example.com/", "render": "off"},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "off", None),
        ),
        (
            {"start": "https://example.com/", "incremental": "1"},
            CrawlArguments("https://example.com/", "data/crawl", 0, "host", "off", None, incremental=True),
        ),
    ],
)
def test_valid_arguments(args: dict[str, str], expected: CrawlArguments) -> None:
    assert parse_arguments(args) == expected


def test_defaults_come_from_settings() -> None:
    got = parse_arguments(
        {"start": "https://example.com/"},
        default_out="/srv/crawl",
        default_max_pages=100,
        default_scope="path",
        default_render=True,
    )
    assert got == CrawlArguments("https://example.com/", "/srv/crawl", 100, "path", "all", None)
    assert parse_arguments({"start": "https://example.com/"}, default_render="auto").render == "auto"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing start URL"),
        ({"start": "  "}, "missing start URL"),
        ({"start": "example.com"}, "must be http or https"),
        ({"start": "ftp://example.com/"}, "must be http or https"),
        ({"start": "http:///path"}, "has no host"),
        ({"start": "http://example.com:99999/"}, "invalid port"),
        ({"start": "https://example.com/", "max_pages": "ten"}, "max_pages must be a whole number"),
        ({"start": "https://example.com/", "max_pages": "-5"}, "max_pages must be a whole number"),
        ({"start": "https://example.com/", "max_pages": "1.5"}, "max_pages must be a whole number"),
        ({"start": "https://example.com/", "scope": "domain"}, "scope must be one of host, path"),
        ({"start": "https://example.com/", "render": "maybe"}, "render must be 0, 1 or auto"),
        ({"start": "https://example.com/", "incremental": "often"}, "incremental must be 0 or 1"),
        ({"start": "https://example.com/", "out": ""}, "out must name a directory"),
        ({"start": "https://example.com/", "job": "../etc"}, "job must be"),
        ({"start": "https://example.com/", "strat": "x"}, "unknown argument 'strat'"),
        ({"start": "https://example.com/\nsecond line"}, "must not contain spaces or line breaks"),
    ],
)
def test_bad_arguments_give_one_line(args: dict[str, str], message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        parse_arguments(args)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_arguments_are_frozen() -> None:
    got = parse_arguments({"start": "https://example.com/"})
    with pytest.raises(AttributeError):
        got.start = "https://other.example/"  # type: ignore[misc]
