"""One router per resource; each route parses, calls one ``ProjectSpace`` method, renders."""

from chronomem.service.routers import graph, probes, tasks, templates, threads, users

__all__ = ["graph", "probes", "tasks", "templates", "threads", "users"]
