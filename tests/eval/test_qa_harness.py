"""The question-answering harness end to end on hand-made files, with scripted models; and the
answer_in_context figures of the retrieval harness."""

from __future__ import annotations

import json

import pytest

from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError
from chronomem.eval.harness import open_memory, run_eval
from chronomem.eval.qa import QaOptions, full_conversation, run_qa, select_questions
from chronomem.eval.qa_prompts import LME_JUDGE, READER, JudgeContext, ReaderAnswer, ReaderContext, Verdict
from chronomem.eval.qa_standin import lexical_model
from chronomem.llm.testing import FunctionModel
from dataset_samples import LME, LOCOMO


@pytest.fixture
def files(tmp_path):
    locomo, lme = tmp_path / "locomo.json", tmp_path / "lme.json"
    locomo.write_text(json.dumps(LOCOMO))
    lme.write_text(json.dumps(LME))
    return locomo, lme


def reader_and_judge():
    """A reader that answers "Biscuit" when its context names Biscuit, and a judge that checks the gold
    answer is in the response (abstention: that the response declines); both record what they saw."""
    seen: list[ReaderContext | JudgeContext] = []

    def answer(prompt, context):
        seen.append(context)
        if prompt.name == READER.name:
            return ReaderAnswer(answer="Biscuit" if "Biscuit" in context.context else "No information available")
        if context.rule == "abstention":
            return Verdict(correct="no information" in context.response.casefold())
        return Verdict(correct=context.gold.casefold() in context.response.casefold())

    return FunctionModel(answer, model_name="scripted-reader"), seen


async def test_questions_are_answered_from_memory_and_from_the_whole_conversation(files, tmp_path):
    model, seen = reader_and_judge()
    report = await run_qa(model, *files, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    m = report.metrics
    assert m["qa_questions"] == 4  # LoCoMo categories 1-4 (2) and both LongMemEval questions
    assert m["qa_full_context_questions"] == 4 and m["qa_full_context_skipped"] == 0
    readings = [c for c in seen if isinstance(c, ReaderContext)]
    memory = [c for c in readings if not c.full_conversation]
    whole = [c for c in readings if c.full_conversation]
    assert len(memory) == len(whole) == 4
    puppy = next(c for c in memory if c.question == "What is the puppy's name?")
    assert "FACTS and ENTITIES" in puppy.context and "I adopted a puppy named Biscuit!" in puppy.context
    assert puppy.asked_at == "02 July 2023, 09:15"  # the conversation's end: when LoCoMo's questions are asked
    assert any("Session 3 (02 July 2023, 09:15):" in c.context for c in whole)
    # graded by each benchmark's rule: LongMemEval's abstention rule for the _abs question
    rules = {c.question: c.rule for c in seen if isinstance(c, JudgeContext)}
    assert rules["What is my dog's name?"] == "default" and rules["?"] == "abstention"
    assert m["qa_accuracy_locomo_single_hop"] == 1.0 and m["qa_accuracy_locomo_multi_hop"] == 0.0
    assert m["qa_accuracy_lme_single_session_user"] == 1.0 and m["qa_accuracy_lme_abstention"] == 1.0
    assert m["qa_accuracy"] == 0.75 and m["qa_accuracy_full_context"] == 0.75
    assert m["locomo_f1_single_hop"] == 1.0
    assert m["qa_answer_in_context"] == 1.0 and m["qa_answer_in_context_questions"] == 3  # not the _abs one
    assert m["context_tokens_mean"] > 0 and m["latency_total_ms_p50"] >= m["latency_answer_ms_p50"]
    assert "qa_cost_usd" not in m  # no prices given
    assert "qa_accuracy: 0.7500" in list(report.lines())


async def test_a_rerun_reads_every_answer_and_verdict_from_the_cache(files, tmp_path):
    first, _ = reader_and_judge()
    before = await run_qa(first, *files, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    second, seen = reader_and_judge()
    after = await run_qa(second, *files, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    assert second.calls == [] and seen == []
    for name in ("qa_accuracy", "qa_accuracy_full_context", "context_tokens_mean", "latency_answer_ms_p50"):
        assert after.metrics[name] == before.metrics[name]
    third, _ = reader_and_judge()  # another budget is another config: answered again
    await run_qa(
        third,
        *files,
        embedder=HashingEmbedder(),
        cache_dir=tmp_path / "cache",
        options=QaOptions(token_budget=500, full_context=False),
    )
    assert len(third.calls) > 0
    oracle, seen = reader_and_judge()  # the oracle haystack is another conversation: answered again
    await run_qa(
        oracle,
        longmemeval=files[1],
        embedder=HashingEmbedder(),
        cache_dir=tmp_path / "cache",
        options=QaOptions(lme_oracle=True),
    )
    wholes = {c.question for c in seen if isinstance(c, ReaderContext) and c.full_conversation}
    assert wholes == {"What is my dog's name?", "?"}


async def test_conversations_past_the_window_are_not_answered_whole(files, tmp_path):
    model, seen = reader_and_judge()
    report = await run_qa(
        model,
        *files,
        embedder=HashingEmbedder(),
        cache_dir=tmp_path / "cache",
        options=QaOptions(context_window=420, prices=(1.0, 2.0)),
    )
    m = report.metrics
    assert m["qa_full_context_skipped"] >= 2 and m["qa_full_context_questions"] == 4 - m["qa_full_context_skipped"]
    assert not any(isinstance(c, ReaderContext) and c.full_conversation and len(c.context) > 400 for c in seen)
    assert m["qa_cost_usd"] > 0 and m["qa_context_window"] == 420
    wider, _ = reader_and_judge()  # a wider window on the same cache: the whole conversations are answered
    report = await run_qa(wider, *files, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    assert report.metrics["qa_full_context_questions"] == 4 and report.metrics["qa_full_context_skipped"] == 0


async def test_a_failed_answer_counts_as_wrong_and_is_asked_again_next_time(files, tmp_path):
    broken = FunctionModel(lambda prompt, context: "not json", model_name="scripted-reader")
    report = await run_qa(
        broken,
        *files,
        embedder=HashingEmbedder(),
        cache_dir=tmp_path / "cache",
        options=QaOptions(types=frozenset({"single_hop"}), full_context=False),
    )
    assert report.metrics["qa_errors"] == 1 and report.metrics["qa_accuracy"] == 0.0
    model, _ = reader_and_judge()
    report = await run_qa(
        model,
        *files,
        embedder=HashingEmbedder(),
        cache_dir=tmp_path / "cache",
        options=QaOptions(types=frozenset({"single_hop"}), full_context=False),
    )
    assert report.metrics["qa_errors"] == 0 and report.metrics["qa_accuracy"] == 1.0


def test_types_sample_limit_and_the_oracle_select_questions(files):
    locomo, lme = files
    assert [q.kind for q in select_questions(locomo, None, QaOptions(types=frozenset({"single_hop"})))] == [
        "single_hop"
    ]
    assert [q.category for q in select_questions(locomo, None, QaOptions(types=frozenset({"adversarial"})))] == [5]
    abstention = select_questions(None, lme, QaOptions(types=frozenset({"abstention"})))
    assert [q.question_id for q in abstention] == ["q2_abs"]
    both = select_questions(locomo, lme, QaOptions())
    draws = [select_questions(locomo, lme, QaOptions(sample=2, seed=seed)) for seed in (1, 1, 2, 3, 4)]
    assert draws[0] == draws[1] and all(len(d) == 2 and set(d) <= set(both) for d in draws)
    assert len({tuple(q.question_id for q in d) for d in draws}) > 1  # the seed decides
    assert len(select_questions(locomo, lme, QaOptions(limit=1))) == 1
    assert len(select_questions(locomo, lme, QaOptions(max_conversation_tokens=20))) == 1  # the empty haystack
    oracle = select_questions(None, lme, QaOptions(lme_oracle=True, types=frozenset({"single-session-user"})))
    assert "My dog is Biscuit." in full_conversation(oracle[0]) and "pasta" not in full_conversation(oracle[0])
    with pytest.raises(InvalidInputError, match="unknown question types"):
        select_questions(locomo, lme, QaOptions(types=frozenset({"trivia"})))


async def test_a_graph_extracted_by_an_ingestion_model_fills_the_context_block(files, tmp_path):
    from chronomem.heuristic import heuristic_model

    model, seen = reader_and_judge()
    await run_qa(
        model,
        files[0],
        embedder=HashingEmbedder(),
        cache_dir=None,
        ingest_model=heuristic_model(),
        options=QaOptions(types=frozenset({"single_hop"}), full_context=False),
    )
    (context,) = [c.context for c in seen if isinstance(c, ReaderContext)]
    facts = context.split("<FACTS>")[1].split("</FACTS>")[0]
    assert "Biscuit" in facts  # the heuristic stand-in's fact about the puppy, not only the raw turn


async def test_the_lexical_stand_in_runs_the_harness_without_a_model(files, tmp_path):
    report = await run_qa(lexical_model(), *files, embedder=HashingEmbedder(), cache_dir=None)
    assert report.metrics["qa_model"] == "lexical"
    assert report.metrics["qa_accuracy_lme_single_session_user"] == 1.0  # the line naming Biscuit


def test_judge_and_reader_instructions_are_a_static_prefix():
    one = LME_JUDGE.messages(JudgeContext("Q1?", "a", "b", "temporal"))
    two = LME_JUDGE.messages(JudgeContext("Q2?", "c", "d", "abstention"))
    assert one[0] == two[0] and one[1] != two[1]
    assert READER.messages(ReaderContext("Q?", "today", "x"))[0] == READER.messages(ReaderContext("R?", "then", "y"))[0]


async def test_retrieval_runs_report_answer_in_context_beside_bm25(files, tmp_path):
    report = await run_eval(*files, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    m = report.metrics
    assert m["locomo_answer_in_context_questions"] == 2 and m["lme_answer_in_context_questions"] == 1
    assert m["locomo_answer_in_context_single_hop"] == 1.0 and m["locomo_answer_in_context_single_hop_bm25"] == 1.0
    assert m["lme_answer_in_context"] == 1.0 and m["lme_answer_in_context_bm25"] == 1.0
    assert 0 < m["locomo_context_tokens_mean"] <= 2000 and 0 < m["locomo_context_tokens_mean_bm25"] <= 2000


async def test_the_retrieval_block_is_what_the_facade_returns(files, tmp_path):
    from chronomem.datasets.locomo import load_locomo, locomo_group
    from chronomem.eval.configs import EVAL_CONFIG
    from chronomem.eval.harness import context_block
    from chronomem.eval.ingest import indexed_locomo, ingest

    (sample,) = load_locomo(files[0])
    async with open_memory(embedder=HashingEmbedder(), cache_dir=None) as memory:
        group = locomo_group(sample)
        await ingest(memory.store, memory.embedder, group, indexed_locomo(sample))
        question, now = "What is the puppy's name?", sample.last_date
        results = await memory.search(group, question, config=EVAL_CONFIG, now=now)
        facade = await memory.context(group, question, config=EVAL_CONFIG, now=now, include_episodes=True)
        assert context_block(results, now) == facade and "Biscuit" in facade
