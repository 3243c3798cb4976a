"""What the benchmark readers and mappings share: opening plain or gzipped JSON, and a session as
one text document."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from chronomem.domain import Episode, EpisodeKind

__all__ = ["read_json", "session_document"]


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, gunzipping it first when it starts with the gzip magic bytes."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def session_document(
    group: str, source: str, session_key: str, when: datetime, lines: list[str], unit: str | None = None
) -> Episode:
    """A whole session as one text episode (id ``<group>:session:<key>``, ``metadata["session_document"]``):
    it lets search see a session that matches a question as a whole though no single turn does. It
    counts as a unit (``metadata["unit"]``) only when the benchmark's unit is the session itself."""
    metadata: dict[str, object] = {"session_document": True}
    if unit is not None:
        metadata["unit"] = unit
    return Episode(
        id=f"{group}:session:{session_key}", group_id=group, kind=EpisodeKind.TEXT, content="\n".join(lines),
        reference_time=when, created_at=when, source_description=source, metadata=metadata,
    )
