"""A mapping read through another with a few keys changed: what a confidence fold, which hides a
share of a site's links, holds instead of a copy of each site-wide table those links change."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

Key = TypeVar("Key")
Value = TypeVar("Value")


class Changed(Mapping[Key, Value]):
    """``base`` with the keys of ``changed`` given their values there (a value None: the key is gone)."""

    def __init__(self, base: Mapping[Key, Value], changed: Mapping[Key, Value | None]) -> None:
        self._base, self._changed = base, changed

    @property
    def changed(self) -> frozenset[Key]:
        """The keys given another value here, or taken away."""
        return frozenset(self._changed)

    def __getitem__(self, key: Key) -> Value:
        if key in self._changed:
            value = self._changed[key]
            if value is None:
                raise KeyError(key)
            return value
        if key not in self._base:  # a defaultdict base is read, never added to
            raise KeyError(key)
        return self._base[key]

    def __contains__(self, key: object) -> bool:
        if key in self._changed:
            return self._changed[key] is not None  # type: ignore[index]
        return key in self._base

    def __iter__(self) -> Iterator[Key]:
        """The base's keys that are still there (a changed key cannot be new: see the callers)."""
        return (key for key in self._base if key in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)
