-- The bloomfilter index at its edges: states that must not answer, rights
-- and row-level security, probes that coerce like "=", options' bounds,
-- copies that follow the statement's own writes, partitioned indexes and
-- temporary tables under parallel plans.
\set VERBOSITY terse

CREATE TABLE be_users (id bigint, email text, score float8, doc jsonb, secret text);
INSERT INTO be_users
SELECT g, 'u' || g || '@example.org', g / 2.0, jsonb_build_object('a', g), 's' || g
FROM generate_series(1, 2000) g;
CREATE INDEX be_id ON be_users USING bloomfilter (id) WITH (capacity = 4000);

-- an index that is not valid, not ready or not live is refused before any
-- page is read (as a CREATE or DROP INDEX CONCURRENTLY that stopped half
-- way leaves it): 55000, never an answer
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'be_id'::regclass;
SELECT bloom_index_contains('be_id', 1);
SELECT bloom_index_filter('be_id') IS NULL;
SELECT segments FROM bloom_index_info('be_id');
SELECT bloom_index_verify('be_id');
UPDATE pg_index SET indisvalid = true, indisready = false WHERE indexrelid = 'be_id'::regclass;
SELECT bloom_index_contains('be_id', 1);
UPDATE pg_index SET indisready = true WHERE indexrelid = 'be_id'::regclass;
\set VERBOSITY default
UPDATE pg_index SET indislive = false WHERE indexrelid = 'be_id'::regclass;
SELECT bloom_index_contains('be_id', 1);
UPDATE pg_index SET indislive = true WHERE indexrelid = 'be_id'::regclass;
\set VERBOSITY terse
SELECT bloom_index_contains('be_id', 1) AS valid_again;

-- an index built over broken HOT chains is too new for the transaction
-- that built it (the planner's indcheckxmin rule)
CREATE TABLE be_hot (k bigint, v int);
INSERT INTO be_hot SELECT g, 0 FROM generate_series(1, 100) g;
BEGIN;
UPDATE be_hot SET k = k + 1000 WHERE k <= 10;
CREATE INDEX be_hot_k ON be_hot USING bloomfilter (k);
SELECT indcheckxmin FROM pg_index WHERE indexrelid = 'be_hot_k'::regclass;
SELECT bloom_index_contains('be_hot_k', 5);
ROLLBACK;
DROP TABLE be_hot;

-- options: bloom_empty's bounds and messages
CREATE INDEX be_bad ON be_users USING bloomfilter (id) WITH (capacity = 0);
CREATE INDEX be_bad ON be_users USING bloomfilter (id) WITH (fpr = 1e-20);
CREATE INDEX be_bad ON be_users USING bloomfilter (id) WITH (fpr = 0.7);
CREATE INDEX be_bad ON be_users USING bloomfilter (id) WITH (fpr = 0);
CREATE INDEX be_bad ON be_users USING bloomfilter (id) WITH (growth = 1);
ALTER INDEX be_id SET (fpr = -1);

-- probes coerce the argument as "column = argument" would
CREATE INDEX be_score ON be_users USING bloomfilter (score);
CREATE INDEX be_doc ON be_users USING bloomfilter (doc);
SELECT bloom_index_contains('be_score', 1.5) AS numeric_on_float8,
       bloom_index_contains('be_score', 1.5::float4) AS float4_on_float8,
       bloom_index_contains('be_doc', '{"a": 7}') AS literal_on_jsonb,
       bloom_index_contains('be_doc', '{"a":7}'::jsonb) AS jsonb_on_jsonb,
       bloom_index_contains('be_id', 7::smallint) AS int2_on_int8;
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_score', (id / 2.0)::numeric)) AS false_negatives
FROM be_users;
SELECT bloom_index_contains('be_doc', 'not json');
SELECT bloom_index_contains('be_id', 'abc'::bytea);
SELECT bloom_index_contains('be_id', now());

-- a statement's own inserts: the copy a scan makes sees them as the pages do
CREATE TABLE be_rows (k bigint);
CREATE INDEX be_rows_k ON be_rows USING bloomfilter (k) WITH (capacity = 100000);
WITH ins AS (INSERT INTO be_rows SELECT generate_series(1, 5000) RETURNING k)
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_rows_k', k)) AS missed_in_cte FROM ins;
CREATE FUNCTION be_insert_returning() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	missed bigint;
BEGIN
	WITH ins AS (INSERT INTO be_rows SELECT generate_series(10001, 15000)
	             RETURNING bloom_index_contains('be_rows_k', k) AS hit)
	SELECT count(*) FILTER (WHERE NOT hit) INTO missed FROM ins;
	RETURN missed;
END
$$;
SELECT be_insert_returning() AS missed_in_insert_returning;
-- two call sites share one copy; each checks its key's kind, from the copy too
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_rows_k', k)
                          OR NOT bloom_index_contains('be_rows_k', k::int)) AS missed_two_sites
FROM be_rows;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_rows_k', k)) AS missed FROM be_rows;
SELECT bloom_index_contains('be_rows_k', 1.5::float8);
ROLLBACK;

-- one copy per backend and index, whichever call site made it, and none
-- larger than work_mem (the copies' memory lasts to the end of the
-- transaction)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL work_mem = '64MB';
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_rows_k', k)
                          OR NOT bloom_index_contains('be_rows_k', k + 0)) AS missed FROM be_rows;
SELECT total_bytes >= (SELECT bytes FROM bloom_index_info('be_rows_k')) AS holds_a_copy,
       total_bytes < 2 * (SELECT bytes FROM bloom_index_info('be_rows_k')) AS holds_one_copy
FROM pg_backend_memory_contexts WHERE name = 'bloomfilter index copies';
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL work_mem = '64kB';
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_rows_k', k)) AS missed FROM be_rows;
SELECT total_bytes < (SELECT bytes FROM bloom_index_info('be_rows_k')) AS no_copy_above_work_mem
FROM pg_backend_memory_contexts WHERE name = 'bloomfilter index copies';
COMMIT;

-- rights: SELECT on the columns the key reads is enough; RLS refuses
CREATE ROLE be_reader;
CREATE ROLE be_bypass BYPASSRLS;
GRANT SELECT ON be_users TO be_bypass;
GRANT SELECT (id) ON be_users TO be_reader;
CREATE INDEX be_lower_email ON be_users USING bloomfilter (lower(email));
CREATE INDEX be_partial ON be_users USING bloomfilter (id) WHERE secret <> 's1';
SET ROLE be_reader;
SELECT bloom_index_contains('be_id', 5) AS column_grant_suffices;
SELECT bloom_index_contains('be_lower_email', 'u5@example.org');
SELECT bloom_index_contains('be_partial', 5);
RESET ROLE;
GRANT SELECT (email) ON be_users TO be_reader;
SET ROLE be_reader;
SELECT bloom_index_contains('be_lower_email', 'u5@example.org') AS expression_columns_granted;
RESET ROLE;
ALTER TABLE be_users ENABLE ROW LEVEL SECURITY;
CREATE POLICY be_own ON be_users FOR SELECT USING (id < 10);
SET ROLE be_reader;
\set VERBOSITY default
SELECT bloom_index_contains('be_id', 1500);
\set VERBOSITY terse
SELECT bloom_index_filter('be_id') IS NULL;
SELECT inserted FROM bloom_index_info('be_id');
SELECT bloom_index_verify('be_id');
RESET ROLE;
SET ROLE be_bypass;
SELECT bloom_index_contains('be_id', 1500) AS bypassrls_reads;
RESET ROLE;
SELECT bloom_index_contains('be_id', 1500) AS owner_reads;
ALTER TABLE be_users DISABLE ROW LEVEL SECURITY;
DROP POLICY be_own ON be_users;

-- verify runs the index's code as the table's owner, restricted: a
-- function in the key expression sees the owner, not the caller
CREATE ROLE be_owner;
GRANT CREATE ON SCHEMA public TO be_owner;
SET ROLE be_owner;
CREATE TABLE be_owned (k int);
INSERT INTO be_owned VALUES (1), (2);
CREATE FUNCTION be_who(k int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	restricted boolean;
BEGIN
	BEGIN
		-- SET ROLE is refused within a security-restricted operation
		PERFORM set_config('role', current_user, true);
		restricted := false;
	EXCEPTION WHEN OTHERS THEN
		restricted := true;
	END;
	RAISE NOTICE 'key expression runs as %, security-restricted: %', current_user, restricted;
	RETURN k;
END
$$;
CREATE INDEX be_owned_k ON be_owned USING bloomfilter (be_who(k));
RESET ROLE;
SELECT bloom_index_verify('be_owned_k') AS verified_as_owner;
SELECT current_user = session_user AS caller_restored;
DROP TABLE be_owned;
DROP FUNCTION be_who(int);

-- ... and under a search_path of pg_catalog and pg_temp only, with the
-- expressions prepared anew under it: a caller with SELECT, whose own
-- schema comes first in its search_path, must not get an unqualified call
-- in the owner's SQL function (inlined into the expression or not) to run
-- the caller's function as the owner
SET ROLE be_owner;
CREATE TABLE be_named (name text);
INSERT INTO be_named VALUES ('Ann'), ('Bob');
CREATE FUNCTION be_norm(t text) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT lower(t)';
CREATE INDEX be_named_norm ON be_named USING bloomfilter (be_norm(name));
GRANT SELECT ON be_named TO be_reader;
RESET ROLE;
CREATE SCHEMA be_trap;
GRANT USAGE, CREATE ON SCHEMA be_trap TO be_reader;
GRANT USAGE ON SCHEMA be_trap TO PUBLIC;
SET ROLE be_reader;
CREATE FUNCTION be_trap.lower(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RAISE NOTICE 'the caller''s lower ran as %', current_user;
	RETURN pg_catalog.lower(t);
END
$$;
SET search_path = be_trap, public, pg_catalog;
-- the planner loads (and caches) the index's expressions under this path
EXPLAIN (COSTS OFF) SELECT * FROM be_named WHERE be_norm(name) = 'ann';
SELECT bloom_index_verify('be_named_norm') AS verified;
RESET search_path;
RESET ROLE;
DROP TABLE be_named;
DROP FUNCTION be_norm(text);
DROP SCHEMA be_trap CASCADE;
REVOKE CREATE ON SCHEMA public FROM be_owner;

-- a partitioned index: probes ask each partition's index, through ATTACH
-- and DETACH; info adds up; the snapshot unites equal partitions
CREATE TABLE be_events (day date, id bigint) PARTITION BY RANGE (day);
CREATE TABLE be_events_1 PARTITION OF be_events FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
CREATE TABLE be_events_2 PARTITION OF be_events FOR VALUES FROM ('2026-01-02') TO ('2026-01-03');
INSERT INTO be_events SELECT '2026-01-01', g FROM generate_series(1, 1000) g;
INSERT INTO be_events SELECT '2026-01-02', g FROM generate_series(1001, 3000) g;
CREATE INDEX be_events_id ON be_events USING bloomfilter (id) WITH (capacity = 5000);
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('be_events_id', id)) AS false_negatives
FROM be_events;
SELECT count(*) FILTER (WHERE bloom_index_contains('be_events_id', g)) < 100 AS rate_ok
FROM generate_series(100001, 110000) g;
SELECT capacity, inserted, segments, bytes > 0 AS has_bytes FROM bloom_index_info('be_events_id');
SELECT bloom_index_verify('be_events_id') AS live_keys_checked;
SELECT bloom_index_filter('be_events_id') @> 2500::bigint AS snapshot_has_key,
       (SELECT bits_set FROM bloom_info(bloom_index_filter('be_events_id'))) =
       (SELECT bits_set FROM bloom_info((SELECT bloom_agg(id, 5000, 0.01, 2) FROM be_events)))
       AS same_bits_as_agg;
CREATE TABLE be_events_3 (day date, id bigint);
INSERT INTO be_events_3 SELECT '2026-01-03', g FROM generate_series(5001, 5100) g;
CREATE INDEX be_events_3_id ON be_events_3 USING bloomfilter (id) WITH (capacity = 5000);
ALTER TABLE be_events ATTACH PARTITION be_events_3 FOR VALUES FROM ('2026-01-03') TO ('2026-01-04');
SELECT bloom_index_contains('be_events_id', 5050) AS attached_found, inserted
FROM bloom_index_info('be_events_id');
ALTER TABLE be_events DETACH PARTITION be_events_1;
SELECT count(*) FILTER (WHERE bloom_index_contains('be_events_id', g)) < 50 AS detached_gone
FROM generate_series(1, 1000) g;
-- partitions' indexes of different sizes: probes work, a union cannot
CREATE TABLE be_days (day int, id bigint) PARTITION BY LIST (day);
CREATE TABLE be_days_1 PARTITION OF be_days FOR VALUES IN (1);
CREATE TABLE be_days_2 PARTITION OF be_days FOR VALUES IN (2);
INSERT INTO be_days SELECT 1, g FROM generate_series(1, 10) g;
INSERT INTO be_days SELECT 2, g FROM generate_series(1, 3000) g;
CREATE INDEX be_days_id ON ONLY be_days USING bloomfilter (id);
CREATE INDEX be_days_1_id ON be_days_1 USING bloomfilter (id) WITH (capacity = 100);
CREATE INDEX be_days_2_id ON be_days_2 USING bloomfilter (id) WITH (capacity = 5000);
ALTER INDEX be_days_id ATTACH PARTITION be_days_1_id;
\set VERBOSITY default
SELECT bloom_index_contains('be_days_id', 2999) AS not_valid_yet;
\set VERBOSITY terse
ALTER INDEX be_days_id ATTACH PARTITION be_days_2_id;
SELECT bloom_index_contains('be_days_id', 2999) AS probe_works;
SELECT bloom_index_filter('be_days_id');
-- a foreign partition has no index: the partitioned index cannot answer
CREATE FOREIGN DATA WRAPPER be_fdw;
CREATE SERVER be_server FOREIGN DATA WRAPPER be_fdw;
CREATE FOREIGN TABLE be_days_3 PARTITION OF be_days FOR VALUES IN (3) SERVER be_server;
SELECT bloom_index_contains('be_days_id', 1);
DROP FOREIGN TABLE be_days_3;
DROP SERVER be_server;
DROP FOREIGN DATA WRAPPER be_fdw;
-- a partitioned table with no partition: an empty filter, nothing found
CREATE TABLE be_empty (id bigint) PARTITION BY RANGE (id);
CREATE INDEX be_empty_id ON be_empty USING bloomfilter (id);
SELECT bloom_index_contains('be_empty_id', 1) AS none_found, inserted
FROM bloom_index_info('be_empty_id');
SELECT bloom_cardinality(bloom_index_filter('be_empty_id'));

-- a temporary table's index under a parallel plan: the leader probes
CREATE TEMP TABLE be_temp (id bigint);
INSERT INTO be_temp SELECT generate_series(1, 100);
CREATE INDEX be_temp_id ON be_temp USING bloomfilter (id);
CREATE TABLE be_big AS SELECT g AS id FROM generate_series(1, 20000) g;
ANALYZE be_big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FROM be_big WHERE bloom_index_contains('be_temp_id', id) AND id <= 100;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- probes count as scans of the index in pg_stat_user_indexes, so that an
-- "unused indexes" query does not propose dropping a guard: each probe of
-- a leaf is a scan, each "maybe present" an entry read, no heap fetch; a
-- partitioned index's probes count on its partitions' indexes, asked in
-- turn until one may hold the key
CREATE TABLE be_counted (k int);
INSERT INTO be_counted SELECT generate_series(1, 1000);
CREATE INDEX be_counted_guard ON be_counted USING bloomfilter (k);
CREATE TABLE be_counted_parts (k int) PARTITION BY RANGE (k);
CREATE TABLE be_counted_low PARTITION OF be_counted_parts FOR VALUES FROM (0) TO (500);
CREATE TABLE be_counted_high PARTITION OF be_counted_parts FOR VALUES FROM (500) TO (5000);
INSERT INTO be_counted_parts SELECT generate_series(1, 1000);
CREATE INDEX be_counted_parts_guard ON be_counted_parts USING bloomfilter (k);
SELECT count(*) FILTER (WHERE bloom_index_contains('be_counted_guard', g)) AS found,
       count(*) FILTER (WHERE bloom_index_contains('be_counted_parts_guard', g)) AS found_in_parts
FROM generate_series(1, 2000) g;
SELECT pg_stat_force_next_flush();
SELECT indexrelname, idx_scan, idx_tup_read BETWEEN 1000 AND 1010 AS read_the_hits, idx_tup_fetch
FROM pg_stat_user_indexes WHERE indexrelname = 'be_counted_guard';
SELECT indexrelname, idx_scan BETWEEN 1499 AND 2000 AS scanned, idx_tup_read BETWEEN 499 AND 510 AS read_its_hits
FROM pg_stat_user_indexes WHERE relname IN ('be_counted_low', 'be_counted_high')
ORDER BY indexrelname;

DROP TABLE be_users, be_rows, be_events, be_events_1, be_days, be_empty, be_big, be_counted, be_counted_parts;
DROP FUNCTION be_insert_returning();
DROP ROLE be_reader;
DROP ROLE be_bypass;
DROP ROLE be_owner;
