"""Canonical URLs and the parameter/pagination policy: pure functions, no Scrapy.

INTERFACE STUB — to be implemented (see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class UrlPolicy:
    """Site-specific URL rules, built from the LINKSPIDER_* settings."""

    keep_params: frozenset[str] = frozenset()  # query parameters that make a distinct page
    tracking_params: frozenset[str] = frozenset()  # extra parameters to strip
    pagination_patterns: tuple[str, ...] = field(default_factory=tuple)  # extra regexes
    trailing_slash: str = "add"  # add | strip | keep


DEFAULT_POLICY = UrlPolicy()


def canonical_url(url: str, policy: UrlPolicy = DEFAULT_POLICY) -> str:
    """The page identity of ``url`` (absolute http(s) URL in, canonical URL out)."""
    raise NotImplementedError


def skip_reason(url: str, policy: UrlPolicy = DEFAULT_POLICY) -> str | None:
    """'pagination' or 'parameter' when ``url`` (canonical) must not be fetched, else None."""
    raise NotImplementedError


def same_origin(a: str, b: str) -> bool:
    """True when both URLs share scheme, host and port (after canonicalisation)."""
    raise NotImplementedError


def in_scope(url: str, start: str, scope: str = "host") -> bool:
    """True when ``url`` is on the start URL's origin ('host') or under its path ('path')."""
    raise NotImplementedError
