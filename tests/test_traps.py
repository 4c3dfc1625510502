"""RepeatingPatterns: a numbered URL pattern that only repeats one page becomes a trap."""

from __future__ import annotations

import pytest

from linkspider.traps import RepeatingPatterns, text_shape, url_pattern


@pytest.mark.parametrize(("url", "pattern"), [
    ("https://x.test/calendar/2026/11/", "/calendar/N/N/"),
    ("https://x.test/releases/1.4.19.html", "/releases/N.N.N.html"),
    ("https://x.test/guides/espresso/", None),
])
def test_url_pattern(url, pattern):
    assert url_pattern(url) == pattern


def test_text_shape_ignores_numbers_and_calendar_words_only():
    assert text_shape("No events in November 2026.") == text_shape("no events in  March 1999.")
    assert text_shape("Tuesday 3 June") == text_shape("Friday 21 May")
    assert text_shape("No events in November 2026.") != text_shape("Two events in November 2026.")


def month(n: int) -> str:
    return f"https://x.test/calendar/2026/{n:02d}/"


def test_a_calendar_that_repeats_itself_is_a_trap_after_the_limit():
    patterns = RepeatingPatterns(pages=5)
    names = ["January", "February", "March", "April"]
    for n in range(1, 5):
        patterns.observe(month(n), f"No events in {names[n - 1]} 2026.")
        patterns.spawned(month(n), month(n + 1))  # each month links to the next
        assert patterns.reason(month(n + 1)) is None
    patterns.observe(month(5), "No events in May 2026.")
    assert "'/calendar/N/N/' keeps giving the same page (5 pages)" == patterns.reason(month(6))
    assert patterns.reason("https://x.test/guides/espresso/") is None


def test_numbered_pages_that_read_the_same_but_are_listed_elsewhere_are_no_trap():
    """Timetables, product pages: numbered pages with the same text, found from a listing page,
    do not feed their own pattern."""
    patterns = RepeatingPatterns(pages=5)
    for n in range(40):
        patterns.spawned("https://x.test/stops/", f"https://x.test/stops/{n}/")
        patterns.observe(f"https://x.test/stops/{n}/", f"Stop {n}: buses at 08:{n:02d} and 09:{n:02d}.")
    assert patterns.reason("https://x.test/stops/41/") is None


def test_numbered_pages_that_differ_are_never_a_trap():
    patterns = RepeatingPatterns(pages=5)
    for n in range(50):
        patterns.observe(f"https://x.test/releases/1.{n}.html", f"Django 1.{n} fixes bug {n} in {'orm ' * n}")
    assert patterns.reason("https://x.test/releases/1.99.html") is None
    off = RepeatingPatterns(pages=0)
    for n in range(50):
        off.observe(month(n % 12 + 1), "No events.")
    assert off.reason(month(1)) is None
