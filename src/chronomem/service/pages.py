"""The service's browser pages, all from local files: the explorer at ``/ui`` and the API's docs at
``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), whose assets are vendored from npm into
``chronomem/ui/static/vendor`` (``scripts/vendor-js``), so they work on a machine without internet.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from chronomem.ui import STATIC_DIR

__all__ = ["DOCS_POLICY", "EXPLORER_POLICY", "UI_PATH", "mount_pages"]

UI_PATH = "/ui"
_VENDOR = f"{UI_PATH}/vendor"

# The browser may load nothing but this server's own files, so a page can never reach the network:
# ReDoc's footer logo from its CDN, for one, is blocked rather than fetched. Swagger UI's and
# ReDoc's pages start from an inline script and ReDoc runs a blob: worker; the explorer needs neither.
_SAME_ORIGIN = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'"
EXPLORER_POLICY = f"{_SAME_ORIGIN}; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
DOCS_POLICY = f"{_SAME_ORIGIN}; script-src 'self' 'unsafe-inline'; worker-src 'self' blob:"


class _PolicedFiles(StaticFiles):
    """Static files sent with the explorer's Content-Security-Policy."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["content-security-policy"] = EXPLORER_POLICY
        return response


def mount_pages(app: FastAPI) -> None:
    """Serve the explorer's files under ``/ui`` (``/`` leads there) and the docs pages.

    The app must be created with ``docs_url=None, redoc_url=None``: these routes replace FastAPI's,
    which load their assets from a CDN.
    """
    openapi_url = app.openapi_url or "/openapi.json"

    async def swagger() -> HTMLResponse:
        return _policed(get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{app.title} — API",
            swagger_js_url=f"{_VENDOR}/swagger-ui-dist/swagger-ui-bundle.js",
            swagger_css_url=f"{_VENDOR}/swagger-ui-dist/swagger-ui.css",
            swagger_favicon_url=f"{_VENDOR}/swagger-ui-dist/favicon-32x32.png",
        ))

    async def redoc() -> HTMLResponse:
        return _policed(get_redoc_html(
            openapi_url=openapi_url, title=f"{app.title} — API", redoc_js_url=f"{_VENDOR}/redoc/redoc.standalone.js",
            redoc_favicon_url=f"{_VENDOR}/swagger-ui-dist/favicon-32x32.png", with_google_fonts=False,
        ))

    async def home() -> RedirectResponse:
        return RedirectResponse(f"{UI_PATH}/")

    app.add_api_route("/docs", swagger, include_in_schema=False)
    app.add_api_route("/redoc", redoc, include_in_schema=False)
    app.add_api_route("/", home, include_in_schema=False)
    # check_dir=False: an install whose vendor step has not run still serves the page and the API.
    app.mount(UI_PATH, _PolicedFiles(directory=STATIC_DIR, html=True, check_dir=False), name="ui")


def _policed(page: HTMLResponse) -> HTMLResponse:
    page.headers["content-security-policy"] = DOCS_POLICY
    return page
