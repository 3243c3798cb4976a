"""The views the web explorer (``/ui``) needs beyond the v3 resources: a bounded graph snapshot at
``as_of``/``known_at``, an entity's facts and episodes, an episode's provenance, the ingestion queue
and a search that explains itself. Each route names its graph like the graph routes (exactly one of
``user_id`` and ``graph_id``) and reads through :mod:`chronomem.ui.views`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from chronomem.search.config import RECIPES
from chronomem.service.deps import ERROR_RESPONSES, ServiceState, Space, service_state
from chronomem.service.routers.graph import Target
from chronomem.service.schemas import Name, SearchFiltersIn
from chronomem.service.schemas import Query as QueryText
from chronomem.service.tenancy import GraphRef
from chronomem.timeutil import UTCDateTime
from chronomem.ui import views

__all__ = ["ExplainRequest", "WhoAmI", "router"]

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


class WhoAmI(BaseModel):
    project: str
    auth_required: bool
    recipes: list[str]


class ExplainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: Name | None = None
    graph_id: Name | None = None
    query: QueryText
    recipe: Annotated[str, Field(min_length=1, max_length=64)] = "context"
    filters: SearchFiltersIn | None = None
    center_node_uuid: Name | None = None  # for the node_distance recipe


@router.get("/whoami", response_model=WhoAmI, summary="The caller's project, and the search recipes")
async def whoami(space: Space, state: State) -> WhoAmI:
    return WhoAmI(project=space.project.name, auth_required=state.settings.auth_required, recipes=sorted(RECIPES))


@router.get("/snapshot", response_model=views.GraphSnapshot,
            summary="A page of the graph: entities most mentioned first, and the facts in view among them")
async def snapshot(
    target: Target, space: Space, state: State, when: When,
    limit: Annotated[int, Query(ge=1, le=views.MAX_PAGE)] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> views.GraphSnapshot:
    return await views.graph_snapshot(state.memory, space.group_of(target), when, limit=limit, offset=offset)


@router.get("/timeline", response_model=views.Timeline, summary="Where something changes on T and on T′")
async def timeline(target: Target, space: Space, state: State) -> views.Timeline:
    return await views.timeline(state.memory, space.group_of(target))


@router.get("/entities/{uuid}", response_model=views.EntityDetail,
            summary="An entity with every fact it takes part in and the episodes behind it")
async def entity(uuid: str, target: Target, space: Space, state: State, when: When) -> views.EntityDetail:
    return await views.entity_detail(state.memory, space.group_of(target), uuid, when)


@router.get("/episodes/{uuid}", response_model=views.EpisodeProvenance,
            summary="An episode and what it produced (entities mentioned, facts citing it)")
async def episode(uuid: str, target: Target, space: Space, state: State, when: When) -> views.EpisodeProvenance:
    return await views.episode_provenance(state.memory, space.group_of(target), uuid, when)


@router.get("/ingestion", response_model=views.IngestionStatus,
            summary="The graph's ingestion queue: failed, processing and pending episodes")
async def ingestion(target: Target, space: Space, state: State) -> views.IngestionStatus:
    return await views.ingestion_status(state.memory, space.group_of(target))


@router.post("/episodes/{uuid}/retry", response_model=views.EpisodeView,
             summary="Queue a failed episode again (other statuses are left as they are)")
async def retry(uuid: str, target: Target, space: Space, state: State) -> views.EpisodeView:
    episode = await views.retry_episode(state.memory, space.group_of(target), uuid)
    if state.pool is not None:
        state.pool.notify()
    return episode


@router.post("/search", response_model=views.SearchExplained,
             summary="search and context with a recipe and filters; each hit with its score and methods")
async def search(body: ExplainRequest, space: Space, state: State) -> views.SearchExplained:
    group_id = space.group_of(GraphRef(user_id=body.user_id, graph_id=body.graph_id))
    return await views.explain_search(
        state.memory, group_id, body.query, recipe_name=body.recipe,
        filters=body.filters.to_domain() if body.filters is not None else None,
        center_entity_id=body.center_node_uuid,
    )
