"""The ONNX Runtime path of the local embedder: the same vectors as sentence-transformers, exported
once and cached, and refusals that name what a directory holds (real model: integration)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chronomem.embed.local import LocalEmbedder, packaged_minilm_path
from chronomem.embed.onnx import Unsupported, _layout, graph_key, load_onnx_encoder
from chronomem.errors import ConfigurationError

TEXTS = [
    "Alice moved to Paris.",
    "hi",
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
    " ".join(["the long message that runs past the model's 256-token window"] * 40),  # truncated
    "Ünïcödé, emoji 🙂 and [brackets] — all tokenized the same way.",
]


def _directory(tmp_path: Path, modules: list[str], pooling: dict[str, object]) -> Path:
    model = tmp_path / "model"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "modules.json").write_text(json.dumps(
        [{"path": "" if i == 0 else f"{i}_{kind}", "type": f"sentence_transformers.models.{kind}"}
         for i, kind in enumerate(modules)]
    ))
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 8, **pooling}))
    (model / "tokenizer.json").write_text("{}")
    return model


def test_the_packaged_minilm_is_of_the_shape_onnx_runs():
    layout = _layout(packaged_minilm_path())
    assert (layout.pooling, layout.normalize, layout.max_seq_length, layout.dimension) == ("mean", True, 256, 384)


@pytest.mark.parametrize(
    ("modules", "pooling", "reason"),
    [
        (["Transformer", "Pooling", "Dense", "Normalize"], {"pooling_mode_mean_tokens": True}, "Dense"),
        (["Transformer", "Pooling"], {"pooling_mode_weightedmean_tokens": True}, "pooling"),
        (["Transformer", "Pooling"], {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True}, "pooling"),
    ],
)
def test_a_directory_of_another_shape_is_refused_with_what_it_holds(tmp_path, modules, pooling, reason):
    with pytest.raises(Unsupported, match=reason):
        _layout(_directory(tmp_path, modules, pooling))


def test_cls_pooling_without_normalize_is_read(tmp_path):
    layout = _layout(_directory(tmp_path, ["Transformer", "Pooling"], {"pooling_mode_cls_token": True}))
    assert (layout.pooling, layout.normalize, layout.dimension) == ("cls", False, 8)


def test_the_graph_key_follows_the_weights(tmp_path):
    model = _directory(tmp_path, ["Transformer", "Pooling"], {"pooling_mode_mean_tokens": True})
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights one")
    first = graph_key(model)
    (model / "model.safetensors").write_bytes(b"weights two")
    assert graph_key(model) != first and first.startswith("model-")


def test_asking_for_onnx_on_a_gpu_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="CPU only"):
        LocalEmbedder(runtime="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="unknown embedding runtime"):
        LocalEmbedder(runtime="tensorflow")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.mark.integration
async def test_onnx_gives_sentence_transformers_vectors(onnx_cache):
    onnx = LocalEmbedder(runtime="onnx", onnx_cache_dir=onnx_cache, batch_size=2)  # three chunks, side by side
    torch = LocalEmbedder(runtime="torch")
    ours, theirs = await onnx.embed(TEXTS), await torch.embed(TEXTS)
    assert onnx.runtime == "onnx" and torch.runtime == "torch"
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-5  # measured: 3e-7 on 300 LoCoMo messages
    assert np.allclose(await onnx.embed(TEXTS[2:3]), ours[2:3], atol=1e-6)  # alone = in a padded batch
    assert LocalEmbedder(onnx_cache_dir=onnx_cache).model_name == torch.model_name  # caches and stores mix


@pytest.mark.integration
async def test_the_exported_graph_is_reused_and_encoding_then_needs_no_torch(onnx_cache):
    await LocalEmbedder(onnx_cache_dir=onnx_cache).load()  # exported once (if an earlier test did not)
    graphs = list(onnx_cache.glob("*/model.onnx"))
    assert len(graphs) == 1
    code = (
        "import asyncio, sys; from chronomem.embed.local import LocalEmbedder; "
        f"e = LocalEmbedder(onnx_cache_dir={str(onnx_cache)!r}); v = asyncio.run(e.embed(['hello'])); "
        "print(e.runtime, v.shape, [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "onnx (1, 384) []"
    assert list(onnx_cache.glob("*/model.onnx")) == graphs and not list(onnx_cache.glob("*/*.part"))


@pytest.mark.integration
def test_a_damaged_cached_graph_is_exported_again(tmp_path):
    damaged = tmp_path / graph_key(packaged_minilm_path()) / "model.onnx"
    damaged.parent.mkdir()
    damaged.write_bytes(b"not a graph")  # a disk error, say (our own writes are atomic)
    encoder = load_onnx_encoder(packaged_minilm_path(), tmp_path)
    assert encoder.encode(["hello"]).shape == (1, 384) and damaged.stat().st_size > 1_000_000


@pytest.mark.integration
async def test_without_onnxruntime_auto_falls_back_to_torch_and_onnx_says_why(monkeypatch, onnx_cache):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes the import fail
    fallback = LocalEmbedder(onnx_cache_dir=onnx_cache)
    assert fallback.runtime == "torch" and (await fallback.embed(["hello"])).shape == (1, 384)
    with pytest.raises(ConfigurationError, match="onnxruntime"):
        await LocalEmbedder(runtime="onnx", onnx_cache_dir=onnx_cache).embed(["hello"])


@pytest.mark.integration
async def test_the_factory_and_the_memory_pass_the_runtime_setting_on(tmp_path):
    from chronomem import Chronomem
    from chronomem.config.settings import Settings
    from chronomem.embed.factory import build_embedder

    embedder = build_embedder("local", local_runtime="torch", cache=False)
    assert isinstance(embedder, LocalEmbedder) and embedder.runtime == "torch"
    settings = Settings(data_dir=tmp_path, embedder_runtime="onnx", onnx_cache_dir=tmp_path / "graphs")
    memory = await Chronomem.open(settings)
    try:
        await memory.embedder.embed(["hello"])
        assert list((tmp_path / "graphs").glob("*/model.onnx"))  # exported where the setting says
    finally:
        await memory.close()


@pytest.mark.integration
async def test_an_export_torch_refuses_falls_back_to_torch_under_auto(monkeypatch, tmp_path, caplog):
    import chronomem.embed.onnx as onnx_module

    def refuse(model_dir: Path, target: Path) -> None:
        raise RuntimeError("Exporting the operator 'aten::exotic' is not supported")

    monkeypatch.setattr(onnx_module, "_export", refuse)
    fallback = LocalEmbedder(onnx_cache_dir=tmp_path)
    assert fallback.runtime == "torch" and "aten::exotic" in caplog.text
    with pytest.raises(ConfigurationError, match="aten::exotic"):
        await LocalEmbedder(runtime="onnx", onnx_cache_dir=tmp_path).embed(["hello"])
