"""The ``chronomem`` command line: typer commands over the facade, the application core and the
service (:mod:`~chronomem.cli.commands`), and the bundled demo (:mod:`~chronomem.cli.demo`)."""

from chronomem.cli.commands import app, main, reference_markdown

__all__ = ["app", "main", "reference_markdown"]
