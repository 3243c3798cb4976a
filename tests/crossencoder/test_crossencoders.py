"""Cross-encoders: token overlap (test double), LLM-graded (batched), sentence-transformers (local)."""

from __future__ import annotations

import pytest

from chronomem.crossencoder.base import CrossEncoder
from chronomem.crossencoder.llm import LLMCrossEncoder, RerankContext
from chronomem.crossencoder.local import SentenceTransformersCrossEncoder
from chronomem.crossencoder.testing import TokenOverlapCrossEncoder
from chronomem.embed.local import packaged_minilm_path
from chronomem.errors import ConfigurationError, ModelOutputError
from chronomem.llm.testing import FunctionModel


async def test_token_overlap_scores_share_of_query_words():
    encoder = TokenOverlapCrossEncoder()
    assert isinstance(encoder, CrossEncoder)
    scores = await encoder.score("Where does Alice live", ["Alice lives in Paris", "where does alice live?", "Bob"])
    assert scores == [0.25, 1.0, 0.0]
    assert await encoder.score("", ["x"]) == [0.0]


def grade_by_overlap(prompt, context: RerankContext):
    """A model double that grades like the token-overlap encoder, on the 0–10 scale."""
    query = set(context.query.lower().split())
    return {"scores": [round(10 * len(query & set(p.lower().split())) / len(query)) for p in context.passages]}


async def test_llm_cross_encoder_grades_many_passages_in_one_call_per_batch():
    model = FunctionModel(grade_by_overlap)
    encoder = LLMCrossEncoder(model, batch_size=3)
    assert isinstance(encoder, CrossEncoder)
    passages = ["alice lives", "bob", "alice", "where alice lives", "nothing", "lives"]
    scores = await encoder.score("where alice lives", passages)
    assert scores == [0.7, 0.0, 0.3, 1.0, 0.0, 0.3]
    assert model.prompt_names == ["rerank_passages", "rerank_passages"]
    _, context = model.calls[0]
    assert context.passages == ("alice lives", "bob", "alice")
    assert await encoder.score("q", []) == []


async def test_llm_cross_encoder_skipping_a_passage_gets_corrected_then_fails_loudly():
    answers = iter([{"scores": [5]}, {"scores": [5, 6]}])
    model = FunctionModel(lambda p, c: next(answers))
    assert await LLMCrossEncoder(model).score("q", ["a", "b"]) == [0.5, 0.6]
    with pytest.raises(ModelOutputError):
        await LLMCrossEncoder(FunctionModel(lambda p, c: {"scores": [11]})).score("q", ["a"])


def test_local_cross_encoder_needs_an_existing_directory(tmp_path):
    encoder = SentenceTransformersCrossEncoder(tmp_path / "missing")
    with pytest.raises(ConfigurationError, match="does not exist"):
        encoder._loaded()


@pytest.mark.integration
async def test_local_cross_encoder_runs_the_real_code_path_from_a_local_directory():
    # No pretrained cross-encoder is available offline: MiniLM gets an untrained head, so only the
    # mechanics are checked here (shape, range, determinism), not the ranking.
    encoder = SentenceTransformersCrossEncoder(packaged_minilm_path())
    passages = ["Alice lives in Paris.", "Stocks fell.", "Paris is in France."]
    scores = await encoder.score("Where does Alice live?", passages)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert await encoder.score("Where does Alice live?", passages) == pytest.approx(scores)
    assert await encoder.score("q", []) == []
