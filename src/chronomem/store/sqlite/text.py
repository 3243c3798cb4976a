"""In-memory BM25, one inverted index per (group, scope), scored with numpy.

Why not FTS5's ``bm25()``: it calls its ranking function once per matching row, so a query with a
common word costs ~1.3 µs for each of tens of thousands of rows (130 ms at 100k facts, measured in
bench/store.py). Here each query word costs one vectorized pass over its posting list, whatever its
length. The scoring is FTS5's: BM25 with k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5))
floored at 1e-6, columns concatenated (entity name + summary, community name + summary).

Tokens are maximal runs of letters and digits after NFKD, diacritic removal and casefolding, so
``Café``, ``cafe`` and ``CAFÉ`` are one word and no query text is ever interpreted as an operator.
"""

from __future__ import annotations

import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable

import numpy as np

from chronomem.store.sqlite.ranking import RankedRows
from chronomem.text.words import ALPHANUMERIC

__all__ = ["TextIndex", "query_terms", "tokens"]

_MAX_TERMS = 64  # bounds the cost of a pasted essay used as a query
_K1, _B = 1.2, 0.75
_MIN_IDF = 1e-6


def tokens(text: str) -> list[str]:
    if text.isascii():  # the common case, without the per-character diacritic pass
        return ALPHANUMERIC.findall(text.lower())
    decomposed = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return ALPHANUMERIC.findall(folded)


def query_terms(query: str) -> list[str]:
    """Distinct words of a query, in order, at most 64."""
    return list(dict.fromkeys(tokens(query)))[:_MAX_TERMS]


class _Postings:
    """Rows holding a term and the term's frequency in each (append-only typed arrays)."""

    __slots__ = ("rows", "tfs")

    def __init__(self) -> None:
        self.rows = array("i")
        self.tfs = array("f")


class TextIndex(RankedRows):
    """Documents are appended as rows; an update or removal kills the old row, compaction drops them."""

    def __init__(self) -> None:
        super().__init__([])
        self._row_of: dict[str, int] = {}
        self._lengths = array("f")
        self._alive = array("b")  # 1 per live row: numpy masks dead rows out of posting lists
        self._postings: dict[str, _Postings] = {}
        self._alive_count = 0
        self._total_length = 0.0

    def __len__(self) -> int:
        return self._alive_count

    def memory_bytes(self) -> int:
        """Approximate: 8 bytes per posting, ~100 per distinct word, ~130 per document."""
        postings = sum(len(p.rows) for p in self._postings.values())
        return 8 * postings + 100 * len(self._postings) + 130 * len(self._ids)

    @classmethod
    def build(cls, documents: Iterable[tuple[str, str]]) -> TextIndex:
        """An index of (id, text) pairs with distinct ids, in one vectorized pass."""
        index = cls()
        vocabulary: dict[str, int] = {}
        word_ids: list[int] = []
        lengths: list[int] = []
        for row, (id_, text) in enumerate(documents):
            words = tokens(text)
            index._ids.append(id_)
            index._row_of[id_] = row
            lengths.append(len(words))
            word_ids.extend([vocabulary.setdefault(w, len(vocabulary)) for w in words])
        n_rows = len(lengths)
        if word_ids:
            rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
            # one key per (word, row): unique keys sorted by word then row, with term frequencies
            keys, tfs = np.unique(np.asarray(word_ids, dtype=np.int64) * max(n_rows, 1) + rows, return_counts=True)
            key_words, key_rows = np.divmod(keys, max(n_rows, 1))
            bounds = np.flatnonzero(np.diff(key_words)) + 1
            words_in_order = list(vocabulary)
            for start, stop in zip(np.r_[0, bounds], np.r_[bounds, len(keys)], strict=True):
                postings = index._postings[words_in_order[key_words[start]]] = _Postings()
                postings.rows.frombytes(key_rows[start:stop].astype(np.int32).tobytes())
                postings.tfs.frombytes(tfs[start:stop].astype(np.float32).tobytes())
        index._lengths.frombytes(np.asarray(lengths, dtype=np.float32).tobytes())
        index._alive.frombytes(bytes([1]) * n_rows)
        index._alive_count = n_rows
        index._total_length = float(sum(lengths))
        return index

    def upsert(self, id_: str, text: str) -> None:
        words = Counter(tokens(text))
        with self._lock:
            self._touch()
            self._kill(id_)
            row = len(self._ids)
            self._ids.append(id_)
            self._row_of[id_] = row
            length = float(sum(words.values()))
            self._lengths.append(length)
            self._alive.append(1)
            self._alive_count += 1
            self._total_length += length
            for word, count in words.items():
                postings = self._postings.get(word)
                if postings is None:
                    postings = self._postings[word] = _Postings()
                postings.rows.append(row)
                postings.tfs.append(count)

    def remove(self, id_: str) -> None:
        with self._lock:
            self._touch()
            self._kill(id_)
            if len(self._ids) > 1024 and self._alive_count < len(self._ids) // 2:
                self._compact()

    def _kill(self, id_: str) -> None:
        row = self._row_of.pop(id_, None)
        if row is not None:
            self._ids[row] = None
            self._alive[row] = 0
            self._alive_count -= 1
            self._total_length -= self._lengths[row]

    def _compact(self) -> None:
        alive = np.frombuffer(self._alive, dtype=np.int8).astype(bool)
        new_row = np.cumsum(alive, dtype=np.int64) - 1
        for word in list(self._postings):
            old = self._postings[word]
            rows = np.frombuffer(old.rows, dtype=np.int32)
            keep = alive[rows]
            if not keep.any():
                del self._postings[word]
                continue
            fresh = _Postings()
            fresh.rows.frombytes(new_row[rows[keep]].astype(np.int32).tobytes())
            fresh.tfs.frombytes(np.frombuffer(old.tfs, dtype=np.float32)[keep].tobytes())
            self._postings[word] = fresh
        live_ids = [i for i in self._ids if i is not None]
        self._ids = list(live_ids)
        self._row_of = {id_: row for row, id_ in enumerate(live_ids)}
        lengths = np.frombuffer(self._lengths, dtype=np.float32)[alive]
        self._lengths = array("f")
        self._lengths.frombytes(lengths.tobytes())
        self._alive = array("b", bytes([1]) * len(self._ids))

    def _scores(self, query: object) -> np.ndarray:
        terms = query if isinstance(query, list) else query_terms(str(query))
        scores = np.zeros(len(self._ids), dtype=np.float32)
        if not self._alive_count:
            return scores
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        alive = np.frombuffer(self._alive, dtype=np.int8).astype(bool) if self._has_dead() else None
        average = max(self._total_length / self._alive_count, 1e-9)
        for term in terms:
            postings = self._postings.get(term)
            if postings is None:
                continue
            rows = np.frombuffer(postings.rows, dtype=np.int32)
            tfs = np.frombuffer(postings.tfs, dtype=np.float32)
            if alive is not None:
                live = alive[rows]
                rows, tfs = rows[live], tfs[live]
            n = rows.shape[0]
            if n == 0:
                continue
            idf = max(float(np.log((self._alive_count - n + 0.5) / (n + 0.5))), _MIN_IDF)
            norm = _K1 * (1.0 - _B + _B * lengths[rows] / average)
            scores[rows] += (idf * tfs * (_K1 + 1.0) / (tfs + norm)).astype(np.float32)
        return scores

    def _has_dead(self) -> bool:
        return self._alive_count != len(self._ids)
