"""The views the web explorer (``/ui``) needs beyond the v3 resources: a bounded graph snapshot at
``as_of``/``known_at``, an entity's facts and episodes, an episode's provenance, the ingestion queue
and a search that explains itself. Each route names its graph like the graph routes (exactly one of
``user_id`` and ``graph_id``) and reads through :mod:`chronomem.ui.views`.

``chronomem ui`` (loopback, no keys: one person's own memory) also lets the page open the store's
raw groups, those the library and the CLI write without users or projects, as ``group=``;
:func:`serve_raw_groups` turns that on for an app. ``chronomem serve`` never does: there a group is
reached only through a user or a named graph of the caller's project.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from chronomem.app.tenancy import GraphRef
from chronomem.errors import InvalidInputError
from chronomem.search.config import RECIPES
from chronomem.service.deps import ERROR_RESPONSES, ServiceState, Space, service_state
from chronomem.service.routers.graph import IdQuery
from chronomem.service.schemas import Name, SearchFiltersIn
from chronomem.service.schemas import Query as QueryText
from chronomem.timeutil import UTCDateTime
from chronomem.ui import views

__all__ = ["ExplainRequest", "WhoAmI", "router", "serve_raw_groups"]

router = APIRouter(prefix="/explorer", tags=["explorer"], responses=ERROR_RESPONSES)

DEFAULT_PAGE = 300  # entities on the first page: drawn and laid out at once in a browser


def time_view(
    as_of: Annotated[UTCDateTime | None, Query(description="facts true in the world at this time")] = None,
    known_at: Annotated[UTCDateTime | None, Query(description="as our database knew them at this time")] = None,
    include_superseded: Annotated[bool, Query(description="also the facts outside the selection, marked")] = False,
) -> views.TimeView:
    return views.TimeView(as_of=as_of, known_at=known_at, include_superseded=include_superseded)


When = Annotated[views.TimeView, Depends(time_view)]
State = Annotated[ServiceState, Depends(service_state)]
_RAW_GROUPS = "explorer_raw_groups"


def serve_raw_groups(app: FastAPI) -> None:
    """Let the explorer open any store group by its id (``chronomem ui`` only: see the module doc)."""
    setattr(app.state, _RAW_GROUPS, True)


def _raw_groups(request: Request) -> bool:
    return bool(getattr(request.app.state, _RAW_GROUPS, False))


def _group_of(request: Request, space: Space, user_id: str | None, graph_id: str | None, group: str | None) -> str:
    if group is None:
        return space.group_of(GraphRef(user_id=user_id, graph_id=graph_id))
    if not _raw_groups(request):
        raise InvalidInputError("group= opens a raw store group, which only `chronomem ui` serves; "
                                "name a user_id or a graph_id")
    if user_id is not None or graph_id is not None:
        raise InvalidInputError("give exactly one of user_id, graph_id and group")
    return group


def explored_group(
    request: Request, space: Space, user_id: IdQuery = None, graph_id: IdQuery = None, group: IdQuery = None
) -> str:
    """The store group a request explores: a user's graph, a named graph or (``chronomem ui``) a raw group."""
    return _group_of(request, space, user_id, graph_id, group)


Group = Annotated[str, Depends(explored_group)]


class WhoAmI(BaseModel):
    project: str
    auth_required: bool
    recipes: list[str]
    groups: list[str]  # the store's raw groups, when this server explores them (chronomem ui); else empty


class ExplainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: Name | None = None
    graph_id: Name | None = None
    group: Name | None = None  # a raw store group (chronomem ui only)
    query: QueryText
    recipe: Annotated[str, Field(min_length=1, max_length=64)] = "context"
    filters: SearchFiltersIn | None = None
    center_node_uuid: Name | None = None  # for the node_distance recipe


@router.get("/whoami", response_model=WhoAmI, summary="The caller's project, and the search recipes")
async def whoami(request: Request, space: Space, state: State) -> WhoAmI:
    groups = await state.memory.list_groups() if _raw_groups(request) else []
    return WhoAmI(project=space.project.name, auth_required=state.settings.auth_required, recipes=sorted(RECIPES),
                  groups=groups)


@router.get("/snapshot", response_model=views.GraphSnapshot,
            summary="A page of the graph: entities most mentioned first, and the facts in view among them")
async def snapshot(
    group_id: Group, state: State, when: When,
    limit: Annotated[int, Query(ge=1, le=views.MAX_PAGE)] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> views.GraphSnapshot:
    return await views.graph_snapshot(state.memory, group_id, when, limit=limit, offset=offset)


@router.get("/timeline", response_model=views.Timeline, summary="Where something changes on T and on T′")
async def timeline(group_id: Group, state: State) -> views.Timeline:
    return await views.timeline(state.memory, group_id)


@router.get("/entities/{uuid}", response_model=views.EntityDetail,
            summary="An entity with every fact it takes part in and the episodes behind it")
async def entity(uuid: str, group_id: Group, state: State, when: When) -> views.EntityDetail:
    return await views.entity_detail(state.memory, group_id, uuid, when)


@router.get("/episodes/{uuid}", response_model=views.EpisodeProvenance,
            summary="An episode and what it produced (entities mentioned, facts citing it)")
async def episode(uuid: str, group_id: Group, state: State, when: When) -> views.EpisodeProvenance:
    return await views.episode_provenance(state.memory, group_id, uuid, when)


@router.get("/ingestion", response_model=views.IngestionStatus,
            summary="The graph's ingestion queue: failed, processing and pending episodes")
async def ingestion(group_id: Group, state: State) -> views.IngestionStatus:
    return await views.ingestion_status(state.memory, group_id)


@router.post("/episodes/{uuid}/retry", response_model=views.EpisodeView,
             summary="Queue a failed episode again (other statuses are left as they are)")
async def retry(uuid: str, group_id: Group, state: State) -> views.EpisodeView:
    episode = await views.retry_episode(state.memory, group_id, uuid)
    if state.pool is not None:
        state.pool.notify()
    return episode


@router.post("/search", response_model=views.SearchExplained,
             summary="search and context with a recipe and filters; each hit with its score and methods")
async def search(request: Request, body: ExplainRequest, space: Space, state: State) -> views.SearchExplained:
    group_id = _group_of(request, space, body.user_id, body.graph_id, body.group)
    return await views.explain_search(
        state.memory, group_id, body.query, recipe_name=body.recipe,
        filters=body.filters.to_domain() if body.filters is not None else None,
        center_entity_id=body.center_node_uuid,
    )
