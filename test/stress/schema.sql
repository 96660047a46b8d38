-- schema.sql: the shared filters and the write log of the concurrency and
-- crash tests.  Every committed bloom_add has exactly one added_log row from
-- the same transaction, so after any interleaving or crash the log says which
-- keys each filter must contain and how many adds it must have counted.

CREATE TABLE filters (
	id int PRIMARY KEY,
	f bloom NOT NULL
);

-- 20,000 values at 1% is about 25 kB: stored out of line in 13 TOAST chunks,
-- so every update writes a new TOAST value while readers detoast the old one.
INSERT INTO filters SELECT g, bloom_empty(20000, 0.01) FROM generate_series(1, 4) g;

CREATE TABLE added_log (
	seq bigserial PRIMARY KEY,
	row_id int NOT NULL,
	k bigint NOT NULL
);
CREATE INDEX added_log_row_seq ON added_log (row_id, seq);

-- Keys a concurrent reader found missing although their log row was visible
-- in the same snapshot; must stay empty.
CREATE TABLE probe_misses (
	row_id int NOT NULL,
	k bigint NOT NULL
);
