"""The service's browser pages, all from local files: the explorer at ``/ui`` and the API's docs at
``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), whose assets are vendored from npm into
``chronomem/ui/static/vendor`` (``scripts/vendor-js``), so they work on a machine without internet.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

from chronomem.ui import STATIC_DIR

__all__ = ["UI_PATH", "mount_pages"]

UI_PATH = "/ui"
_VENDOR = f"{UI_PATH}/vendor"


def mount_pages(app: FastAPI) -> None:
    """Serve the explorer's files under ``/ui`` (``/`` leads there) and the docs pages.

    The app must be created with ``docs_url=None, redoc_url=None``: these routes replace FastAPI's,
    which load their assets from a CDN.
    """
    openapi_url = app.openapi_url or "/openapi.json"

    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{app.title} — API",
            swagger_js_url=f"{_VENDOR}/swagger-ui-dist/swagger-ui-bundle.js",
            swagger_css_url=f"{_VENDOR}/swagger-ui-dist/swagger-ui.css",
            swagger_favicon_url=f"{_VENDOR}/swagger-ui-dist/favicon-32x32.png",
        )

    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=openapi_url, title=f"{app.title} — API",
                              redoc_js_url=f"{_VENDOR}/redoc/redoc.standalone.js", with_google_fonts=False)

    async def home() -> RedirectResponse:
        return RedirectResponse(f"{UI_PATH}/")

    app.add_api_route("/docs", swagger, include_in_schema=False)
    app.add_api_route("/redoc", redoc, include_in_schema=False)
    app.add_api_route("/", home, include_in_schema=False)
    # check_dir=False: an install whose vendor step has not run still serves the page and the API.
    app.mount(UI_PATH, StaticFiles(directory=STATIC_DIR, html=True, check_dir=False), name="ui")
