-- Host leases (as the SQLite store's): a host's holder, each worker's lease, and an index on
-- the few in-flight rows so that expiry finds them without a scan.
ALTER TABLE server ADD COLUMN lease_owner TEXT;
CREATE INDEX server_lease ON server(lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX doc_in_flight ON doc(sid) WHERE status = 1;
CREATE TABLE worker(
  name TEXT PRIMARY KEY, started_at DOUBLE PRECISION NOT NULL,
  heartbeat DOUBLE PRECISION NOT NULL, lease_until DOUBLE PRECISION NOT NULL,
  checked_out BIGINT NOT NULL DEFAULT 0);
