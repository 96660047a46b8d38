-- bench/setup.sql: the benchmark's data, loaded into a fresh database by
-- bench/run.sh with psql variables n (rows probed and aggregated),
-- small_keys and large_keys (keys of the two probe filters).
--
-- users_small and users_large hold the keys 1..small_keys and 1..large_keys,
-- so a key drawn from 1..small_keys is present in both.  requests mixes 10%
-- such present keys with 90% keys above every user id (absent from both), in
-- random order so that consecutive probes touch unrelated filter blocks.

\set ON_ERROR_STOP 1

CREATE EXTENSION bloomfilter;
CREATE EXTENSION hll;
CREATE EXTENSION pg_prewarm;

-- A fixed seed keeps the data, and so the filters, the same in every run.
SELECT setseed(0.42);

CREATE TABLE users_small (id bigint NOT NULL);
INSERT INTO users_small SELECT g FROM generate_series(1, :small_keys) g;

CREATE TABLE users_large (id bigint NOT NULL);
INSERT INTO users_large SELECT g FROM generate_series(1, :large_keys) g;

CREATE TABLE requests (user_id bigint NOT NULL);
INSERT INTO requests
SELECT CASE WHEN random() < 0.1
			THEN 1 + floor(random() * :small_keys)::bigint
			ELSE 1000000000 + floor(random() * 1e12)::bigint
	   END
  FROM generate_series(1, :n);

-- The aggregation input: n distinct ids.
CREATE TABLE t (id bigint NOT NULL);
INSERT INTO t SELECT g FROM generate_series(1, :n) g;

-- Filters stored as a user stores them: every one but add_small is larger
-- than a page, so it lives out of line in the TOAST table.
CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
INSERT INTO filters SELECT 'small', bloom_agg(id) FROM users_small;
INSERT INTO filters SELECT 'large', bloom_agg(id) FROM users_large;
INSERT INTO filters SELECT 'big', bloom_agg(id, 10000000, 0.01) FROM users_large;
INSERT INTO filters VALUES ('add_big', bloom_empty(2000000)),
						   ('add_small', bloom_empty(800));

-- The way to add many keys that bloom_add_all replaces: before PostgreSQL 18,
-- every assignment copies the whole filter.
CREATE FUNCTION add_loop(f bloom, n integer) RETURNS bloom
LANGUAGE plpgsql AS $$
BEGIN
	FOR k IN 1..n LOOP
		f := bloom_add(f, k::bigint);
	END LOOP;
	RETURN f;
END
$$;

-- Hint bits, visibility map and statistics settled now, not during a timed
-- scan; then every table and TOAST table read into shared_buffers.
VACUUM (FREEZE, ANALYZE);
SELECT count(pg_prewarm(c.oid))
  FROM pg_class c
 WHERE c.relname IN ('users_small', 'users_large', 'requests', 't', 'filters')
	OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relname = 'filters');
