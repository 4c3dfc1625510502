"""What every method the evaluation compares returns: per source page, its targets best first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Ranked:
    """One suggestion of a method: the target, its score and the proposed anchor."""

    target_url: str
    score: float
    anchor: str = ""


#: A method's output: for each source page, its suggestions best first.
Rankings = Mapping[str, Sequence[Ranked]]
