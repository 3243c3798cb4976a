-- The graph of every group in one file. A group's string id lives once, in `groups`; every other
-- table carries its integer `gid` so group ids never appear in query text and rows stay small.
-- Timestamps are integer epoch microseconds (exact round trip of Python datetimes, exact comparisons).
-- groups.fts_key is a hash of the group id, safe as an identifier, reserved for per-group tables
-- (BM25 runs on in-memory indexes built from these tables: see text.py).

CREATE TABLE groups (
    gid     INTEGER PRIMARY KEY,
    name    TEXT NOT NULL UNIQUE,
    fts_key TEXT NOT NULL UNIQUE
);

CREATE TABLE episodes (
    rowid              INTEGER PRIMARY KEY,
    gid                INTEGER NOT NULL,
    id                 TEXT NOT NULL,
    kind               TEXT NOT NULL,
    content            TEXT NOT NULL,
    speaker            TEXT,
    role               TEXT,
    reference_time     INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    source_description TEXT NOT NULL,
    metadata           TEXT NOT NULL,
    status             TEXT NOT NULL,
    attempts           INTEGER NOT NULL,
    last_error         TEXT,
    usage              TEXT NOT NULL,
    UNIQUE (gid, id)
);
CREATE INDEX episodes_by_time ON episodes (gid, reference_time, created_at, id);
CREATE INDEX episodes_by_status ON episodes (status, gid);

CREATE TABLE entities (
    rowid      INTEGER PRIMARY KEY,
    gid        INTEGER NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL,
    labels     TEXT NOT NULL,
    summary    TEXT NOT NULL,
    aliases    TEXT NOT NULL,
    attributes TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (gid, id)
);
CREATE INDEX entities_by_created ON entities (gid, created_at, id);

-- normalize_name() of each entity's name and aliases, for exact-name resolution.
CREATE TABLE entity_names (
    gid        INTEGER NOT NULL,
    normalized TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    PRIMARY KEY (gid, normalized, entity_id)
) WITHOUT ROWID;
CREATE INDEX entity_names_by_entity ON entity_names (gid, entity_id);

-- Labels one per row, so label filters are an indexed lookup.
CREATE TABLE entity_labels (
    gid       INTEGER NOT NULL,
    entity_id TEXT NOT NULL,
    label     TEXT NOT NULL,
    PRIMARY KEY (gid, entity_id, label)
) WITHOUT ROWID;

CREATE TABLE facts (
    rowid            INTEGER PRIMARY KEY,
    gid              INTEGER NOT NULL,
    id               TEXT NOT NULL,
    source_id        TEXT NOT NULL,
    target_id        TEXT NOT NULL,
    other_entity_ids TEXT NOT NULL,
    relation_type    TEXT NOT NULL,
    fact             TEXT NOT NULL,
    episode_ids      TEXT NOT NULL,
    attributes       TEXT NOT NULL,
    valid_at         INTEGER,
    invalid_at       INTEGER,
    created_at       INTEGER NOT NULL,
    expired_at       INTEGER,
    UNIQUE (gid, id)
);
CREATE INDEX facts_by_created ON facts (gid, created_at, id);
CREATE INDEX facts_by_pair ON facts (gid, source_id, target_id);

-- Every participant of a fact (source, target, further entities of a hyperedge): BFS and lookups.
CREATE TABLE fact_entities (
    gid       INTEGER NOT NULL,
    entity_id TEXT NOT NULL,
    fact_id   TEXT NOT NULL,
    PRIMARY KEY (gid, entity_id, fact_id)
) WITHOUT ROWID;
CREATE INDEX fact_entities_by_fact ON fact_entities (gid, fact_id);

-- A fact's provenance, one row per cited episode.
CREATE TABLE fact_episodes (
    gid        INTEGER NOT NULL,
    episode_id TEXT NOT NULL,
    fact_id    TEXT NOT NULL,
    PRIMARY KEY (gid, episode_id, fact_id)
) WITHOUT ROWID;
CREATE INDEX fact_episodes_by_fact ON fact_episodes (gid, fact_id);

CREATE TABLE mentions (
    gid        INTEGER NOT NULL,
    episode_id TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    PRIMARY KEY (gid, episode_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX mentions_by_entity ON mentions (gid, entity_id, episode_id);

CREATE TABLE communities (
    rowid      INTEGER PRIMARY KEY,
    gid        INTEGER NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL,
    summary    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (gid, id)
);

CREATE TABLE community_members (
    gid          INTEGER NOT NULL,
    community_id TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    position     INTEGER NOT NULL,
    PRIMARY KEY (gid, community_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX community_members_by_entity ON community_members (gid, entity_id);

-- Unit float32 embeddings; the in-memory search matrices are built from here.
CREATE TABLE vectors (
    rowid INTEGER PRIMARY KEY,
    gid   INTEGER NOT NULL,
    scope TEXT NOT NULL,
    id    TEXT NOT NULL,
    vec   BLOB NOT NULL,
    UNIQUE (gid, scope, id)
);
