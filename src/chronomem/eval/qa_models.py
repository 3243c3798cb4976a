"""The models the question-answering harness is given by name, shared by ``chronomem eval --qa``
and ``bench/eval_qa.py``."""

from __future__ import annotations

from chronomem.config.settings import Settings
from chronomem.llm.base import LanguageModel

__all__ = ["build_qa_model"]


def build_qa_model(spec: str | None, settings: Settings | None = None) -> LanguageModel | None:
    """``lexical`` (the offline stand-in reader and judge, not a model), ``heuristic`` (the ingestion
    stand-in, for ``--ingest-model``), ``local[:name]`` (the packaged model), a ``provider:model``
    spec, or ``None``: the model ``settings`` configure (``None`` when they configure none)."""
    from chronomem.heuristic import STAND_INS
    from chronomem.llm.settings import LLMSettings, build_language_model

    if spec == "lexical":
        from chronomem.eval.qa_standin import lexical_model

        return lexical_model()
    if spec is not None:
        return build_language_model(LLMSettings.from_env(model=spec), named=STAND_INS)
    settings = settings or Settings.from_env()
    if settings.llm is None:
        return None
    return build_language_model(settings.llm, named=STAND_INS)
