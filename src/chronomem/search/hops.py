"""Multi-hop over a graph built without a model: turns → the names and keywords they mention → other turns.

A question like "Where did Caroline move from 4 years ago?" is answered by two turns in different
sessions: one that matches it ("I've known these friends for 4 years, since I moved from my home
country") and one that only the first leads to ("a gift from my grandma in my home country,
Sweden"). No single search of the question finds the second; a hop from the first does.

The graph needs no LLM. Its nodes are what rules find in a message: **names** (capitalised words)
and **keywords** (content words of four letters or more that are not function words or chat
filler); its edges are mentions, message ↔ node, so two messages are neighbours when they mention
the same node (co-occurrence in turns). The store's full-text index already is that graph's
adjacency list — a word's posting list is the set of messages mentioning it, weighted by how rare
the word is (BM25's idf) — so a hop is one full-text query per seed, over the seed's nodes.

What a hop leaves out, and why:

- words of the question: the question's own search already ranks by them; the hop is for what
  the question does *not* say;
- speakers' names: every turn of a conversation is spoken by one of two people, so a speaker is a
  hub, not a bridge (the speaker signal handles "what does Melanie …");
- seeds that are not messages: a document (a whole session, a pasted page) mentions everything.

:func:`mentions` finds a text's nodes; :func:`hop_queries` turns the seeds into one query each;
:func:`fuse_hops` merges their hits, the best seed's first, leaving the seeds themselves out (they
are already ranked). The searcher (``SearchConfig.hop_boost``, episodes) runs the queries and
fuses the result into the scope's ranking like any other signal.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from chronomem.domain import Episode, EpisodeKind
from chronomem.search.rerank import rrf
from chronomem.search.signals import conversation_key

__all__ = ["MAX_NODES_PER_SEED", "fuse_hops", "hop_queries", "hop_seeds", "keep_hops", "mentions"]

MAX_NODES_PER_SEED = 16  # a long message bridges through its first nodes, not through every word

_WORD = re.compile(r"[^\W\d_][^\W_]*(?:'[^\W_]+)?")
# Function words and the filler of chat ("really", "awesome", "thanks"): they join every turn to
# every other, so they are no evidence that two turns speak of the same thing.
_STOP_WORDS = """
    about above after again against also although always another anything anyway around away back
    because been before being below between both cannot could couldn does doing done down during
    each either else enough even ever every everything from further getting going gonna good great
    have having here hers herself himself however into itself just keep know knew last later least
    less like little lot lots made make makes making many maybe more most much must myself need
    never next nice none nothing okay once only other ours ourselves over really same seem seems
    should since some something sometimes soon still such sure take than thank thanks that their
    theirs them themselves then there these they thing things think this those though through
    thought time times today together told tomorrow too totally under until upon very want wanted
    wants well were what whatever when where whether which while whom whose will with within
    without would wow yeah year years yesterday your yours yourself yourselves amazing awesome
    cool glad happy hear hey hope love loved lovely sounds super wonderful incredible fantastic
    feel feeling felt wish wishes look looks looking looked mean means meant tell telling yes
"""
_STOP = frozenset(_STOP_WORDS.split())


def mentions(text: str, *, exclude: Collection[str] = ()) -> list[str]:
    """The graph nodes a text mentions, casefolded, in order of first mention: names (capitalised
    words) and keywords (content words of four letters or more), minus function words, filler and
    ``exclude`` (casefolded words: the question's, the speakers')."""
    nodes: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group().split("'")[0]
        folded = word.casefold()
        if folded in _STOP or folded in exclude or _stem(folded) in exclude:
            continue
        if len(word) >= 4 or (len(word) >= 2 and word[0].isupper() and not _opens_sentence(text, match.start())):
            nodes.setdefault(folded, None)
    return list(nodes)


def _stem(word: str) -> str:
    """A crude English stem ("moved", "moving", "moves" → "mov"): enough to tell that a seed's
    word is one the question already says in another form."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _opens_sentence(text: str, start: int) -> bool:
    """A capital opening a sentence ("It", "We") says nothing of a name; one inside ("with Jo") does."""
    before = text[:start].rstrip(" \t\"'(")
    return not before or before[-1] in ".!?\n:"


def hop_seeds(ranked: Sequence[Episode], count: int) -> list[Episode]:
    """The first ``count`` messages of a ranking: the turns to hop from."""
    return [e for e in ranked if e.kind is EpisodeKind.MESSAGE][:count]


def hop_queries(seeds: Sequence[Episode], query: str, speakers: Collection[str]) -> list[str]:
    """One full-text query per seed: its nodes the question does not already name, speakers left
    out. A seed with no such node gives an empty query (nothing to hop through)."""
    exclude = {form for w in _WORD.findall(query) for form in (w.casefold(), _stem(w.casefold()))}
    exclude |= {part.casefold() for speaker in speakers for part in _WORD.findall(speaker)}
    return [" ".join(mentions(seed.text, exclude=exclude)[:MAX_NODES_PER_SEED]) for seed in seeds]


def keep_hops(hopped: Sequence[str], episodes: Mapping[str, Episode], seeds: Sequence[Episode]) -> list[str]:
    """The hops worth adding: turns of *other* conversations than the seeds' — the conversation
    signal already lifts a strong hit's neighbours. (Keeping only the turns of a speaker the
    question names was measured too, on locomo10 at weight 0.5: recall@10 −0.4, temporal −1.5.)"""
    near = {conversation_key(seed) for seed in seeds}
    return [i for i in hopped if conversation_key(episodes[i]) not in near]


def fuse_hops(per_seed: Sequence[Sequence[str]], seeds: Collection[str], *, k: float = 60.0) -> list[str]:
    """The hits of every seed's hop in one ranking, by RRF with the n-th seed at weight 1/n (the
    best seed's neighbours first); the seeds themselves are left out."""
    rankings = [[i for i in hits if i not in seeds] for hits in per_seed]
    weights = [1.0 / (n + 1) for n in range(len(rankings))]
    return [i for i, _ in rrf(rankings, k=k, weights=weights)]
