-- A host its holder offers to the other workers (nothing of it in flight, none of its URLs
-- taken in the holder's last checkout): from this time on another worker whose head of the
-- frontier reaches the host may take it over. NULL: not offered.
ALTER TABLE server ADD COLUMN offered_at DOUBLE PRECISION;
