-- test/fdw/shard.sql: one shard's part of the events table, run on each shard.
--
-- psql variables: shard (its number, also the partition key on the
-- coordinator), first_id and per_user (rows per user id).  Shard 1 holds ids
-- 1..100000 once each, shard 2 ids 100001..150000 twice each: the same row
-- count but different distinct counts, which is what makes self-sizing
-- filters of the two shards differ in size.

CREATE EXTENSION bloomfilter;

CREATE TABLE events (
	user_id bigint NOT NULL,
	shard integer NOT NULL,
	kind text NOT NULL,
	at timestamptz NOT NULL
);

INSERT INTO events
SELECT :first_id + (i - 1) / :per_user,
	   :shard,
	   (ARRAY['view', 'click', 'buy'])[1 + i % 3],
	   timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second'
  FROM generate_series(1, 100000) AS i;

ANALYZE events;

-- A stored filter, to check that a bloom value crosses the fdw unchanged.
CREATE TABLE filters (
	name text PRIMARY KEY,
	f bloom NOT NULL
);

INSERT INTO filters
SELECT 'events_user_id', bloom_agg(user_id, 300000, 0.01) FROM events;
