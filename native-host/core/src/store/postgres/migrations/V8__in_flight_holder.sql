-- Who checked each in-flight URL out (issue #26): with no politeness gap a host with URLs in
-- flight may pass to the next worker whose checkout reaches it, so a dead worker's in-flight
-- URLs are found by their own holder, not by their host's. NULL (rows checked out before this
-- column): their host's holder.
ALTER TABLE doc ADD COLUMN held_by TEXT;
