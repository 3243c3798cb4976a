"""The word patterns the code splits text with, written once.

- :data:`WORD`: a run of word characters (letters, digits, underscore): full-text terms, overlap
  measures, the test doubles' token bags;
- :data:`LETTERS`: a run of letters alone (no digits, no underscore): word forms and stems;
- :data:`ALPHANUMERIC`: letters and digits without the underscore: the SQLite full-text tokens.
"""

from __future__ import annotations

import re

__all__ = ["ALPHANUMERIC", "LETTERS", "WORD"]

WORD = re.compile(r"\w+")
LETTERS = re.compile(r"[^\W\d_]+")
ALPHANUMERIC = re.compile(r"[^\W_]+")
