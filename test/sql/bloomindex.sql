-- The bloomfilter index: built from the table, kept current by inserts,
-- probed and snapshotted by functions, never used for scans; expression and
-- partial indexes; options; errors and permissions.
\set VERBOSITY default

CREATE TABLE bi_users (id bigint, email text, active boolean);
INSERT INTO bi_users
SELECT g, 'User' || g || '@Example.org', g % 2 = 0 FROM generate_series(1, 20000) g;
ANALYZE bi_users;

CREATE INDEX bi_id_guard ON bi_users USING bloomfilter (id) WITH (capacity = 30000, fpr = 0.01);
SELECT capacity, target_fpr, inserted, segments, deleted_since_build
FROM bloom_index_info('bi_id_guard');

-- present keys are found, through every number type; absent ones mostly not
SELECT bloom_index_contains('bi_id_guard', 42) AS int4_key,
       bloom_index_contains('bi_id_guard', 42::bigint) AS int8_key,
       bloom_index_contains('bi_id_guard', 42.0) AS numeric_key,
       bloom_index_contains('bi_id_guard', NULL::int) IS NULL AS null_key;
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('bi_id_guard', id)) AS false_negatives
FROM bi_users;
SELECT count(*) FILTER (WHERE bloom_index_contains('bi_id_guard', g)) < 0.02 * 20000 AS rate_ok
FROM generate_series(1000001, 1020000) g;

-- the snapshot is a bloom value of the parameters bloom_agg gives the same
-- keys: by default a growing one (growth 2), with the same segments and
-- count (the aggregate fills its chain in its own order, the index in the
-- rows'); with growth = 0 the same filter of fixed size
SELECT a.capacity = b.capacity AND a.target_fpr = b.target_fpr AND a.growth = b.growth
       AND a.segments = b.segments AND a.inserted = b.inserted AS snapshot_like_agg
FROM bloom_info(bloom_index_filter('bi_id_guard')) a,
     bloom_info((SELECT bloom_agg(id, 30000, 0.01, 2) FROM bi_users)) b;
CREATE INDEX bi_fixed ON bi_users USING bloomfilter (id) WITH (capacity = 30000, fpr = 0.01, growth = 0);
SELECT bloom_index_filter('bi_fixed') = (SELECT bloom_agg(id, 30000, 0.01) FROM bi_users)
       AS fixed_snapshot_equals_agg;
DROP INDEX bi_fixed;

-- inserts reach the index at once, in the inserting transaction too
BEGIN;
INSERT INTO bi_users VALUES (5000001, 'new@example.org', true);
SELECT bloom_index_contains('bi_id_guard', 5000001) AS seen_by_own_transaction;
COMMIT;
INSERT INTO bi_users SELECT g, 'n' || g, true FROM generate_series(6000001, 6001000) g;
UPDATE bi_users SET id = 7000001 WHERE id = 1;
SELECT bloom_index_contains('bi_id_guard', 6000500) AS inserted_key,
       bloom_index_contains('bi_id_guard', 7000001) AS updated_key,
       bloom_index_filter('bi_id_guard') @> 6000500::bigint AS in_snapshot;
SELECT inserted FROM bloom_index_info('bi_id_guard');
SELECT bloom_index_verify('bi_id_guard') AS live_keys_checked;
-- a call site that probes more than the index has pages copies it for the
-- rest of the command; a later command (after an insert) reads it anew
CREATE FUNCTION bi_insert_then_probe(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	missed int := 0;
BEGIN
	FOR i IN 1..n LOOP
		INSERT INTO bi_users VALUES (9100000 + i, 'p', true);
		-- one call site, one command: the later probes use the copy
		FOR j IN 1..10 LOOP
			IF NOT bloom_index_contains('bi_id_guard', 9100000 + i) THEN
				missed := missed + 1;
			END IF;
		END LOOP;
	END LOOP;
	RETURN missed;
END
$$;
SELECT bi_insert_then_probe(300) AS missed_in_function;
CREATE PROCEDURE bi_commit_then_probe(n int) LANGUAGE plpgsql AS $$
DECLARE
	missed int := 0;
BEGIN
	FOR i IN 1..n LOOP
		PERFORM bloom_index_contains('bi_id_guard', g) FROM generate_series(1, 50) g;
		INSERT INTO bi_users VALUES (9200000 + i, 'q', true);
		COMMIT;
		FOR j IN 1..10 LOOP
			IF NOT bloom_index_contains('bi_id_guard', 9200000 + i) THEN
				missed := missed + 1;
			END IF;
		END LOOP;
	END LOOP;
	RAISE NOTICE 'missed across transactions: %', missed;
END
$$;
CALL bi_commit_then_probe(100);
DELETE FROM bi_users WHERE id > 9100000;
DROP FUNCTION bi_insert_then_probe(int);
DROP PROCEDURE bi_commit_then_probe(int);

-- aborted keys may stay: only false positives
BEGIN;
INSERT INTO bi_users VALUES (8000001, 'gone', true);
ROLLBACK;
SELECT bloom_index_contains('bi_id_guard', 8000001) AS aborted_key_may_stay;

-- VACUUM counts the keys of rows that are gone, for deciding on REINDEX
DELETE FROM bi_users WHERE id <= 1000;
VACUUM bi_users;
SELECT deleted_since_build FROM bloom_index_info('bi_id_guard');
REINDEX INDEX bi_id_guard;
SELECT inserted, deleted_since_build FROM bloom_index_info('bi_id_guard');
SELECT bloom_index_verify('bi_id_guard') AS live_keys_checked;

-- options: the size follows them after a rebuild
ALTER INDEX bi_id_guard SET (fpr = 0.001);
REINDEX INDEX bi_id_guard;
SELECT capacity, target_fpr FROM bloom_index_info('bi_id_guard');
-- without a capacity, the build sizes for the table's rows
CREATE INDEX bi_auto ON bi_users USING bloomfilter (id);
SELECT capacity >= 20000 AS sized_for_table, target_fpr FROM bloom_index_info('bi_auto');
DROP INDEX bi_auto;

-- growth: past its capacity the index adds segments, each twice as large
-- at half the rate, and stays within its target rate; probes test them all
CREATE TABLE bi_growing (k bigint);
INSERT INTO bi_growing SELECT generate_series(1, 500);
CREATE INDEX bi_growing_k ON bi_growing USING bloomfilter (k) WITH (capacity = 1000, fpr = 0.01);
INSERT INTO bi_growing SELECT generate_series(501, 20000);
SELECT capacity, inserted, segments FROM bloom_index_info('bi_growing_k');
SELECT bloom_index_verify('bi_growing_k') AS live_keys_checked;
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('bi_growing_k', k)) AS false_negatives
FROM bi_growing;
SELECT count(*) FILTER (WHERE bloom_index_contains('bi_growing_k', g)) <= 0.01 * 100000 AS within_target
FROM generate_series(1000001, 1100000) g;
-- the snapshot is one growing value with every segment: same answers
SELECT layout, segments, growth, capacity FROM bloom_info(bloom_index_filter('bi_growing_k'));
SELECT count(*) FILTER (WHERE NOT (SELECT bloom_index_filter('bi_growing_k')) @> k)
       AS snapshot_false_negatives
FROM bi_growing;
SELECT bloom_index_filter('bi_growing_k')::text::bloom = bloom_index_filter('bi_growing_k') AS round_trip;
-- keys already present (in any segment) take no room, so re-inserting
-- them grows nothing
INSERT INTO bi_growing SELECT generate_series(1, 20000);
SELECT segments FROM bloom_index_info('bi_growing_k');
-- a snapshot unions with a filter of the same parameters (segment by
-- segment: the first now holds both sides' first keys)
SELECT (bloom_index_filter('bi_growing_k') | bloom_agg(g, 1000, 0.01, 2)) @> 20050 AS union_has_both
FROM generate_series(20001, 20100) g;
-- REINDEX without a capacity option sizes one segment for the table
ALTER INDEX bi_growing_k RESET (capacity);
REINDEX INDEX bi_growing_k;
SELECT capacity >= 20000 AS sized_for_table, segments FROM bloom_index_info('bi_growing_k');
-- growth = 0: one segment of fixed size, which overfills
CREATE INDEX bi_growing_fixed ON bi_growing USING bloomfilter (k) WITH (capacity = 1000, growth = 0);
INSERT INTO bi_growing SELECT generate_series(20001, 25000);
SELECT segments, estimated_fpr > 0.01 AS overfilled FROM bloom_index_info('bi_growing_fixed');
SELECT bloom_index_verify('bi_growing_fixed') AS live_keys_checked;
ALTER INDEX bi_growing_fixed SET (growth = 4);
REINDEX INDEX bi_growing_fixed;
SELECT growth FROM bloom_info(bloom_index_filter('bi_growing_fixed'));
DROP TABLE bi_growing;

-- expression and partial indexes
CREATE INDEX bi_email_guard ON bi_users USING bloomfilter (lower(email)) WHERE active;
SELECT bloom_index_contains('bi_email_guard', 'user2002@example.org') AS active_row,
       bloom_index_contains('bi_email_guard', 'User2002@Example.org') AS other_case,
       bloom_index_contains('bi_email_guard', 'user2001@example.org') AS inactive_row;
SELECT bloom_index_verify('bi_email_guard') AS active_keys_checked;
-- concurrently too, and on an unlogged table
CREATE INDEX CONCURRENTLY bi_concurrent ON bi_users USING bloomfilter (email);
SELECT bloom_index_contains('bi_concurrent', 'User2002@Example.org') AS found,
       bloom_index_contains('bi_concurrent', 'User2@Example.org') AS deleted_before_build;
CREATE UNLOGGED TABLE bi_unlogged (k int);
CREATE INDEX bi_unlogged_k ON bi_unlogged USING bloomfilter (k);
INSERT INTO bi_unlogged VALUES (7);
SELECT bloom_index_contains('bi_unlogged_k', 7) AS unlogged_found;

-- never used for a scan, even with sequential scans disabled
CREATE FUNCTION bi_plan_mentions(query text, name text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%' || name || '%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END
$$;
SET enable_seqscan = off;
SELECT bi_plan_mentions('SELECT * FROM bi_users WHERE id = 5', 'bi_id_guard') AS id_guard_in_plan,
       bi_plan_mentions('SELECT * FROM bi_users WHERE id = 5', 'Seq Scan') AS seq_scan_in_plan;
RESET enable_seqscan;
DROP FUNCTION bi_plan_mentions(text, text);

-- errors
\set VERBOSITY sqlstate
CREATE INDEX ON bi_users USING bloomfilter (id, email);
CREATE INDEX ON bi_users USING bloomfilter (id) WITH (fpr = 0.9);
CREATE INDEX ON bi_users USING bloomfilter (id) WITH (capacity = -1);
CREATE INDEX ON bi_users USING bloomfilter (id) WITH (colour = 1);
CREATE INDEX ON bi_users USING bloomfilter (id) WITH (growth = 1);
CREATE INDEX ON bi_users USING bloomfilter (id) WITH (growth = 17);
SELECT bloom_index_contains('bi_id_guard', 'x'::text);
SELECT bloom_index_contains('bi_users', 1);
-- an OID that names no relation, in PostgreSQL's words for that
\set VERBOSITY default
SELECT bloom_index_contains(4294967295::oid::regclass, 1);
SELECT bloom_index_filter(4294967295::oid::regclass);
SELECT * FROM bloom_index_info(4294967295::oid::regclass);
SELECT * FROM bloom_index_snapshot(4294967295::oid::regclass);
SELECT * FROM bloom_index_changes(4294967295::oid::regclass, '0/0', 1, '0/0');
SELECT bloom_index_verify(4294967295::oid::regclass);
\set VERBOSITY sqlstate
CREATE INDEX bi_btree ON bi_users (id);
SELECT bloom_index_contains('bi_btree', 1);
SELECT bloom_index_filter('bi_btree');
CREATE TYPE bi_mood AS ENUM ('ok');
CREATE TABLE bi_moods (m bi_mood);
CREATE INDEX ON bi_moods USING bloomfilter (m);
-- reading the index needs SELECT on its table
CREATE ROLE bi_reader;
SET ROLE bi_reader;
SELECT bloom_index_contains('bi_id_guard', 1);
SELECT bloom_index_filter('bi_id_guard');
SELECT * FROM bloom_index_info('bi_id_guard');
SELECT bloom_index_verify('bi_id_guard');
RESET ROLE;
GRANT SELECT ON bi_users TO bi_reader;
SET ROLE bi_reader;
SELECT bloom_index_contains('bi_id_guard', 2002) AS granted;
RESET ROLE;
\set VERBOSITY default
SELECT bloom_index_contains('bi_users', 1);
SELECT bloom_index_contains('bi_btree', 1);
REVOKE SELECT ON bi_users FROM bi_reader;
SET ROLE bi_reader;
SELECT bloom_index_contains('bi_id_guard', 1);
RESET ROLE;

DROP TABLE bi_users, bi_unlogged, bi_moods;
DROP TYPE bi_mood;
REVOKE ALL ON SCHEMA public FROM bi_reader;
DROP ROLE bi_reader;
