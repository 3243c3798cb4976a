"""Messages that only ask: a question tells nothing, its answer does.

In a conversation a turn like "Wow, what a great day! What was your favourite part?" is worded much
like the questions put to memory ("What was Melanie's favourite part of the trip?"), so cosine and
BM25 rank it high, yet it holds no fact: the answer, if any, is the *next* turn. Measured on
locomo10 with LoCoMo's default config (``bench/eval_hops.py`` prints it as ``asking_rule_*``): the
rule below flags 514 of the 5,882 turns (8.7%), which hold 21 of the 2,360 evidence slots (0.9%)
but 14% of the top-10 slots — a flagged turn is about ten times less likely to be evidence than
another.

The rule, no model: the message ends with a question mark, and none of its sentences is a
statement — a sentence not ending in "?" that mentions at least two names or keywords (the nodes of
:func:`chronomem.search.hops.mentions`; "Wow, that's cool, Caroline!" mentions one, filler does not
count). A message sharing a photo (``[shares a photo of …]``) tells what the photo shows.

:func:`asking_last` reorders a fused ranking: the asking messages follow everything else, in their
order (``SearchConfig.asking_last``). Their answers need no help: the reply signal already lifts
the message that answers a top hit. (Also giving each asking message's place to its reply was
measured, on locomo10 recall@10: +1.0 against +1.4 for moving the question alone.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from chronomem.domain import Episode, EpisodeKind
from chronomem.search.hops import mentions

__all__ = ["asking_last", "only_asks"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLOSERS = "\"')”’ "
_TELLS = 2  # names and keywords a sentence needs to count as a statement


def only_asks(text: str) -> bool:
    """Does the message only ask (see the module docstring's rule)?"""
    stripped = text.strip().rstrip(_CLOSERS)
    if not stripped.endswith("?"):
        return False
    for sentence in _SENTENCE_END.split(stripped):
        if not sentence.rstrip(_CLOSERS).endswith("?") and len(mentions(sentence)) >= _TELLS:
            return False
    return True


def _asks(episode: Episode) -> bool:
    return episode.kind is EpisodeKind.MESSAGE and only_asks(episode.content)


def asking_last(fused: Sequence[tuple[str, float]], episodes: Mapping[str, Episode]) -> list[tuple[str, float]]:
    """``fused`` with every message that only asks moved behind the others, each group in its
    order. Scores stay with the places, so the ranking's scores still fall."""
    asking = {episode_id for episode_id, _ in fused if _asks(episodes[episode_id])}
    order = [i for i, _ in fused if i not in asking] + [i for i, _ in fused if i in asking]
    return [(episode_id, score) for episode_id, (_, score) in zip(order, fused, strict=True)]
