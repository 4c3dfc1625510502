"""A static model's text vectors with each distinct word of a batch tokenised once.

model2vec tokenises every text whole (its tokenizer's Rust, a step a token) and then averages
its tokens' rows; three quarters of a text's time was the tokenising (2,000 synthetic pages'
7,020 chunks: 4.2 of 5.9 CPU s). Texts repeat their words: each distinct word is tokenised once,
when first met (the words met are kept from batch to batch, ``KNOWN_WORDS`` at most), each text's
tokens are its words' tokens in order, gathered in NumPy, and the rows are averaged there. The
vectors are model2vec's, bit for bit (``tests/test_static_encoder.py``):

- A chunk is words joined by single spaces (``word_chunks``), and a WordPiece tokenizer behind a
  BERT normaliser and pre-tokeniser never makes a token across a space, so a text's tokens are
  its words' tokens, in order. A text that is not its words joined by single spaces (a title with
  a tab, a control character Python splits on and the normaliser deletes) is tokenised whole, as
  model2vec does. A tokenizer of another kind, or one with an added token holding a space, takes
  model2vec's own path for every text (``WordTokens.fits``).
- The mean is model2vec's: the texts of one token count together, the table's rows (float16 made
  float32 exactly, once) summed in float32 in the tokens' order, divided by the count, rounded to
  the table's dtype, then normalised by the same expression. model2vec sums float16 rows cast to
  float32 a buffer at a time, in the same order: 3–4× the time of float32 rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

#: Words whose tokens are kept from batch to batch (~25 MB with the dictionary): past it, all are let
#: go and the next batch's learnt again.
KNOWN_WORDS = 131_072


class WordTokens:
    """The text vectors of a model2vec ``StaticModel`` as ``model._encode_batch`` makes them."""

    def __init__(self, model: object) -> None:
        self.model = model
        #: the table's rows as float32 (a float16 table's rows exactly): summed without a cast a row
        self._rows = np.asarray(model.embedding, dtype=np.float32)  # type: ignore[attr-defined]
        self._forget()

    @staticmethod
    def fits(model: object) -> bool:
        """Whether ``model``'s vectors can be made a word at a time: a WordPiece tokenizer behind a
        BERT pre-tokeniser, no added token with a space, plain mean pooling of float rows."""
        try:
            tokenizer = model.tokenizer  # type: ignore[attr-defined]
            pre = type(tokenizer.pre_tokenizer).__name__
            kind = type(tokenizer.model).__name__
            added = tokenizer.get_added_tokens_decoder().values()
            plain = model.token_mapping is None and model.weights is None  # type: ignore[attr-defined]
            dtype = np.dtype(model.embedding.dtype)  # type: ignore[attr-defined]
        except AttributeError:
            return False
        return (pre == "BertPreTokenizer" and kind == "WordPiece" and plain
                and dtype in (np.float16, np.float32)
                and not any(any(c.isspace() for c in token.content) for token in added))

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """``model.encode(texts, max_length=None)``: one row a text, the table's dtype."""
        model = self.model
        table = model.embedding
        words = [text.split() for text in texts]
        whole = np.fromiter((" ".join(split) != text for text, split in zip(texts, words, strict=True)),
                            dtype=bool, count=len(texts))
        for i in np.flatnonzero(whole):
            words[i] = []
        tokens, counts, long = self._tokens(words)
        whole |= long
        out = np.zeros((len(texts), model.dim), dtype=table.dtype)
        starts = np.cumsum(counts) - counts
        rows = self._rows
        # as model2vec's mean: the texts of one token count together (those tokenised whole left out)
        for length, group in _by_count(np.where(whole, 0, counts)):
            sums = rows[tokens[starts[group][:, None] + np.arange(length)]].sum(axis=1)
            out[group] = (sums / np.float32(length)).astype(table.dtype)
        if model.normalize:
            out32 = out.astype(np.float32)
            norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
            out = (out32 / norm).astype(out.dtype)
        if whole.any():  # tokenised whole, as model2vec does
            at = np.flatnonzero(whole)
            out[at] = model.encode([texts[i] for i in at], max_length=None, use_multiprocessing=False)
        return out

    def _tokens(self, words: list[list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The texts' tokens one after another (int64) and each text's count, its words' tokens in
        order, the unknown token left out; and whether each text holds a word long enough that the
        tokenizer's length limit might cut its tokens short (one character can make up to three
        tokens: such a text is tokenised whole, without the limit). Only words not met before (or
        since the known words were last let go, ``KNOWN_WORDS``) go to the tokenizer."""
        number = self._number
        new = sorted(set(chain.from_iterable(words)).difference(number))
        if len(number) + len(new) > KNOWN_WORDS:  # let the known words go: a batch's are few
            self._forget()
            number = self._number
            new = sorted(set(chain.from_iterable(words)))
        if new:
            self._learn(new)
        occurrences = np.fromiter(map(number.__getitem__, chain.from_iterable(words)), dtype=np.int64,
                                  count=sum(map(len, words)))
        taken = self._length[occurrences]
        # each occurrence's tokens: its word's run of the known tokens
        offsets = np.repeat(self._first[occurrences] - (np.cumsum(taken) - taken), taken)
        tokens = self._flat[offsets + np.arange(len(offsets))]
        per_text = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        word_ends = np.cumsum(per_text)
        token_ends = np.concatenate([[0], np.cumsum(taken)])[word_ends]
        counts = np.diff(np.concatenate([[0], token_ends]))
        long = np.zeros(len(words), dtype=bool)
        too_long = self._long[occurrences]
        if too_long.any():
            long[np.repeat(np.arange(len(words)), per_text)[too_long]] = True
        return tokens, counts, long

    def _forget(self) -> None:
        """No word known: the next batch's go to the tokenizer."""
        self._number: dict[str, int] = {}
        self._flat = np.zeros(0, dtype=np.int64)  # the known words' tokens, one word after another
        self._first = np.zeros(0, dtype=np.int64)  # by word: where its tokens start in ``_flat``
        self._length = np.zeros(0, dtype=np.int64)  # by word: how many tokens it has
        self._long = np.zeros(0, dtype=bool)  # by word: whether the tokenizer's limit could cut it

    def _learn(self, new: list[str]) -> None:
        """``new`` words tokenised (one call) and known from now on."""
        per_word = self.model.tokenize(new)  # type: ignore[attr-defined]
        lengths = np.fromiter(map(len, per_word), dtype=np.int64, count=len(per_word))
        flat = np.fromiter(chain.from_iterable(per_word), dtype=np.int64, count=int(lengths.sum()))
        limit = self.model.max_length  # type: ignore[attr-defined]
        long = (np.fromiter((len(w) * 3 >= limit for w in new), dtype=bool, count=len(new))
                if limit is not None else np.zeros(len(new), dtype=bool))
        self._first = np.concatenate([self._first, len(self._flat) + np.cumsum(lengths) - lengths])
        self._length = np.concatenate([self._length, lengths])
        self._long = np.concatenate([self._long, long])
        self._flat = np.concatenate([self._flat, flat])
        self._number.update(zip(new, range(len(self._number), len(self._number) + len(new)), strict=True))


def _by_count(counts: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The texts with tokens grouped by their count (ascending), each group in text order."""
    texts = np.flatnonzero(counts)
    order = texts[np.argsort(counts[texts], kind="stable")]
    cuts = np.flatnonzero(np.diff(counts[order])) + 1
    return [(int(counts[group[0]]), group) for group in np.split(order, cuts) if len(group)]
