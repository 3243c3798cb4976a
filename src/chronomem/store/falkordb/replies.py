"""Decoding FalkorDB's compact result set.

We ask for ``--compact`` replies and only ever return scalars, lists, maps and vectors, so no
label or property-name lookups (and no extra round trips) are needed. A compact value is a pair
``[type, value]``.
"""

from __future__ import annotations

from typing import Any

from chronomem.errors import StoreError

__all__ = ["decode_rows", "decode_stats"]

_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY = 1, 2, 3, 4, 5, 6
_MAP, _VECTOR = 10, 12


def _decode(cell: list[Any]) -> Any:
    kind, value = cell
    if kind in (_NULL, _STRING, _INTEGER):
        return value
    if kind == _BOOLEAN:
        return value == "true"
    if kind == _DOUBLE:
        return float(value)
    if kind == _ARRAY:
        return [_decode(item) for item in value]
    if kind == _MAP:
        return {value[i]: _decode(value[i + 1]) for i in range(0, len(value), 2)}
    if kind == _VECTOR:
        return [float(x) for x in value]
    raise StoreError(f"unexpected FalkorDB value type {kind}: queries must return scalars")


def decode_rows(reply: list[Any]) -> list[list[Any]]:
    """Rows of a compact GRAPH.QUERY reply (an empty list for a write without RETURN)."""
    if len(reply) < 3:  # statistics only
        return []
    return [[_decode(cell) for cell in row] for row in reply[1]]


def decode_stats(reply: list[Any]) -> dict[str, float]:
    """The statistics of a reply ("Nodes created: 1" → {"Nodes created": 1.0}); timings are skipped."""
    stats: dict[str, float] = {}
    for line in reply[-1]:
        name, _, value = str(line).partition(":")
        try:
            stats[name.strip()] = float(value.split()[0])
        except (ValueError, IndexError):
            continue
    return stats
