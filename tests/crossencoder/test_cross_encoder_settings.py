"""The cross-encoder chosen by configuration (CHRONOMEM_CROSS_ENCODER), and the API's
`reranker: cross_encoder` working once it is set."""

from __future__ import annotations

import httpx
import pytest

from chronomem.config.settings import Settings
from chronomem.crossencoder.factory import build_cross_encoder
from chronomem.crossencoder.llm import LLMCrossEncoder
from chronomem.crossencoder.local import SentenceTransformersCrossEncoder
from chronomem.embed.local import packaged_minilm_path
from chronomem.errors import ConfigurationError
from chronomem.heuristic import heuristic_model
from chronomem.llm.settings import LLMSettings
from chronomem.service.app import create_app


def test_each_spec_builds_its_cross_encoder():
    assert build_cross_encoder("none", heuristic_model()) is None
    assert isinstance(build_cross_encoder("llm", heuristic_model()), LLMCrossEncoder)
    local = build_cross_encoder(f"local:{packaged_minilm_path()}", None)
    assert isinstance(local, SentenceTransformersCrossEncoder)  # loaded on first use, not here


@pytest.mark.parametrize(("spec", "complaint"), [
    ("llm", "CHRONOMEM_LLM_MODEL"), ("local:/nowhere/model", "no model directory"), ("bert", "none, llm or local"),
])
def test_a_spec_that_cannot_work_fails_at_start_up_naming_the_setting(spec, complaint):
    with pytest.raises(ConfigurationError, match=complaint) as raised:
        build_cross_encoder(spec, None)
    assert "CHRONOMEM_CROSS_ENCODER" in str(raised.value)


async def test_the_api_reranks_with_the_configured_cross_encoder(tmp_path):
    settings = Settings(data_dir=tmp_path, embedder="hashing", auth_required=False, cross_encoder="llm",
                        llm=LLMSettings(model="heuristic"))  # the stand-in grades by shared words
    app = create_app(settings)
    async with (app.router.lifespan_context(app),
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client):
            assert (await client.post("/api/v3/users", json={"user_id": "ann"})).status_code == 201
            for target, text in (("Tea", "Ann drinks green tea every morning"),
                                 ("Lisbon", "Ann moved to Lisbon for her new job at the harbour")):
                added = await client.post("/api/v3/graph/facts", json={
                    "user_id": "ann", "source_node_name": "Ann", "fact_name": "RELATES_TO",
                    "target_node_name": target, "fact": text})
                assert added.status_code == 201, added.text
            found = await client.post("/api/v3/graph/search", json={
                "user_id": "ann", "query": "new job harbour Lisbon", "scopes": ["facts"], "reranker": "cross_encoder"})
    assert found.status_code == 200, found.text
    facts = found.json()["facts"]
    assert facts[0]["fact"].startswith("Ann moved to Lisbon") and facts[0]["score"] > facts[-1]["score"]
