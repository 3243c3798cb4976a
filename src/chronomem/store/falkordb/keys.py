"""Redis key names for groups.

A group's graph is one Redis key: ``<namespace>:{<encoded group id>}``. The group id is
percent-encoded (RFC 3986 unreserved characters stay readable), so any string — quotes, spaces,
braces, colons, unicode — gives a distinct, printable key that decodes back to the id. Braces are
always encoded, so the only hash tag in the key is the one we put there: in a Redis Cluster the slot
depends on the group id alone, and other keys of the same group (``<namespace>:{<id>}:…``) land on
the same shard.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from chronomem.errors import ConfigurationError

__all__ = ["DEFAULT_NAMESPACE", "GroupKeys"]

DEFAULT_NAMESPACE = "chronomem"
_NAMESPACE = re.compile(r"^[A-Za-z0-9_.-]+$")


class GroupKeys:
    """Maps group ids to graph keys and back, inside one namespace."""

    def __init__(self, namespace: str = DEFAULT_NAMESPACE) -> None:
        if not _NAMESPACE.match(namespace):
            raise ConfigurationError(f"namespace {namespace!r} may only hold letters, digits, '_', '.', '-'")
        self.namespace = namespace
        self._prefix = f"{namespace}:{{"

    def graph(self, group_id: str) -> str:
        return f"{self._prefix}{quote(group_id, safe='')}}}"

    def group_of(self, key: str) -> str | None:
        """The group id of a graph key of this namespace, or None for any other key."""
        if not (key.startswith(self._prefix) and key.endswith("}")):
            return None
        encoded = key[len(self._prefix) : -1]
        if "{" in encoded or "}" in encoded:
            return None
        return unquote(encoded, errors="strict")
