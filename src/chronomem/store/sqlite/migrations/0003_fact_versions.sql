-- Append-only fact history (docs/design.md §1): `facts` holds the latest version of each fact (what the
-- indexes serve); every earlier version moves to `fact_versions` unchanged, with the transaction
-- time interval [recorded_from, recorded_to) in which our records held it. Provenance outside the
-- episodes (a CRM record, a file and line) is `sources`, a JSON list of {name, reference}.

ALTER TABLE facts ADD COLUMN sources TEXT NOT NULL DEFAULT '[]';
ALTER TABLE facts ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE facts ADD COLUMN recorded_at INTEGER NOT NULL DEFAULT 0;
UPDATE facts SET recorded_at = created_at;
-- "known at t'" looks up the few facts whose latest version was recorded after t'.
CREATE INDEX facts_by_recorded ON facts (gid, recorded_at);

CREATE TABLE fact_versions (
    gid              INTEGER NOT NULL,
    fact_id          TEXT NOT NULL,
    version          INTEGER NOT NULL,
    recorded_from    INTEGER NOT NULL,
    recorded_to      INTEGER NOT NULL,
    source_id        TEXT NOT NULL,
    target_id        TEXT NOT NULL,
    other_entity_ids TEXT NOT NULL,
    relation_type    TEXT NOT NULL,
    fact             TEXT NOT NULL,
    episode_ids      TEXT NOT NULL,
    sources          TEXT NOT NULL,
    attributes       TEXT NOT NULL,
    valid_at         INTEGER,
    invalid_at       INTEGER,
    created_at       INTEGER NOT NULL,
    expired_at       INTEGER,
    PRIMARY KEY (gid, fact_id, version)
) WITHOUT ROWID;
-- The versions in force at t' are those with recorded_from <= t' < recorded_to; the index covers
-- their four timestamps, which is all a vector search at t' needs of them.
CREATE INDEX fact_versions_in_force ON fact_versions
    (gid, recorded_to, recorded_from, valid_at, invalid_at, created_at, expired_at);
