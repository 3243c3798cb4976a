"""A sentence-transformers directory run by ONNX Runtime: the same vectors, at a third of the cost.

A search query is one short sentence. torch runs its six matrix products per layer through a
general-purpose eager path, 18 ms for MiniLM on one core of the shared two-core machine; ONNX
Runtime runs the same graph in 6-7 ms, and that wait sits on the critical path of every
``context()`` (the vector searches start when the query vector is there). A batch of 64 messages
takes 2.3 s against 3.0 s. The vectors are the model's own: on 300 LoCoMo messages the largest
difference from sentence-transformers is 3e-7, so stores and caches written by either runtime
mix freely (both keep the model name ``local:all-MiniLM-L6-v2``).

What this runs is what the directory's ``modules.json`` says, restricted to the common shape: a
``Transformer`` (any architecture ``transformers`` can export), a ``Pooling`` (mean, CLS or max) and
an optional ``Normalize``; a directory with anything else (a ``Dense`` layer, prompts, a custom
module) is refused with the reason, and :class:`~chronomem.embed.local.LocalEmbedder` falls back to
sentence-transformers. Tokenization is the directory's ``tokenizer.json`` through ``tokenizers``,
truncated at the directory's ``max_seq_length`` as sentence-transformers does.

The ONNX graph is exported once from the directory's weights (torch, about 5 s), written atomically
into a cache directory under a key made of the weights' SHA-256, and read from there afterwards; a
directory that ships ``onnx/model.onnx`` (sentence-transformers' own layout) is used as it is. Once
the graph exists, encoding imports neither torch nor transformers.

Each ONNX Runtime session runs on one thread (no spinning): a query has no parallel work worth
splitting, and a batch is split into chunks run side by side on a pool with one worker per core,
which keeps both cores busy without intra-operator synchronisation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chronomem.errors import ConfigurationError, MissingExtraError

__all__ = ["OnnxEncoder", "Unsupported", "default_cache_dir", "graph_key", "load_onnx_encoder"]

log = logging.getLogger(__name__)

EXPORT_VERSION = 1  # part of the cache key: a change to how the graph is exported re-exports it
OPSET = 17
_MODULE = "sentence_transformers.models."
_POOLINGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max"}


class Unsupported(Exception):
    """The directory holds something this runtime does not run (the message says what)."""


def default_cache_dir() -> Path:
    """``$CHRONOMEM_ONNX_CACHE``, else ``$XDG_CACHE_HOME/chronomem/onnx`` (``~/.cache`` by default)."""
    explicit = os.environ.get("CHRONOMEM_ONNX_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chronomem" / "onnx"


@dataclass(frozen=True)
class _Layout:
    """What ``modules.json`` and its configs say the pipeline is."""

    pooling: str  # mean | cls | max
    normalize: bool
    max_seq_length: int
    dimension: int


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc


def _layout(model_dir: Path) -> _Layout:
    modules = _read_json(model_dir / "modules.json")
    if not isinstance(modules, list) or not modules:
        raise Unsupported("no modules.json")
    kinds = [str(m.get("type", "")).removeprefix(_MODULE) for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise Unsupported(f"modules {kinds} (only Transformer, Pooling and optionally Normalize)")
    if modules[0].get("path", "") != "":
        raise Unsupported("the transformer is not at the directory's top level")
    if not (model_dir / "tokenizer.json").is_file():
        raise Unsupported("no tokenizer.json")
    pooling_config = _read_json(model_dir / modules[1].get("path", "1_Pooling") / "config.json") or {}
    modes = [name for key, name in _POOLINGS.items() if pooling_config.get(key)]
    others = [k for k, v in pooling_config.items() if k.startswith("pooling_mode") and v and k not in _POOLINGS]
    if len(modes) != 1 or others or pooling_config.get("include_prompt") is False:
        raise Unsupported(f"pooling {pooling_config} (one of mean, CLS or max)")
    st_config = _read_json(model_dir / "sentence_bert_config.json") or {}
    model_config = _read_json(model_dir / "config.json") or {}
    max_length = st_config.get("max_seq_length") or model_config.get("max_position_embeddings") or 512
    dimension = pooling_config.get("word_embedding_dimension") or model_config.get("hidden_size")
    if not dimension:
        raise Unsupported("no embedding dimension in 1_Pooling/config.json or config.json")
    return _Layout(modes[0], len(kinds) == 3, int(max_length), int(dimension))


def graph_key(model_dir: Path) -> str:
    """The cache key of a directory's exported graph: its weights and config, and the export's version."""
    digest = hashlib.sha256(f"chronomem-onnx-{EXPORT_VERSION}-opset{OPSET}".encode())
    weights = [p for p in (model_dir / "model.safetensors", model_dir / "pytorch_model.bin") if p.is_file()]
    if not weights:
        raise Unsupported("no model.safetensors or pytorch_model.bin to export")
    for path in (weights[0], model_dir / "config.json"):
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return f"{model_dir.name}-{digest.hexdigest()[:16]}"


def _export(model_dir: Path, target: Path) -> None:
    """Export the directory's transformer to ``target`` (atomically: a reader never sees half a file)."""
    try:
        import inspect

        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingExtraError("torch", "local") from exc
    try:
        import onnx  # noqa: F401  (torch's exporter writes through it)
    except ImportError as exc:
        raise MissingExtraError("onnx", "local") from exc

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        names.append("token_type_ids")

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    example = tuple(torch.ones((1, 4), dtype=torch.int64) for _ in names)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    os.close(fd)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python control flow in the model
            torch.onnx.export(
                LastHiddenState(), example, scratch, input_names=names, output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                opset_version=OPSET, dynamo=False,
            )
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


class OnnxEncoder:
    """Encodes texts with one directory's graph; thread-safe (ONNX Runtime sessions are)."""

    def __init__(self, graph: Path, model_dir: Path, layout: _Layout, *, batch_size: int) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError("onnxruntime", "local") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=layout.max_seq_length)
        pad = tokenizer.padding or {}
        tokenizer.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))  # longest
        self._tokenizer = tokenizer
        self._layout = layout
        self._batch_size = batch_size
        # for batches of more than one chunk (its threads start on the first one)
        self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="onnx-embed")

    @property
    def dimension(self) -> int:
        return self._layout.dimension

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalized (if the directory normalizes) float32 rows, in input order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # like lengths share a chunk: less padding
        chunks = [order[i : i + self._batch_size] for i in range(0, len(order), self._batch_size)]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        batches = [[texts[i] for i in chunk] for chunk in chunks]
        # one chunk (a query) runs here; more run side by side on the pool
        runs = list(self._pool.map(self._run, batches)) if len(batches) > 1 else [self._run(b) for b in batches]
        for chunk, vectors in zip(chunks, runs, strict=True):
            out[chunk] = vectors
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: np.ndarray = self._session.run(None, {name: feeds[name] for name in self._inputs})[0]
        if self._layout.pooling == "cls":
            pooled = hidden[:, 0]
        elif self._layout.pooling == "max":
            pooled = np.where(mask[..., None] > 0, hidden, -1e9).max(axis=1)
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self._layout.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32, copy=False)


def load_onnx_encoder(model_dir: Path, cache_dir: Path | None = None, *, batch_size: int = 64) -> OnnxEncoder:
    """The encoder of ``model_dir``, exporting its graph into ``cache_dir`` on first use.
    ``Unsupported`` if the directory is not of the shape this runs (see the module docstring)."""
    layout = _layout(model_dir)
    try:
        import onnxruntime  # noqa: F401  (before an export that could not be run anyway)
    except ImportError as exc:
        raise MissingExtraError("onnxruntime", "local") from exc
    shipped = model_dir / "onnx" / "model.onnx"
    if shipped.is_file():
        return OnnxEncoder(shipped, model_dir, layout, batch_size=batch_size)
    graph = (cache_dir or default_cache_dir()) / graph_key(model_dir) / "model.onnx"
    if not graph.is_file():
        log.info("exporting %s to ONNX at %s (once)", model_dir, graph)
        _export(model_dir, graph)
    try:
        return OnnxEncoder(graph, model_dir, layout, batch_size=batch_size)
    except MissingExtraError:
        raise
    except Exception:  # a damaged cache file (a disk error; writes are atomic): export it again, once
        log.warning("the cached ONNX graph %s does not load; exporting it again", graph, exc_info=True)
        _export(model_dir, graph)
        return OnnxEncoder(graph, model_dir, layout, batch_size=batch_size)
