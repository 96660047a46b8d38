-- Whole-value integrity (format versions bloom 3, qfilter 2): every input
-- path checks the body, so that a damaged byte anywhere is an error, not a
-- filter that answers "absent" for a value it holds; values of the 1.0
-- formats still read and answer; and every producer's output passes its
-- own input.
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;

-- ---------------------------------------------------------------------
-- Damaged bytes in the body, through every input path
-- ---------------------------------------------------------------------
CREATE TABLE damaged (name text, b bytea);
INSERT INTO damaged
SELECT 'bloom', bloom_agg(g, 1000, 0.01)::bytea FROM generate_series(1, 500) g
UNION ALL
SELECT 'chain', bloom_agg(g, 100, 0.01, 2)::bytea FROM generate_series(1, 500) g
UNION ALL
SELECT 'qfilter', qfilter_agg(g, 1000, 0.01)::bytea FROM generate_series(1, 500) g;
SELECT name, CASE WHEN name = 'qfilter' THEN (qfilter_info(b::qfilter)).format_version
                  ELSE (bloom_info(b::bloom)).format_version END AS format_version,
       CASE WHEN name = 'chain' THEN (bloom_info(b::bloom)).segments END AS segments
FROM damaged ORDER BY name;

-- one byte cleared in the middle of the body, and one byte of the last
-- block: the bytea cast refuses them with 22P03, text input with 22P02
SELECT name, at,
       sqlstate_of(format('SELECT %L::bytea::%s', set_byte(b, at, get_byte(b, at) # 255),
                          CASE WHEN name = 'qfilter' THEN 'qfilter' ELSE 'bloom' END)) AS bytea_cast,
       sqlstate_of(format('SELECT %L::%s',
                          CASE WHEN name = 'qfilter' THEN 'qfilter:' ELSE 'bloom:' END ||
                          translate(encode(set_byte(b, at, get_byte(b, at) # 255), 'base64'), E'\n', ''),
                          CASE WHEN name = 'qfilter' THEN 'qfilter' ELSE 'bloom' END)) AS text_input
FROM damaged, LATERAL (VALUES (length(b) / 2), (length(b) - 9)) p(at)
ORDER BY name, at;

-- the bit that made a value present, cleared: refused, never "absent"
SELECT sqlstate_of(format('SELECT %L::bytea::bloom', set_byte(f::bytea, 60, 0))) AS cleared
FROM (SELECT bloom_add(bloom_empty(10), 1) AS f) s;

-- binary COPY goes through the receive functions: one byte of the last
-- block complemented in the file (40 bytes before its end: the value's
-- last bytes, then COPY's 2-byte trailer) is refused with 22P03
CREATE TABLE damaged_bloom (f bloom);
CREATE TABLE damaged_qfilter (f qfilter);
INSERT INTO damaged_bloom SELECT b::bloom FROM damaged WHERE name = 'bloom';
INSERT INTO damaged_qfilter SELECT b::qfilter FROM damaged WHERE name = 'qfilter';
-- in the cluster's own directory: a file under /tmp would outlive it, owned by
-- the server's user, and refuse the next build's server as another user
SELECT current_setting('data_directory') || '/bloomfilter_integrity_bloom.bin' AS integrity_bloom_bin \gset
COPY damaged_bloom TO :'integrity_bloom_bin' (FORMAT binary);
SELECT current_setting('data_directory') || '/bloomfilter_integrity_qfilter.bin' AS integrity_qfilter_bin \gset
COPY damaged_qfilter TO :'integrity_qfilter_bin' (FORMAT binary);
CREATE FUNCTION damaged_copy(tab text, file text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY %I FROM PROGRAM %L (FORMAT binary)', tab,
		format('f=%s; n=$(stat -c %%s $f); b=$(od -An -tu1 -j $((n - 40)) -N1 $f); '
			   'head -c $((n - 40)) $f; printf "\\$(printf %%o $((255 - b)))"; tail -c 39 $f',
			   file));
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;
SELECT damaged_copy('damaged_bloom', :'integrity_bloom_bin') AS bloom_copy,
       damaged_copy('damaged_qfilter', :'integrity_qfilter_bin') AS qfilter_copy;
-- the file as written loads (the damage above is all that is refused)
COPY damaged_bloom FROM :'integrity_bloom_bin' (FORMAT binary);
COPY damaged_qfilter FROM :'integrity_qfilter_bin' (FORMAT binary);
SELECT (SELECT count(*) FROM damaged_bloom) AS blooms, (SELECT count(*) FROM damaged_qfilter) AS qfilters;

-- the message says what is wrong
\set VERBOSITY default
SELECT set_byte(b, length(b) - 1, get_byte(b, length(b) - 1) # 1)::bloom FROM damaged WHERE name = 'chain';
SELECT set_byte(b, length(b) - 9, get_byte(b, length(b) - 9) # 1)::qfilter FROM damaged WHERE name = 'qfilter';
\set VERBOSITY terse

-- ---------------------------------------------------------------------
-- Values of the 1.0 formats (bloom 2, qfilter 1) read and answer; checked
-- by their header checksum and structure only, they become the new
-- version, body check included, the first time they are changed
-- ---------------------------------------------------------------------
CREATE TABLE old_values (name text, b bytea);
INSERT INTO old_values VALUES
  ('qfilter v1 of 1, 2, 3, 3', '\x51460107010000000000000000000000000000000000000064000000000000007b14ae47e17a843f04000000000000000200000005000000af0f17cd0000000000008100400000000000810080000000000000000000000000000000000000000000210000000000de00000000000000000000000090c9000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'),
  ('chain v2 of 1, 2, 3', '\x42460202000100020000000001000000000000000000000064000000000000007b14ae47e17a843f0300000000000000439bd85d0000000003000000070000000300000000000000000000001000000000000002000000200800040401000000000010000000000000000210000200800800000000000000000000000000000c00050001000008020000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');
SELECT (qfilter_info(b::qfilter)).format_version, qfilter_count(b::qfilter, 3) AS count_3,
       qfilter_count(b::qfilter, 1) AS count_1, qfilter_contains(b::qfilter, 4) AS has_4,
       (qfilter_info(qfilter_add(b::qfilter, 4))).format_version AS after_add,
       qfilter_add(b::qfilter, 4) = qfilter_add_all(qfilter_empty(100), ARRAY[1, 2, 3, 3, 4]) AS same_as_new,
       (b::qfilter)::text::qfilter::bytea = b AS text_round_trip
FROM old_values WHERE name LIKE 'qfilter%';
SELECT (bloom_info(b::bloom)).format_version, (bloom_info(b::bloom)).layout,
       b::bloom @> 1 AND b::bloom @> 2 AND b::bloom @> 3 AS has_1_2_3,
       (bloom_info(bloom_add(b::bloom, 4))).format_version AS after_add,
       bloom_add(b::bloom, 4) = bloom_add_all(bloom_empty(100, 0.01, growth => 2), ARRAY[1, 2, 3, 4]) AS same_as_new,
       (b::bloom | bloom_add(bloom_empty(100, 0.01, growth => 2), 9)) @> 9 AS union_with_new
FROM old_values WHERE name LIKE 'chain%';
-- ---------------------------------------------------------------------
-- Every producer's output passes its own input (bytea cast)
-- ---------------------------------------------------------------------
CREATE FUNCTION passes(f bloom) RETURNS boolean LANGUAGE sql AS $$
	SELECT f::bytea::bloom::bytea = f::bytea AND f::text::bloom::bytea = f::bytea $$;
CREATE FUNCTION passes(f qfilter) RETURNS boolean LANGUAGE sql AS $$
	SELECT f::bytea::qfilter::bytea = f::bytea AND f::text::qfilter::bytea = f::bytea $$;
CREATE TABLE producers (what text, f bloom);
INSERT INTO producers
SELECT 'bloom_empty', bloom_empty(1000)
UNION ALL SELECT 'bloom_add', bloom_add(bloom_empty(1000), 42)
UNION ALL SELECT 'bloom_add_all', bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3])
UNION ALL SELECT 'bloom_union', bloom_add(bloom_empty(1000), 1) | bloom_add(bloom_empty(1000), 2)
UNION ALL SELECT 'bloom_intersection', bloom_add_all(bloom_empty(1000), ARRAY[1, 2]) & bloom_add_all(bloom_empty(1000), ARRAY[2, 3])
UNION ALL SELECT 'bloom_agg self-sizing', bloom_agg(g) FROM generate_series(1, 3000) g
UNION ALL SELECT 'bloom_agg fpr', bloom_agg(g, 0.001) FROM generate_series(1, 3000) g
UNION ALL SELECT 'bloom_agg fixed', bloom_agg(g, 5000, 0.01) FROM generate_series(1, 3000) g
UNION ALL SELECT 'bloom_agg growing', bloom_agg(g, 100, 0.01, 2) FROM generate_series(1, 3000) g
UNION ALL SELECT 'growing chain by adds', bloom_add_all(bloom_empty(100, 0.01, growth => 2), array_agg(g)) FROM generate_series(1, 1000) g
UNION ALL SELECT 'chain union', bloom_add_all(bloom_empty(100, 0.01, growth => 2), ARRAY(SELECT generate_series(1, 500)))
                              | bloom_add(bloom_empty(100, 0.01, growth => 2), 7)
UNION ALL SELECT 'bloom_union_agg', bloom_union_agg(f) FROM (SELECT bloom_agg(g, 1000, 0.01) AS f FROM generate_series(1, 300) g GROUP BY g % 3) s
UNION ALL SELECT 'bloom_intersection_agg', bloom_intersection_agg(f) FROM (SELECT bloom_agg(g, 1000, 0.01) AS f FROM generate_series(1, 300) g GROUP BY g % 3) s
UNION ALL SELECT 'typmod coercion', bloom_add(bloom_empty(1000), 5)::bloom(1000, 0.01);

-- parallel aggregates: partial filters travel serialised to the leader
CREATE TABLE integrity_rows AS SELECT g AS id FROM generate_series(1, 100000) g;
ANALYZE integrity_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
INSERT INTO producers
SELECT 'bloom_agg parallel', bloom_agg(id) FROM integrity_rows
UNION ALL SELECT 'bloom_agg fixed parallel', bloom_agg(id, 200000, 0.01) FROM integrity_rows
UNION ALL SELECT 'bloom_agg growing parallel', bloom_agg(id, 10000, 0.01, 2) FROM integrity_rows;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- a PL/pgSQL loop (an expanded object changed in place on PostgreSQL 18)
DO $$
DECLARE
	f bloom := bloom_empty(1000);
	c bloom := bloom_empty(50, 0.01, growth => 2);
BEGIN
	FOR i IN 1..300 LOOP
		f := bloom_add(f, i);
		c := bloom_add(c, i);
	END LOOP;
	INSERT INTO producers VALUES ('PL/pgSQL loop', f), ('PL/pgSQL loop, chain', c);
END $$;

-- the index: its snapshot, its copy, and a copy brought up to date
CREATE TABLE guarded (k int);
INSERT INTO guarded SELECT generate_series(1, 2000);
CREATE INDEX guarded_fixed ON guarded USING bloomfilter (k);
CREATE INDEX guarded_growing ON guarded USING bloomfilter (k) WITH (capacity = 100, growth = 2);
INSERT INTO producers
SELECT 'bloom_index_filter', bloom_index_filter('guarded_fixed')
UNION ALL SELECT 'bloom_index_filter, growing', bloom_index_filter('guarded_growing');
CREATE TABLE snapshots AS
SELECT 'fixed' AS name, * FROM bloom_index_snapshot('guarded_fixed')
UNION ALL SELECT 'growing', * FROM bloom_index_snapshot('guarded_growing');
INSERT INTO guarded SELECT generate_series(2001, 4000);
INSERT INTO producers
SELECT 'bloom_index_snapshot ' || name, filter FROM snapshots
UNION ALL
SELECT 'bloom_apply_changes ' || s.name, bloom_apply_changes(s.filter, c.delta)
FROM snapshots s,
     bloom_index_changes(CASE WHEN s.name = 'fixed' THEN 'guarded_fixed'::regclass ELSE 'guarded_growing' END,
                         s.lsn, s.timeline, s.build) c;

SELECT what, passes(f), (bloom_info(f)).format_version FROM producers ORDER BY what;
SELECT bloom_apply_changes(filter, delta) @> 3999 AS applied_has_3999
FROM snapshots s, bloom_index_changes('guarded_growing', s.lsn, s.timeline, s.build) c
WHERE s.name = 'growing';

-- qfilter's producers
CREATE TABLE qproducers (what text, f qfilter);
INSERT INTO qproducers
SELECT 'qfilter_empty', qfilter_empty(1000)
UNION ALL SELECT 'qfilter_add', qfilter_add(qfilter_empty(1000), 42)
UNION ALL SELECT 'qfilter_add_all', qfilter_add_all(qfilter_empty(1000), ARRAY[1, 2, 2, 3])
UNION ALL SELECT 'qfilter_remove', qfilter_remove(qfilter_add_all(qfilter_empty(1000), ARRAY[1, 2]), 1)
UNION ALL SELECT 'qfilter_remove_all', qfilter_remove_all(qfilter_add_all(qfilter_empty(1000), ARRAY[1, 2, 3]), ARRAY[1, 3])
UNION ALL SELECT 'qfilter_union', qfilter_add(qfilter_empty(1000), 1) | qfilter_add(qfilter_empty(1000), 2)
UNION ALL SELECT 'qfilter grown past capacity', qfilter_add_all(qfilter_empty(10), ARRAY(SELECT generate_series(1, 100)))
UNION ALL SELECT 'qfilter_agg', qfilter_agg(g % 700) FROM generate_series(1, 3000) g
UNION ALL SELECT 'qfilter_agg fixed', qfilter_agg(g, 5000, 0.01) FROM generate_series(1, 3000) g
UNION ALL SELECT 'qfilter_union_agg', qfilter_union_agg(f) FROM (SELECT qfilter_agg(g) AS f FROM generate_series(1, 300) g GROUP BY g % 3) s;
INSERT INTO qproducers
SELECT 'qfilter_agg moving window', f FROM (
	SELECT qfilter_agg(g, 100, 0.01) OVER (ORDER BY g ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS f
	FROM generate_series(1, 20) g) w LIMIT 1 OFFSET 10;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
INSERT INTO qproducers SELECT 'qfilter_agg parallel', qfilter_agg(id) FROM integrity_rows;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT what, passes(f), (qfilter_info(f)).format_version FROM qproducers ORDER BY what;
