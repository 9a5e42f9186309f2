-- The periodic job learns the apprentice incrementally (issue #26): it reads only the link
-- evidence that appeared since its last read, told by the transactions that wrote it. A link
-- remembers the transaction that inserted it, a page the one that first recorded it fetched
-- (their 64-bit ids, as pg_current_xact_id()); what the job learned so far is kept with the
-- snapshot it read under, so "new" is "not visible in that snapshot", whatever order
-- concurrent workers committed in. Rows written before this version have no id: the job's
-- first read after it reads them all.
ALTER TABLE link ADD COLUMN xid BIGINT;
ALTER TABLE link ALTER COLUMN xid SET DEFAULT pg_current_xact_id()::text::bigint;
CREATE INDEX link_xid ON link USING brin(xid);
ALTER TABLE doc ADD COLUMN fetched_xid BIGINT;
CREATE INDEX doc_fetched_xid ON doc(fetched_xid) WHERE fetched_xid IS NOT NULL;
CREATE FUNCTION doc_first_fetched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.fetched_xid := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END $$;
CREATE TRIGGER doc_first_fetched BEFORE UPDATE OF first_fetched_at ON doc FOR EACH ROW
  WHEN (OLD.first_fetched_at IS NULL AND NEW.first_fetched_at IS NOT NULL)
  EXECUTE FUNCTION doc_first_fetched();
-- The job's own state on this server (what it learned, under which snapshot): never copied
-- to another database, whose transactions are others.
CREATE TABLE job_state(key TEXT PRIMARY KEY, value BYTEA NOT NULL);
