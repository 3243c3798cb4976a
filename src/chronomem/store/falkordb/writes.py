"""One :class:`GraphWrite` → one Cypher query, so the whole batch commits or fails as a unit.

FalkorDB runs a query under the graph's write lock and undoes it if it fails, which gives us the
port's "everything lands, or nothing does" without a transaction API. Each section is an
``UNWIND $rows …`` followed by ``WITH count(*) AS _``: the aggregate yields one row even when the
list is empty, so an empty section never stops the sections after it. Only non-empty sections are
included; the text depends on which sections are present, never on values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chronomem.domain import Episode, FactVersion
from chronomem.errors import InvalidInputError
from chronomem.store.base import GraphWrite
from chronomem.store.falkordb.cypher import VECTOR_LINK, VERSION_LINK
from chronomem.store.falkordb.records import community_props, entity_props, episode_props, fact_props, version_props
from chronomem.store.history import check_restored

__all__ = ["batch_vectors", "compose_write", "vector_dimensions"]

def _replace_vectors(label: str) -> str:
    # Holders are never updated in place (see cypher.vector_label): drop the old one (and its link),
    # create a new one. A fact's holder is linked to it (see cypher.VECTOR_LINK); the fact is in the
    # graph by now (an earlier section of this write, or already there: store._check_vector_owners).
    name = label.lower()
    text = (f"UNWIND ${name}_vectors AS {name}_vr OPTIONAL MATCH ({name}_old:{label}Vec {{id: {name}_vr.id}}) "
            f"DELETE {name}_old WITH {name}_vr "
            f"CREATE ({name}_h:{label}Vec {{id: {name}_vr.id, emb: vecf32({name}_vr.v)}})")
    if label == "Fact":
        text += (f" WITH {name}_vr, {name}_h MATCH ({name}_o:{label} {{id: {name}_vr.id}}) "
                 f"CREATE ({name}_o)-[:{VECTOR_LINK}]->({name}_h)")
    return text


# Every section uses its own variable names. A batch replacing communities and their vectors failed
# on FalkorDB 4.16.3 with "_AR_EXP_UpdateEntityIdx: No record was given to locate a value with alias
# c" while sections shared names (and the replace section used OPTIONAL MATCH); with distinct names
# and MATCH it passes (not reduced further; tests/communities caught it).
_SECTIONS: tuple[tuple[str, str], ...] = (
    ("del_mentions", "UNWIND $del_mentions AS dm MATCH (dm_m:Mention {episode_id: dm.episode, entity_id: dm.entity}) "
                     "DELETE dm_m"),
    ("del_facts", "UNWIND $del_facts AS df OPTIONAL MATCH (:Fact {id: df})-[:HAS_VERSION]->(df_x:FactVersion) "
                  "DELETE df_x WITH DISTINCT df OPTIONAL MATCH (df_f:Fact {id: df}) "
                  "OPTIONAL MATCH (df_v:FactVec {id: df}) DELETE df_f, df_v"),
    ("del_entities", "UNWIND $del_entities AS dn OPTIONAL MATCH (dn_n:Entity {id: dn}) "
                     "OPTIONAL MATCH (dn_v:EntityVec {id: dn}) DELETE dn_n, dn_v "
                     "WITH DISTINCT dn OPTIONAL MATCH (dn_m:Mention {entity_id: dn}) DELETE dn_m "
                     "WITH DISTINCT dn MATCH (dn_c:Community) WHERE dn IN dn_c.member_ids "
                     "SET dn_c.member_ids = [x IN dn_c.member_ids WHERE x <> dn]"),
    ("del_episodes", "UNWIND $del_episodes AS de OPTIONAL MATCH (de_e:Episode {id: de}) "
                     "OPTIONAL MATCH (de_v:EpisodeVec {id: de}) DELETE de_e, de_v "
                     "WITH DISTINCT de MATCH (de_m:Mention {episode_id: de}) DELETE de_m"),
    ("del_communities", "UNWIND $del_communities AS dc OPTIONAL MATCH (dc_c:Community {id: dc}) "
                        "OPTIONAL MATCH (dc_v:CommunityVec {id: dc}) DELETE dc_c, dc_v"),
    ("keep_communities", "MATCH (kc_c:Community) WHERE NOT kc_c.id IN $keep_communities "
                         "OPTIONAL MATCH (kc_v:CommunityVec {id: kc_c.id}) DELETE kc_c, kc_v"),
    # an episode re-sent keeps its stored metadata (set_episode_metadata is what changes it)
    ("episodes", "UNWIND $episodes AS ue MERGE (ue_e:Episode {id: ue.props.id}) "
                 "ON CREATE SET ue_e.metadata = ue.metadata SET ue_e += ue.props"),
    ("entities", "UNWIND $entities AS un MERGE (un_n:Entity {id: un.id}) SET un_n += un"),
    ("facts", "UNWIND $facts AS uf MERGE (uf_f:Fact {id: uf.id}) SET uf_f += uf"),
    # An earlier version hangs off its fact, unchanged (see store.history): one the head replaces
    # now, or one an import restores (after the facts, so a fact new in this batch is there).
    ("fact_versions", f"UNWIND $fact_versions AS fv MATCH (fv_f:Fact {{id: fv.id}}) "
                      f"CREATE (fv_f)-[:{VERSION_LINK}]->(fv_v:FactVersion) SET fv_v += fv"),
    ("communities", "UNWIND $communities AS uc MERGE (uc_c:Community {id: uc.id}) SET uc_c += uc"),
    ("mentions", "UNWIND $mentions AS um MERGE (:Mention {episode_id: um.episode, entity_id: um.entity})"),
    ("episode_vectors", _replace_vectors("Episode")),
    ("entity_vectors", _replace_vectors("Entity")),
    ("fact_vectors", _replace_vectors("Fact")),
    ("community_vectors", _replace_vectors("Community")),
)


def _check_group(batch: GraphWrite) -> None:
    groups = {e.group_id for e in batch.episodes} | {e.group_id for e in batch.entities}
    groups |= {f.group_id for f in batch.facts} | {c.group_id for c in batch.communities}
    groups |= {m.group_id for m in (*batch.mentions, *batch.delete_mentions)}
    groups |= {v.fact.group_id for v in batch.fact_history}
    strangers = groups - {batch.group_id}
    if strangers:
        raise InvalidInputError(f"write to group {batch.group_id!r} holds objects of other groups: {sorted(strangers)}")
    check_restored(batch.facts, batch.fact_history)


def _episode_row(episode: Episode) -> dict[str, Any]:
    props = episode_props(episode)
    return {"metadata": props.pop("metadata"), "props": props}


def _vectors(vectors: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    return [{"id": key, "v": np.asarray(v, dtype=np.float32)} for key, v in vectors.items()]


def _rows(batch: GraphWrite, versions: list[FactVersion]) -> dict[str, Any]:
    rows: dict[str, Any] = {
        "del_mentions": [{"episode": m.episode_id, "entity": m.entity_id} for m in batch.delete_mentions],
        "del_facts": list(batch.delete_fact_ids),
        "del_entities": list(batch.delete_entity_ids),
        "del_episodes": list(batch.delete_episode_ids),
        "del_communities": list(batch.delete_community_ids),
        "episodes": [_episode_row(e) for e in batch.episodes],
        "entities": [entity_props(e) for e in batch.entities],
        "fact_versions": [version_props(v) for v in (*versions, *batch.fact_history)],
        "facts": [fact_props(f) for f in batch.facts],
        "communities": [community_props(c) for c in batch.communities],
        "mentions": [{"episode": m.episode_id, "entity": m.entity_id} for m in batch.mentions],
        "episode_vectors": _vectors(batch.episode_vectors),
        "entity_vectors": _vectors(batch.entity_vectors),
        "fact_vectors": _vectors(batch.fact_vectors),
        "community_vectors": _vectors(batch.community_vectors),
    }
    if batch.replace_communities:
        rows["keep_communities"] = [c.id for c in batch.communities]
    return rows


def compose_write(batch: GraphWrite, versions: list[FactVersion] | None = None) -> tuple[str, dict[str, Any]]:
    """The query text and parameters applying ``batch`` (whose facts are the revised heads) and
    keeping ``versions``, the fact versions they replace, and the batch's restored ``fact_history``;
    ('', {}) when there is nothing to do."""
    _check_group(batch)
    rows = _rows(batch, versions or [])
    present = [(name, text) for name, text in _SECTIONS if name in rows and (rows[name] or name == "keep_communities")]
    if not present:
        return "", {}
    text = " WITH count(*) AS _ ".join(body for _, body in present) + " RETURN 1"
    return text, {name: rows[name] for name, _ in present}


def batch_vectors(batch: GraphWrite) -> dict[str, dict[str, np.ndarray]]:
    """Object label → the vectors this batch writes for that label."""
    return {"Episode": batch.episode_vectors, "Entity": batch.entity_vectors, "Fact": batch.fact_vectors,
            "Community": batch.community_vectors}


def vector_dimensions(batch: GraphWrite) -> dict[str, int]:
    """Object label → the one dimension of the vectors this batch writes for it.

    Mixed dimensions within a label are refused (``InvalidInputError``), before anything is written."""
    found: dict[str, int] = {}
    for label, vectors in batch_vectors(batch).items():
        sizes = {int(np.asarray(v).size) for v in vectors.values()}
        if len(sizes) > 1 or 0 in sizes:
            raise InvalidInputError(f"{label.lower()} vectors of several dimensions in one write: {sorted(sizes)}")
        if sizes:
            found[label] = sizes.pop()
    return found
