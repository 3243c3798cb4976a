-- Who wrote an entity's summary (Entity.summary_source): "model", "graph" (the fallback built from
-- the graph's own text), "edit", or '' for summaries written before it was recorded.
ALTER TABLE entities ADD COLUMN summary_source TEXT NOT NULL DEFAULT '';
