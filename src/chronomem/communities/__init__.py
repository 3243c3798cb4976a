"""Communities: the third tier of the graph (paper §2.3; docs/communities.md).

``CommunityBuilder`` builds a group's communities by label propagation, extends them as entities
arrive, and refreshes them when they drift; the pure parts (propagation, the extension step, the
drift measures, the summary plan) are importable on their own for tests and tools.
"""

from chronomem.communities.builder import BuildReport, CommunityBuilder, Extension
from chronomem.communities.config import CommunityConfig
from chronomem.communities.drift import DriftCounter, partition_disagreement
from chronomem.communities.extension import assign_batch, choose_community
from chronomem.communities.graph import WeightedGraph
from chronomem.communities.labelprop import Propagation, detect_communities, propagate
from chronomem.communities.summaries import SummaryPlan, plan_summaries

__all__ = [
    "BuildReport",
    "CommunityBuilder",
    "CommunityConfig",
    "DriftCounter",
    "Extension",
    "Propagation",
    "SummaryPlan",
    "WeightedGraph",
    "assign_batch",
    "choose_community",
    "detect_communities",
    "partition_disagreement",
    "plan_summaries",
    "propagate",
]
