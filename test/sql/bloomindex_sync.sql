-- Copies that follow a bloomfilter index: bloom_index_snapshot,
-- bloom_index_changes and bloom_apply_changes (the change log).
SET client_min_messages = warning;
CREATE TABLE sync_users (id bigint);
INSERT INTO sync_users SELECT g FROM generate_series(1, 5000) g;
CREATE INDEX sync_guard ON sync_users USING bloomfilter (id) WITH (capacity = 100000);
CREATE TABLE sync_copies (name text PRIMARY KEY, lsn pg_lsn, filter bloom, timeline bigint, build pg_lsn);
INSERT INTO sync_copies SELECT 'first', * FROM bloom_index_snapshot('sync_guard');

-- the snapshot is bloom_index_filter's value
SELECT filter = bloom_index_filter('sync_guard') AS same_value,
       lsn <= pg_current_wal_insert_lsn() AS lsn_not_ahead,
       timeline = (SELECT timeline_id FROM pg_control_checkpoint()) AS this_timeline
FROM sync_copies WHERE name = 'first';

-- nothing new: an empty delta (its header only), upto not behind since
SELECT c.reload, length(c.delta) AS delta_bytes, c.upto >= s.lsn AS upto_not_behind
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'first';

-- 1,000 single-row inserts: 8 bytes a key and a header; applied, the copy
-- is the index's snapshot byte for byte, and holds every key
DO $$
BEGIN
	FOR i IN 5001..6000 LOOP
		INSERT INTO sync_users VALUES (i);
	END LOOP;
END $$;
SELECT c.reload, length(c.delta) AS delta_bytes,
       bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'first';
SELECT count(*) FILTER (WHERE NOT bloom_apply_changes(s.filter, c.delta) @> u.id) AS misses
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c, sync_users u WHERE s.name = 'first';
-- a copy brought up to upto needs nothing more
UPDATE sync_copies s SET (filter, lsn) =
	(SELECT bloom_apply_changes(s.filter, c.delta), c.upto FROM bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c)
WHERE s.name = 'first';
SELECT length(c.delta) AS delta_bytes FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c
WHERE s.name = 'first';
-- keys the index already holds are not logged again (nor counted)
INSERT INTO sync_users SELECT g FROM generate_series(1, 100) g;
SELECT length(c.delta) AS delta_bytes FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c
WHERE s.name = 'first';

-- a rolled back insert leaves its key (a Bloom filter cannot forget), and
-- its entry: the copy keeps the index's bits
BEGIN;
INSERT INTO sync_users VALUES (7000001);
ROLLBACK;
SELECT bloom_apply_changes(s.filter, c.delta) @> 7000001::bigint AS rolled_back_key_kept,
       bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'first';

-- a growing index: the delta tells the copy of the segments added since
CREATE TABLE sync_growing (id int);
CREATE INDEX sync_growing_guard ON sync_growing USING bloomfilter (id) WITH (capacity = 1000);
INSERT INTO sync_copies SELECT 'growing', * FROM bloom_index_snapshot('sync_growing_guard');
INSERT INTO sync_growing SELECT generate_series(1, 20000);
SELECT segments FROM bloom_index_info('sync_growing_guard');
SELECT c.reload, bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_growing_guard') AS equals_snapshot,
       (bloom_info(bloom_apply_changes(s.filter, c.delta))).segments
FROM sync_copies s, bloom_index_changes('sync_growing_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'growing';

-- a fixed-size index (growth 0)
CREATE TABLE sync_fixed (id int);
CREATE INDEX sync_fixed_guard ON sync_fixed USING bloomfilter (id) WITH (capacity = 1000, growth = 0);
INSERT INTO sync_copies SELECT 'fixed', * FROM bloom_index_snapshot('sync_fixed_guard');
INSERT INTO sync_fixed SELECT generate_series(1, 500);
SELECT bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_fixed_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_fixed_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'fixed';

-- past the horizon: the log keeps at least changelog keys, then reload
CREATE TABLE sync_small_log (id int);
CREATE INDEX sync_small_log_guard ON sync_small_log USING bloomfilter (id) WITH (capacity = 100000, changelog = 1000);
INSERT INTO sync_copies SELECT 'small_log', * FROM bloom_index_snapshot('sync_small_log_guard');
INSERT INTO sync_small_log SELECT generate_series(1, 1000);
SELECT c.reload, bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_small_log_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_small_log_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'small_log';
INSERT INTO sync_small_log SELECT generate_series(1001, 5000);
SELECT c.reload, c.delta IS NULL AS no_delta
FROM sync_copies s, bloom_index_changes('sync_small_log_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'small_log';
-- a recent copy still follows
INSERT INTO sync_copies SELECT 'small_log_2', * FROM bloom_index_snapshot('sync_small_log_guard');
INSERT INTO sync_small_log SELECT generate_series(5001, 5100);
SELECT c.reload, bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_small_log_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_small_log_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'small_log_2';

-- a copy of another build reloads: REINDEX, REINDEX CONCURRENTLY,
-- TRUNCATE, VACUUM FULL
INSERT INTO sync_copies SELECT 'before_rebuilds', * FROM bloom_index_snapshot('sync_guard');
REINDEX INDEX sync_guard;
SELECT c.reload, c.delta IS NULL AS no_delta
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before_rebuilds';
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';
REINDEX INDEX CONCURRENTLY sync_guard;
SELECT c.reload FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before_rebuilds';
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';
VACUUM FULL sync_users;
SELECT c.reload FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before_rebuilds';
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';
TRUNCATE sync_users;
SELECT c.reload FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before_rebuilds';
-- and after the rebuild, copies follow again
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';
INSERT INTO sync_users SELECT generate_series(1, 10);
SELECT c.reload, bloom_apply_changes(s.filter, c.delta) = bloom_index_filter('sync_guard') AS equals_snapshot
FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before_rebuilds';

-- a copy of another build reloads even when it is younger than this build:
-- REINDEX CONCURRENTLY builds the new index while copies of the old one are
-- still made, and the old copy's bits are not the new index's.  The
-- position alone cannot tell, so a copy that does not say its build (or
-- its timeline) reloads.
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';
INSERT INTO sync_copies SELECT 'old_build', lsn, filter, timeline, build FROM sync_copies WHERE name = 'before_rebuilds';
REINDEX INDEX CONCURRENTLY sync_guard;
SELECT c.reload AS reload_without_build, t.reload AS reload_without_timeline,
       b.reload AS reload_by_build, n.build <> s.build AS new_build
FROM sync_copies s, bloom_index_snapshot('sync_guard') n,
	bloom_index_changes('sync_guard', n.lsn, n.timeline, NULL) c,
	bloom_index_changes('sync_guard', n.lsn, NULL, s.build) t,
	bloom_index_changes('sync_guard', n.lsn, n.timeline, s.build) b
WHERE s.name = 'old_build';
SELECT c.reload FROM bloom_index_snapshot('sync_guard') n,
	bloom_index_changes('sync_guard', n.lsn, n.timeline, n.build) c;
UPDATE sync_copies s SET (lsn, filter, timeline, build) = (n.lsn, n.filter, n.timeline, n.build)
FROM bloom_index_snapshot('sync_guard') n WHERE s.name = 'before_rebuilds';

-- another timeline (a copy from before a failover) reloads; NULL since too
SELECT c.reload FROM sync_copies s, bloom_index_changes('sync_guard', s.lsn, s.timeline + 1, s.build) c
WHERE s.name = 'before_rebuilds';
SELECT reload FROM bloom_index_changes('sync_guard', NULL, NULL, NULL);
SELECT bloom_index_changes(NULL, '0/0', 1, '0/0') IS NULL AS null_index;
-- a position ahead of a primary (one restored from a backup, on the same
-- timeline) reloads: the records it writes next take positions the copy
-- was told it had (a standby that lags keeps the copy instead); upto is
-- the primary's own position, never the copy's
SELECT c.upto <= pg_current_wal_insert_lsn() AS upto_not_ahead,
       c.upto >= n.lsn AS upto_is_the_servers, c.reload, length(c.delta) AS delta_bytes
FROM bloom_index_snapshot('sync_guard') n, bloom_index_changes('sync_guard', 'FFFFFFFF/0', n.timeline, n.build) c;
SELECT c.upto <= pg_current_wal_insert_lsn() AS upto_not_ahead, c.reload
FROM bloom_index_snapshot('sync_guard') n,
     bloom_index_changes('sync_guard', 'FFFFFFFF/FFFFFFFF', n.timeline, n.build) c;

-- indexes without a log reload: changelog = 0, unlogged, temporary
CREATE INDEX sync_no_log ON sync_users USING bloomfilter (id) WITH (changelog = 0);
SELECT c.reload FROM bloom_index_snapshot('sync_no_log') n, bloom_index_changes('sync_no_log', n.lsn, n.timeline, n.build) c;
CREATE UNLOGGED TABLE sync_unlogged (id int);
CREATE INDEX sync_unlogged_guard ON sync_unlogged USING bloomfilter (id);
SELECT c.reload FROM bloom_index_snapshot('sync_unlogged_guard') n, bloom_index_changes('sync_unlogged_guard', n.lsn, n.timeline, n.build) c;
CREATE TEMP TABLE sync_temp (id int);
CREATE INDEX sync_temp_guard ON sync_temp USING bloomfilter (id);
SELECT c.reload FROM bloom_index_snapshot('sync_temp_guard') n, bloom_index_changes('sync_temp_guard', n.lsn, n.timeline, n.build) c;
-- the option's bounds
CREATE INDEX sync_bad ON sync_users USING bloomfilter (id) WITH (changelog = -1);
CREATE INDEX sync_bad ON sync_users USING bloomfilter (id) WITH (changelog = 100000000);

-- a partitioned index: the snapshot is its partitions' union; changes reload
CREATE TABLE sync_parted (id int) PARTITION BY RANGE (id);
CREATE TABLE sync_parted_1 PARTITION OF sync_parted FOR VALUES FROM (0) TO (1000);
CREATE TABLE sync_parted_2 PARTITION OF sync_parted FOR VALUES FROM (1000) TO (2000);
CREATE INDEX sync_parted_guard ON sync_parted USING bloomfilter (id) WITH (capacity = 5000);
INSERT INTO sync_parted SELECT generate_series(0, 1999);
SELECT filter = bloom_index_filter('sync_parted_guard') AS same_value, build IS NULL AS no_build
FROM bloom_index_snapshot('sync_parted_guard');
SELECT c.reload FROM bloom_index_snapshot('sync_parted_guard') n, bloom_index_changes('sync_parted_guard', n.lsn, n.timeline, n.build) c;
-- each partition's index follows on its own
SELECT c.reload FROM bloom_index_snapshot('sync_parted_1_id_idx') s,
	LATERAL bloom_index_changes('sync_parted_1_id_idx', s.lsn, s.timeline, s.build) c;

-- deltas applied to what they do not fit
\set VERBOSITY sqlstate
SELECT bloom_apply_changes(bloom_empty(1000, 0.01), c.delta)
FROM sync_copies s, bloom_index_changes('sync_growing_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'growing';
SELECT bloom_apply_changes(g.filter, c.delta)
FROM sync_copies s, sync_copies g, bloom_index_changes('sync_fixed_guard', s.lsn, s.timeline, s.build) c
WHERE s.name = 'fixed' AND g.name = 'growing';
SELECT bloom_apply_changes(filter, '\x'::bytea) FROM sync_copies WHERE name = 'fixed';
SELECT bloom_apply_changes(filter, '\x4244'::bytea) FROM sync_copies WHERE name = 'fixed';
\set VERBOSITY default
-- one byte flipped anywhere: refused whole, as damaged or as another
-- filter's, never applied
DO $$
DECLARE
	d bytea;
	f bloom;
	refused int := 0;
	applied int := 0;
BEGIN
	SELECT c.delta, s.filter INTO d, f
	FROM sync_copies s, bloom_index_changes('sync_fixed_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'fixed';
	FOR i IN 0 .. length(d) - 1 LOOP
		BEGIN
			PERFORM bloom_apply_changes(f, set_byte(d, i, get_byte(d, i) # 1));
			applied := applied + 1;
		EXCEPTION WHEN data_corrupted OR invalid_parameter_value THEN
			refused := refused + 1;
		END;
	END LOOP;
	RAISE WARNING 'one byte flipped: % refused, % applied', refused, applied;
END $$;
-- a copy with more segments than the delta's index (another build)
CREATE TABLE sync_growing_2 (id int);
CREATE INDEX sync_growing_2_guard ON sync_growing_2 USING bloomfilter (id) WITH (capacity = 1000);
SELECT bloom_apply_changes(bloom_index_filter('sync_growing_guard'), c.delta)
FROM bloom_index_snapshot('sync_growing_2_guard') n, bloom_index_changes('sync_growing_2_guard', n.lsn, n.timeline, n.build) c;

-- who may: what the other index functions need
CREATE ROLE sync_reader;
SET ROLE sync_reader;
SELECT lsn IS NOT NULL FROM bloom_index_snapshot('sync_guard');
SELECT reload FROM bloom_index_changes('sync_guard', '0/0', NULL, NULL);
RESET ROLE;
GRANT SELECT ON sync_users TO sync_reader;
SET ROLE sync_reader;
SELECT lsn IS NOT NULL AS may_read FROM bloom_index_snapshot('sync_guard');
RESET ROLE;
ALTER TABLE sync_users ENABLE ROW LEVEL SECURITY;
CREATE POLICY sync_some ON sync_users FOR SELECT USING (id < 5);
SET ROLE sync_reader;
SELECT lsn FROM bloom_index_snapshot('sync_guard');
SELECT reload FROM bloom_index_changes('sync_guard', '0/0', NULL, NULL);
RESET ROLE;
REVOKE ALL ON sync_users FROM sync_reader;
DROP ROLE sync_reader;

DROP TABLE sync_users, sync_growing, sync_growing_2, sync_fixed, sync_small_log, sync_unlogged, sync_parted, sync_copies;
