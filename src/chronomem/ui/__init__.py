"""The web explorer of a memory: its page (``static/``) and the views it reads (:mod:`.views`).

``chronomem serve`` serves the page at ``/ui``; ``chronomem ui`` opens it on the embedded store. The
third-party browser code it draws with (Cytoscape.js and its fCoSE layout) and the assets of
``/docs`` and ``/redoc`` are vendored from the npm registry into ``static/vendor/`` by
``scripts/vendor-js`` (run by ``make install``): nothing is loaded from the network at run time.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIR", "VENDOR_DIR", "vendored"]

STATIC_DIR = Path(__file__).parent / "static"
VENDOR_DIR = STATIC_DIR / "vendor"


def vendored() -> bool:
    """Whether the vendored browser code is in place (``scripts/vendor-js`` has run)."""
    return (VENDOR_DIR / "VERSIONS").is_file()
