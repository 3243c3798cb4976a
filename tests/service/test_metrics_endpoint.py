"""GET /metrics after real traffic: what an operator reads there moves as the service works, and no
id a caller chose (or a group id) ever becomes a label."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from chronomem.telemetry import ModelPrice, set_prices
from service_support import wait_for_task

MODEL = "function:_answer"  # the SwitchableModel's FunctionModel


async def _scrape(service) -> tuple[dict[tuple[str, frozenset], float], str]:
    answer = await service.client.get("/metrics")  # no key, like the probes
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }
    return samples, answer.text


def _value(samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def _sum(samples, name: str, **labels: str) -> float:
    """Summed over the labels not given."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= found)


async def test_metrics_follow_requests_episodes_model_calls_and_searches(service):
    set_prices({MODEL: ModelPrice(input=1.0, cached_input=0.1, output=2.0)})
    try:
        before, _ = await _scrape(service)
        auth = service.as_(service.key_a)
        assert (
            await service.client.post("/api/v3/users", json={"user_id": "alice-secret-id"}, headers=auth)
        ).status_code == 201
        await service.client.post(
            "/api/v3/threads", json={"thread_id": "thread-secret-id", "user_id": "alice-secret-id"}, headers=auth
        )
        added = await service.client.post(
            "/api/v3/threads/thread-secret-id/messages",
            headers=auth,
            json={
                "messages": [
                    {"role": "user", "name": "Alice", "content": "I moved to Lisbon in May."},
                    {"role": "user", "name": "Alice", "content": "I work at Acme now."},
                ]
            },
        )
        await wait_for_task(service, service.key_a, added.json()["task_id"], {"done"})
        context = await service.client.get(
            "/api/v3/users/alice-secret-id/context", params={"query": "Lisbon"}, headers=auth
        )
        assert context.status_code == 200
        assert (await service.client.get("/api/v3/users/nobody", headers=auth)).status_code == 404

        service.model.failing = True  # the provider goes away: the episode is retried, then failed
        failing = await service.client.post(
            "/api/v3/threads/thread-secret-id/messages",
            headers=auth,
            json={"messages": [{"role": "user", "name": "Alice", "content": "I adopted a cat."}]},
        )
        await wait_for_task(service, service.key_a, failing.json()["task_id"], {"failed"})
        async with asyncio.timeout(5):  # the pool counts the failure just after the task shows it
            # counted from what it was before this test: the registry is the process's, and an earlier test may
            # have failed an episode too
            failed_before = _sum(before, "chronomem_episodes_total", outcome="failed")
            while _sum((await _scrape(service))[0], "chronomem_episodes_total", outcome="failed") < failed_before + 1:
                await asyncio.sleep(0.02)
        after, text = await _scrape(service)
    finally:
        set_prices({})

    def delta(name: str, **labels: str) -> float:
        return _sum(after, name, **labels) - _sum(before, name, **labels)

    # HTTP: by route template and status, never by path
    assert delta("chronomem_http_requests_total", method="POST", route="/api/v3/users", status="201") == 1
    assert delta("chronomem_http_requests_total", method="GET", route="/api/v3/users/{user_id}", status="404") == 1
    assert delta("chronomem_http_request_duration_seconds_count", route="/api/v3/users/{user_id}/context") == 1
    # the worker pool: two episodes done, one retried and finally failed
    assert delta("chronomem_episodes_total", outcome="done") == 2
    assert delta("chronomem_episodes_total", outcome="retried") >= 1
    assert delta("chronomem_episodes_total", outcome="failed") == 1
    assert delta("chronomem_episode_duration_seconds_count", outcome="ok") == 2
    # every stage of the two episodes that went through, and the stage the failing one stopped at
    assert delta("chronomem_stage_duration_seconds_count", stage="extract_entities", outcome="ok") == 2
    assert delta("chronomem_stage_duration_seconds_count", stage="write", outcome="ok") == 2
    assert delta("chronomem_stage_duration_seconds_count", stage="extract_entities", outcome="error") >= 1
    # model calls, tokens and their cost, and the provider's failures by type
    calls = delta("chronomem_llm_calls_total", provider="function", model=MODEL)
    assert calls >= 2
    input_tokens = delta("chronomem_llm_tokens_total", provider="function", model=MODEL, kind="input")
    output_tokens = delta("chronomem_llm_tokens_total", provider="function", model=MODEL, kind="output")
    assert input_tokens > 100
    assert (
        abs(delta("chronomem_llm_cost_usd_total", model=MODEL) - (input_tokens * 1.0 + output_tokens * 2.0) / 1e6)
        < 1e-9
    )
    assert delta("chronomem_llm_errors_total", model=MODEL, error="ModelUnavailableError") >= 1
    # search: the context block and the retrieval methods it ran
    assert delta("chronomem_search_duration_seconds_count", operation="context") == 1
    assert delta("chronomem_search_method_duration_seconds_count", method="bm25") >= 1
    # the queue is empty again, and read at the scrape
    assert _value(after, "chronomem_queue_episodes", state="pending") == 0
    assert _value(after, "chronomem_queue_oldest_age_seconds", state="pending") == 0

    # bounded labels: no caller's id, group id, episode id or project name anywhere
    user = service.control.get_user(service.control.get_project("project-a").id, "alice-secret-id")
    for secret in ("alice-secret-id", "thread-secret-id", "project-a", user.group_id, added.json()["task_id"]):
        assert secret not in text
