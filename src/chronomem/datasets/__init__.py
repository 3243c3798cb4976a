"""The conversational-memory benchmarks: each one's reader and its one mapping to episodes.

- ``locomo``: LoCoMo (``load_locomo``; ``locomo_episodes``: one group per conversation, one
  episode per turn);
- ``longmemeval``: LongMemEval (``load_longmemeval``; ``lme_episodes``: one group per question,
  one episode per user turn of its haystack, long turns in pieces);
- ``common``: plain or gzipped JSON, and a session as one text document.

``chronomem import --format locomo|longmemeval`` (:mod:`chronomem.app.conversation_import`) and the retrieval
evaluation (:mod:`chronomem.eval`) build their episodes here, so an imported benchmark holds the
episodes the published recall figures were measured on. This package sits low in the layers: it
imports only the domain, ``timeutil`` and ``errors``.
"""

from chronomem.datasets.common import read_json, session_document
from chronomem.datasets.locomo import (
    CATEGORY_NAMES,
    LOCOMO_PREFIX,
    LocomoQuestion,
    LocomoSample,
    LocomoTurn,
    clean_evidence,
    load_locomo,
    locomo_episodes,
    locomo_group,
    parse_locomo_date,
)
from chronomem.datasets.longmemeval import (
    LME_PREFIX,
    LmeQuestion,
    LmeSession,
    LmeTurn,
    lme_episodes,
    lme_group,
    load_longmemeval,
    parse_lme_date,
)

__all__ = [
    "CATEGORY_NAMES",
    "LME_PREFIX",
    "LOCOMO_PREFIX",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "LocomoQuestion",
    "LocomoSample",
    "LocomoTurn",
    "clean_evidence",
    "lme_episodes",
    "lme_group",
    "load_locomo",
    "load_longmemeval",
    "locomo_episodes",
    "locomo_group",
    "parse_lme_date",
    "parse_locomo_date",
    "read_json",
    "session_document",
]
