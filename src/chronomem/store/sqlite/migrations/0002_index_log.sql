-- What each write changed in the searchable data (vectors, BM25 text, fact timestamps), so that
-- every process with the file open can bring its in-memory indexes up to date (see changefeed.py).
-- Rows name what changed, not the new value: a process reads the current value when it catches up.
-- AUTOINCREMENT keeps sequence numbers increasing even after old rows are pruned.

CREATE TABLE index_log (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    grp     TEXT NOT NULL,   -- the group's string id (gids can be reused after a group is deleted)
    kind    TEXT NOT NULL,   -- 'vector' | 'text' | 'times' | 'group' (the group was deleted)
    scope   TEXT NOT NULL,
    id      TEXT NOT NULL
);
