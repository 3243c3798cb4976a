"""A cross-encoder over ``sentence_transformers.CrossEncoder`` loaded from a directory on disk.

Point it at a real cross-encoder checkpoint (e.g. a copy of ``cross-encoder/ms-marco-MiniLM-L-6-v2``)
for meaningful scores: the model is never downloaded (``local_files_only=True``, ``HF_HUB_OFFLINE=1``).
Given a plain encoder directory instead (such as the packaged all-MiniLM-L6-v2), sentence-transformers
adds an untrained classification head: the code path runs, but the scores mean nothing.
Scores pass through a sigmoid so they land in [0, 1]; scoring runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronomem.embed.local import load_sentence_transformers
from chronomem.errors import ConfigurationError, ModelError

__all__ = ["SentenceTransformersCrossEncoder"]


def _sigmoid(values: np.ndarray) -> np.ndarray:
    squashed: np.ndarray = 1.0 / (1.0 + np.exp(-values))
    return squashed


class SentenceTransformersCrossEncoder:
    def __init__(
        self, model_path: str | Path, *, device: str = "cpu", batch_size: int = 32, max_length: int = 512
    ) -> None:
        self.model_path = Path(model_path)
        self._device = device
        self._batch_size = batch_size
        self._max_length = max_length
        self._model: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                if not self.model_path.is_dir():
                    raise ConfigurationError(f"cross-encoder directory {self.model_path} does not exist")
                st = load_sentence_transformers()
                try:
                    self._model = st.CrossEncoder(
                        str(self.model_path),
                        device=self._device,
                        local_files_only=True,
                        num_labels=1,
                        max_length=self._max_length,
                    )
                except (OSError, ValueError) as exc:
                    raise ConfigurationError(f"cannot load the cross-encoder at {self.model_path}: {exc}") from exc
            return self._model

    def _predict(self, query: str, passages: list[str]) -> list[float]:
        model = self._loaded()
        import torch  # present whenever sentence-transformers loaded; identity keeps raw logits

        try:
            logits = model.predict(
                [(query, passage) for passage in passages],
                batch_size=self._batch_size,
                activation_fn=torch.nn.Identity(),
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except RuntimeError as exc:
            raise ModelError(f"cross-encoder scoring failed: {exc}") from exc
        return [float(score) for score in _sigmoid(np.asarray(logits, dtype=np.float64).reshape(-1))]

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        return await asyncio.to_thread(self._predict, query, list(passages))
