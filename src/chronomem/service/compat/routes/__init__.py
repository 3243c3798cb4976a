"""The Zep v2 routes, one module per SDK client (``user``, ``thread``, ``graph`` …)."""

from chronomem.service.compat.routes import graph, items, project, tasks, threads, unsupported, users

__all__ = ["graph", "items", "project", "tasks", "threads", "unsupported", "users"]
