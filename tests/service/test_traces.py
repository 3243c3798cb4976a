"""OpenTelemetry spans through the real app with an in-memory exporter: the request that queued a
message names its task and episode, and the episode's trace is a tree of its stages and their model
calls. A JSON log line written during a model call names the same episode and trace."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chronomem.telemetry import JsonFormatter, configure_tracing
from service_support import wait_for_task


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    configure_tracing("off", exporter=exporter)
    yield exporter
    configure_tracing("off")


def _logging_model(service, sink: logging.Logger, monkeypatch):
    """The service's scripted model, logging one line from inside each model call."""
    answer = service.model.model._callback

    def logged(prompt, context):
        sink.info("answering %s", prompt.name)
        return answer(prompt, context)

    monkeypatch.setattr(service.model.model, "_callback", logged)


async def test_a_message_is_a_request_span_and_an_episode_tree(service, spans, monkeypatch):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    sink = logging.getLogger("chronomem.test.model")
    sink.addHandler(handler)
    sink.setLevel(logging.INFO)
    _logging_model(service, sink, monkeypatch)
    auth = service.as_(service.key_a)
    try:
        await service.client.post("/api/v3/users", json={"user_id": "ada"}, headers=auth)
        await service.client.post("/api/v3/threads", json={"thread_id": "ada-1", "user_id": "ada"}, headers=auth)
        added = (
            await service.client.post(
                "/api/v3/threads/ada-1/messages",
                headers=auth,
                json={"messages": [{"role": "user", "name": "Ada", "content": "I moved to Lisbon in May."}]},
            )
        ).json()
        await wait_for_task(service, service.key_a, added["task_id"], {"done"})
        async with asyncio.timeout(5):  # the episode's span ends just after its `done` is written
            while not any(s.name == "episode" for s in spans.get_finished_spans()):
                await asyncio.sleep(0.01)
    finally:
        sink.removeHandler(handler)
    [episode_id] = added["message_uuids"]
    finished = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}

    # the request: its route template, its status, the task and episode it queued
    [request] = [s for s in finished if s.attributes.get("chronomem.route") == "/api/v3/threads/{thread_id}/messages"]
    assert request.name == "HTTP POST"
    assert request.attributes["chronomem.status"] == 202
    assert request.attributes["chronomem.task_id"] == added["task_id"]
    assert list(request.attributes["chronomem.episode_ids"]) == [episode_id]

    # the episode: a root span of its own trace (a worker picked it up), with its stages under it
    [episode] = [s for s in finished if s.name == "episode"]
    assert episode.attributes["chronomem.episode_id"] == episode_id
    assert episode.parent is None
    trace = [s for s in finished if s.context.trace_id == episode.context.trace_id]
    stages = [s for s in trace if s.name.startswith("stage ")]
    assert {s.parent.span_id for s in stages} == {episode.context.span_id}
    assert [s.attributes["chronomem.stage"] for s in sorted(stages, key=lambda s: s.start_time)][:2] == [
        "context",
        "extract_entities",
    ]
    assert {"resolve_entities", "update_summaries", "write"} <= {s.attributes["chronomem.stage"] for s in stages}

    # each model call sits under the stage that made it, labelled with its prompt and model
    calls = [s for s in trace if s.name == "model_call"]
    assert calls
    for call in calls:
        parent = by_id[call.parent.span_id]
        assert parent.name.startswith("stage ")
        assert call.attributes["chronomem.provider"] == "function"
    extract = next(c for c in calls if c.attributes["chronomem.prompt"] == "extract_entities")
    assert by_id[extract.parent.span_id].attributes["chronomem.stage"] == "extract_entities"

    # the log line written inside that call names the episode, its group and the call's span
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    logged = next(line for line in lines if line["message"] == "answering extract_entities")
    assert logged["episode_id"] == episode_id
    assert logged["group_id"] == episode.attributes["chronomem.group_id"]
    assert logged["trace_id"] == format(episode.context.trace_id, "032x")
    assert logged["span_id"] == format(extract.context.span_id, "016x")
    assert logged["level"] == "info" and logged["logger"] == "chronomem.test.model"


async def test_without_tracing_no_span_is_made_and_logs_still_carry_the_ids(service):
    configure_tracing("off")
    from chronomem.telemetry import log_context, span

    with span("episode", episode_id="e1", group_id="g1"):
        assert log_context() == {"episode_id": "e1", "group_id": "g1"}
    assert log_context() == {}
