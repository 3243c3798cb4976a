"""``python -m chronomem.cli``: what the ``chronomem`` script runs."""

from chronomem.cli.commands import main

main()
