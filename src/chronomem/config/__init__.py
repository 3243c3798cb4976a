"""Configuration: the typed settings model and where its values come from.

- :mod:`~chronomem.config.settings`: :class:`Settings` and its sections, with defaults that work
  offline on one machine;
- :mod:`~chronomem.config.sources`: where values come from (the environment, a TOML file, inline
  JSON), the catalogue of every setting, and reading them back out for child processes;
- :mod:`~chronomem.config.reference`: ``docs/configuration.md``, rendered from both.
"""

from chronomem.config.settings import ApiLimits, SearchDefaults, Settings, WorkerSettings
from chronomem.config.sources import load_json_mappings, load_ontology

__all__ = ["ApiLimits", "SearchDefaults", "Settings", "WorkerSettings", "load_json_mappings", "load_ontology"]
