"""Text tools shared by ingestion and search: time expressions, name keys, word forms and patterns.

The bottom of the package graph beside ``errors`` and ``timeutil``: pure functions over strings,
no I/O, no clock (a "now" is always given).
"""
