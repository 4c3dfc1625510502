"""The one error type of postprocess: bad input, reported as one line with exit status 2."""

from __future__ import annotations

EXIT_INPUT_ERROR = 2
PREFIX = "linkspider postprocess: error: "


class InputError(Exception):
    """Bad input (crawl, options, model): the message is one line naming the problem."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
