-- When a host may next be sent a request, as its holder's checkouts planned its politeness
-- slots: a checkout takes URLs of hosts that are ready first, and a worker taking a host over
-- keeps to the slot its last holder planned. NULL: none planned.
ALTER TABLE server ADD COLUMN ready_at DOUBLE PRECISION;
