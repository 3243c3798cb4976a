"""Against a real llama.cpp server: the wire path, the negotiated structured-output mode, timeouts
and failure handling, as a user who runs their own server configures it (``llamacpp:…`` and a base
URL). The model is the packaged Qwen2.5-Coder-1.5B-Instruct; what it extracts is asserted in
``test_real_extraction.py``. Here every answer is either a validated object or a visible, retryable
failure with its reason; no HTTP call outlives the per-call timeout; a failed episode leaves nothing
but itself in the store.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from chronomem import Chronomem, Settings
from chronomem.communities.prompts import (
    SUMMARIZE_COMMUNITIES,
    CommunityDescription,
    CommunityDescriptions,
    CommunityDraft,
    MemberText,
    SummarizeCommunities,
)
from chronomem.crossencoder import LLMCrossEncoder
from chronomem.domain import EpisodeStatus
from chronomem.errors import IngestionError, ModelError, ModelTruncatedError
from chronomem.llm.base import Message, Prompt
from chronomem.llm.settings import LLMSettings, build_language_model
from chronomem.llm.structured import negotiation_for

pytestmark = pytest.mark.integration

MODEL = "qwen2.5-coder-1.5b"
TIMEOUT_S = 180.0  # a first call reads ~1,500 prompt tokens on two CPU threads
SLACK_S = 2.0  # cancelling a timed-out request and closing its connection


def settings_for(base_url: str) -> LLMSettings:
    """How a user points chronomem at a local llama.cpp server: environment variables only."""
    env = {
        "CHRONOMEM_LLM_MODEL": f"llamacpp:{MODEL}",
        "CHRONOMEM_LLAMACPP_BASE_URL": base_url,
        "CHRONOMEM_LLM_TIMEOUT_S": str(TIMEOUT_S),
    }
    return LLMSettings.from_env(env, max_attempts=2, initial_backoff_s=0.1)


def assert_negotiated_once(real_server) -> None:
    negotiation = negotiation_for(f"{real_server.base_url}/chat/completions#{MODEL}")
    assert negotiation.mode == "json_object_schema"
    assert len(negotiation.refusals) == 1 and negotiation.refusals[0].startswith("json_schema: HTTP 500")
    refused = [outcome for _, outcome in real_server.log.calls if "answered HTTP 500" in outcome]
    assert len(refused) == 1, real_server.log.calls  # the refusal cost one request, never a retry


def assert_within_timeout(real_server) -> None:
    assert real_server.log.calls
    assert real_server.log.longest_s <= TIMEOUT_S + SLACK_S, real_server.log.calls
    for seconds, outcome in real_server.log.calls:
        print(f"llamacpp_call_s: {seconds:.2f} ({outcome})")


async def test_a_whole_episode_is_extracted_or_fails_visibly_leaving_no_junk(real_server, tmp_path):
    settings = Settings(data_dir=tmp_path, embedder="hashing", llm=settings_for(real_server.base_url))
    text = "I started a new job at Acme in Berlin last week."
    async with await Chronomem.open(settings) as memory:
        try:
            result = await memory.add_episode(
                "alice", text, speaker="Alice", reference_time=datetime(2024, 5, 6, tzinfo=UTC)
            )
        except IngestionError as error:
            episodes = await memory.list_episodes("alice")
            assert len(episodes) == 1
            failed = episodes[0]
            assert failed.status is EpisodeStatus.FAILED
            assert failed.last_error and error.stage and error.stage in failed.last_error
            assert await memory.list_entities("alice") == [] and await memory.list_facts("alice") == []
            (queued,) = await memory.retry("alice", [failed.id])  # retryable
            assert queued.status is EpisodeStatus.PENDING
            print(f"llamacpp_episode: failed at {failed.last_error[:200]}")
        else:
            assert result.episode.status is EpisodeStatus.DONE
            entities = await memory.list_entities("alice")
            names = {entity.id: entity.name for entity in entities}
            assert all(name.strip() for name in names.values())
            for fact in await memory.list_facts("alice"):
                assert fact.source_id in names and fact.target_id in names and fact.fact.strip()
            print(f"llamacpp_episode: done, {len(entities)} entities, {len(result.facts_created)} facts")
    assert_negotiated_once(real_server)
    assert_within_timeout(real_server)


async def test_a_community_summary_is_a_validated_answer_or_a_visible_failure(real_server):
    llm = build_language_model(settings_for(real_server.base_url))
    members = (MemberText("Alice", "a software engineer at Acme"), MemberText("Acme", "a company in Berlin"))
    try:
        completion = await llm.complete(SUMMARIZE_COMMUNITIES, SummarizeCommunities((CommunityDraft("c1", members),)))
    except ModelError as error:
        assert str(error)  # the reason is in the message; the builder falls back to member names
        print(f"llamacpp_community: failed: {str(error)[:200]}")
    else:
        answer = completion.output
        assert isinstance(answer, CommunityDescriptions)
        assert all(isinstance(about, CommunityDescription) and about.summary.strip() for about in answer.communities)
        keys = [about.key for about in answer.communities]
        print(f"llamacpp_community: validated answer, keys {keys} (asked for c1)")
    finally:
        await llm.aclose()
    assert_negotiated_once(real_server)
    assert_within_timeout(real_server)


async def test_an_llm_cross_encoder_call_scores_every_passage_or_fails_visibly(real_server):
    llm = build_language_model(settings_for(real_server.base_url))
    passages = ["Alice works at Acme in Berlin.", "Bob likes green tea."]
    try:
        scores = await LLMCrossEncoder(llm).score("Where does Alice work?", passages)
    except ModelError as error:
        assert str(error)  # the reason is in the message
        print(f"llamacpp_rerank: failed: {str(error)[:200]}")
    else:
        assert len(scores) == len(passages) and all(0.0 <= s <= 1.0 for s in scores)
        print(f"llamacpp_rerank: scores {scores}")
    finally:
        await llm.aclose()
    assert_negotiated_once(real_server)
    assert_within_timeout(real_server)


class Person(BaseModel):
    name: str
    city: str


def _ask_person(_context: None) -> list[Message]:
    return [Message("user", "Alice lives in Berlin. Who is mentioned, and where do they live?")]


async def test_an_answer_cut_at_its_output_cap_is_a_truncation_error_not_a_parse(real_server):
    tiny = Prompt(name="person_tiny_cap", answer=Person, build=_ask_person, max_output_tokens=3)
    llm = build_language_model(settings_for(real_server.base_url))
    try:
        with pytest.raises(ModelTruncatedError, match=r"person_tiny_cap.*max_output_tokens=3"):
            await llm.complete(tiny, None)
    finally:
        await llm.aclose()
    assert_negotiated_once(real_server)
    assert [outcome for _, outcome in real_server.log.calls][1:] == ["ok"]  # truncation is not retried
    assert_within_timeout(real_server)
