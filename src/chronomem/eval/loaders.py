"""Shared helpers of the benchmark loaders: open plain or gzipped JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

__all__ = ["read_json"]


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, gunzipping it first when it starts with the gzip magic bytes."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)
