"""The application core: what HTTP, MCP and the CLI do for a project, without a transport.

- :mod:`~chronomem.app.tenancy`: :class:`ProjectSpace`, one project's operations (users, threads,
  graphs, messages, search and context, summaries, templates), each a short composition of the
  control plane and the :class:`~chronomem.Chronomem` facade;
- :mod:`~chronomem.app.project_config`: a project's own ontology and JSON mappings;
- :mod:`~chronomem.app.summaries`, :mod:`~chronomem.app.templates`: Zep's running user and thread
  summaries, and context templates;
- :mod:`~chronomem.app.workers`: the ingestion worker pool, and :mod:`~chronomem.app.process` the
  settings of a long-running process.

The shells above (``service``, ``mcp_server``, ``cli``) translate their transport into these calls
and back; nothing here knows HTTP, MCP or a terminal.
"""
