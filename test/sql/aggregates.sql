-- The aggregates: self-sizing and fixed bloom_agg, union and intersection,
-- no false negatives, measured false-positive rates, memory per group, and
-- parallel plans that build the very same filter.
\set VERBOSITY terse

CREATE TABLE users (id bigint, name text, uid uuid);
INSERT INTO users
SELECT i * 7, 'user-' || i, md5(i::text)::uuid FROM generate_series(1, 200000) i;
ANALYZE users;

CREATE TABLE user_filters AS
SELECT 'id' AS col, bloom_agg(id) AS f FROM users
UNION ALL SELECT 'name', bloom_agg(name) FROM users
UNION ALL SELECT 'uid', bloom_agg(uid) FROM users;

-- zero false negatives, through every probe form, with the stored filter
SELECT count(*) FILTER (WHERE NOT bloom_contains((SELECT f FROM user_filters WHERE col = 'id'), id)) AS id_fn,
       count(*) FILTER (WHERE NOT (SELECT f FROM user_filters WHERE col = 'name') @> name) AS name_fn,
       count(*) FILTER (WHERE NOT uid <@ (SELECT f FROM user_filters WHERE col = 'uid')) AS uid_fn
FROM users;
-- the same with the filter joined in from its table row by row
SELECT count(*) FILTER (WHERE NOT bloom_contains(f.f, u.id)) AS joined_fn
FROM users u JOIN user_filters f ON f.col = 'id';
-- a filter given as a bound parameter is decoded once for the whole query
SELECT f::text AS id_filter_text FROM user_filters WHERE col = 'id' \gset
PREPARE probe_param(bloom) AS
SELECT count(*) FILTER (WHERE NOT bloom_contains($1, id)) AS param_fn,
       count(*) FILTER (WHERE bloom_contains($1, id + 1)) < 4000 AS few_false_positives
FROM users;
EXECUTE probe_param(:'id_filter_text');
DEALLOCATE probe_param;
-- an int4 literal finds a bigint key
SELECT bloom_contains(f, 70) AS int4_literal, bloom_contains(f, 70::int2) AS int2_literal
FROM user_filters WHERE col = 'id';
-- single probes of a stored filter fetch only its header and one block, with
-- the same answers and the same key-kind check as a full read
SELECT bloom_contains(f, 7) AS present, bloom_contains(f, 8) AS absent,
       f @> 1400000 AS last_present, 1400007 <@ f AS beyond
FROM user_filters WHERE col = 'id';
SELECT bloom_contains(f, 'user-1'::text) FROM user_filters WHERE col = 'id';
-- a join probes a different stored filter from row to row
CREATE TABLE parity_filters AS
SELECT i % 2 AS parity, bloom_agg(i, 100000, 0.01) AS f FROM generate_series(1, 100000) i GROUP BY i % 2;
SELECT count(*) FILTER (WHERE NOT bloom_contains(p.f, g.i)) AS false_negatives,
       count(*) FILTER (WHERE bloom_contains(p.f, g.i + 1000001)) < 3000 AS few_false_positives
FROM generate_series(1, 100000) g(i) JOIN parity_filters p ON p.parity = g.i % 2;

-- measured false-positive rate over 300,000 absent keys, target 0.01
SELECT col, info.capacity, info.inserted, info.hashes,
       round(info.bits::numeric / info.inserted, 2) AS bits_per_key
FROM user_filters, bloom_info(f) info ORDER BY col;
SELECT count(*) FILTER (WHERE bloom_contains(f, i * 7 + 3))::float8 / 300000
       BETWEEN 0.002 AND 0.0125 AS int_fpr_in_range
FROM user_filters, generate_series(1, 300000) i WHERE col = 'id';
SELECT count(*) FILTER (WHERE f @> ('absent-' || i))::float8 / 300000
       BETWEEN 0.002 AND 0.0125 AS text_fpr_in_range
FROM user_filters, generate_series(1, 300000) i WHERE col = 'name';

-- the fpr form
SELECT info.hashes, info.target_fpr, info.capacity
FROM (SELECT bloom_agg(i, 0.001) AS f FROM generate_series(1, 5000) i) s, bloom_info(s.f) info;

-- the fixed form is exactly a sequence of bloom_add on bloom_empty
SELECT bloom_agg(i, 1000, 0.01) = bloom_add_all(bloom_empty(1000, 0.01), array_agg(i)) AS fixed_is_adds
FROM generate_series(1, 5000) i;
SELECT bloom_agg(i, 100000, 0.01) = bloom_add_all(bloom_empty(100000, 0.01), array_agg(i)) AS fixed_before_switch_to_bits
FROM generate_series(1, 50) i;

-- NULLs are skipped; no rows give NULL
SELECT bloom_agg(x) = bloom_agg(x) FILTER (WHERE x IS NOT NULL) AS nulls_skipped,
       (bloom_info(bloom_agg(x, 10, 0.01))).inserted AS fixed_inserted
FROM (VALUES (1), (NULL), (2)) v(x);
SELECT bloom_agg(i) IS NULL AS no_rows, bloom_agg(i, 10, 0.01) IS NULL AS no_rows_fixed,
       bloom_union_agg(bloom_empty(10)) IS NULL AS no_rows_union
FROM generate_series(1, 0) i;

-- union of per-group fixed filters is the fixed filter over all rows
WITH parts AS (
	SELECT i % 10 AS part, bloom_agg(i, 50000, 0.01) AS f
	FROM generate_series(1, 40000) i GROUP BY i % 10
)
SELECT bloom_union_agg(f) = (SELECT bloom_agg(i, 50000, 0.01) FROM generate_series(1, 40000) i)
       AS union_agg_equals_whole
FROM parts;
WITH parts AS (
	SELECT bloom_agg(i, 10000, 0.01) AS f FROM generate_series(1, 6000) i
	UNION ALL
	SELECT bloom_agg(i, 10000, 0.01) FROM generate_series(3001, 9000) i
)
SELECT bloom_contains_all(bloom_intersection_agg(f), ARRAY(SELECT generate_series(3001, 6000))) AS intersection_keeps_common,
       (SELECT count(*) FROM generate_series(1, 3000) i WHERE bloom_intersection_agg(f) @> i) < 100 AS intersection_drops_others,
       (bloom_info(bloom_intersection_agg(f))).inserted AS intersection_inserted
FROM parts;

-- different parameters never combine
SELECT bloom_union_agg(f) FROM (VALUES (bloom_empty(100)), (bloom_empty(1000))) v(f);
SELECT bloom_intersection_agg(f) FROM (VALUES (bloom_empty(100)), (bloom_empty(100, 0.1))) v(f);
SELECT bloom_union_agg(f) FROM (VALUES (bloom_add(bloom_empty(100), 1)), (bloom_add(bloom_empty(100), 'a'::text))) v(f);
SELECT bloom_agg(i, 0, 0.01) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 10, 1.5) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 10 + i, 0.01) FROM generate_series(1, 3) i;

-- many small groups hold hashes, not a 120 kB filter each
SELECT count(*) AS groups, bool_and(bloom_contains_all(f, vals)) AS every_group_has_its_values
FROM (SELECT g, bloom_agg(v) AS f, array_agg(v) AS vals
      FROM (SELECT i / 5 AS g, i AS v FROM generate_series(0, 99999) i) s GROUP BY g) t;

-- a plain bloom_agg reserves its hash buffer for the planner's estimate
-- (100000 rows for each generate_series below, a third of the input): the
-- same filter when the estimate is far too high or far too low, compared
-- with GROUP BY, which reserves nothing
SELECT (SELECT bloom_agg(g) FROM generate_series(1, 300000) g WHERE g <= 10) =
       (SELECT bloom_agg(g) FROM generate_series(1, 10) g) AS overestimate_same,
       (SELECT bloom_agg(g) FROM generate_series(1, 300000) g WHERE g > -1) =
       (SELECT bloom_agg(g) FROM generate_series(1, 300000) g GROUP BY g < 0) AS underestimate_same,
       (SELECT bloom_agg(g, 400000, 0.01) FROM generate_series(1, 300000) g WHERE g > -1) =
       (SELECT bloom_agg(g, 400000, 0.01) FROM generate_series(1, 300000) g GROUP BY g < 0) AS fixed_underestimate_same;

-- parallel plans build the same filter, bit for bit
CREATE TABLE par AS SELECT i AS id, 'k' || (i % 50000) AS k FROM generate_series(1, 300000) i;
ANALYZE par;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE serial_results AS
SELECT bloom_agg(id) AS a, bloom_agg(k, 0.001) AS b, bloom_agg(id, 400000, 0.01) AS c,
       bloom_agg(id, 1000, 0.01) AS d, bloom_agg(id % 90000) AS e,
       bloom_agg(id) FILTER (WHERE id % 10 = 0) AS f
FROM par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT bloom_agg(id), bloom_agg(k, 0.001), bloom_agg(id, 400000, 0.01), bloom_agg(id, 1000, 0.01) FROM par;
-- (e: a worker that met many duplicates de-duplicates before sending)
SELECT s.a = p.a AS self_sizing_same, s.b = p.b AS fpr_form_same, s.c = p.c AS fixed_same,
       s.d = p.d AS fixed_overfilled_same, s.e = p.e AS repeated_values_same
FROM serial_results s,
     (SELECT bloom_agg(id) AS a, bloom_agg(k, 0.001) AS b, bloom_agg(id, 400000, 0.01) AS c,
             bloom_agg(id, 1000, 0.01) AS d, bloom_agg(id % 90000) AS e FROM par) p;
-- no worker can start: the leader runs every partial state and hands each
-- over in memory to the Finalize Aggregate, as the DEBUG lines show (f: a
-- state too small to be grouped into new memory)
CREATE VIEW leader_only_same AS
SELECT s.a = p.a AS self_sizing_same, s.b = p.b AS fpr_form_same,
       s.c = p.c AS fixed_same, s.d = p.d AS fixed_overfilled_same,
       s.e = p.e AS repeated_values_same, s.f = p.f AS small_same
FROM serial_results s,
     (SELECT bloom_agg(id) AS a, bloom_agg(k, 0.001) AS b, bloom_agg(id, 400000, 0.01) AS c,
             bloom_agg(id, 1000, 0.01) AS d, bloom_agg(id % 90000) AS e,
             bloom_agg(id) FILTER (WHERE id % 10 = 0) AS f FROM par) p;
SET max_parallel_workers = 0;
SET client_min_messages = debug1;
SELECT * FROM leader_only_same;
-- with the hand-over turned off, the leader serialises its states like a
-- worker's (no DEBUG line) and the filters are the same
SHOW bloomfilter.parallel_handover;
SET bloomfilter.parallel_handover = off;
SELECT * FROM leader_only_same;
RESET bloomfilter.parallel_handover;
RESET client_min_messages;
-- rescanned, it hands over a new state each time
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
-- (the plan of the join alone: the comparison's InitPlan adds nothing here,
-- and EXPLAIN prints it differently from PostgreSQL 17 on)
EXPLAIN (COSTS OFF)
SELECT v.n, s.a
FROM (VALUES (1), (2), (3)) v(n) LEFT JOIN LATERAL (SELECT bloom_agg(id) AS a FROM par) s ON true;
SET client_min_messages = debug1;
SELECT v.n, s.a = (SELECT a FROM serial_results) AS rescanned_same
FROM (VALUES (1), (2), (3)) v(n) LEFT JOIN LATERAL (SELECT bloom_agg(id) AS a FROM par) s ON true;
RESET client_min_messages;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET max_parallel_workers;
-- with the leader not taking part, every state comes serialised from a
-- worker (when workers can start; otherwise the leader runs the plan)
SET parallel_leader_participation = off;
SELECT s.a = p.a AS no_leader_self_sizing_same, s.c = p.c AS no_leader_fixed_same,
       s.e = p.e AS no_leader_repeated_values_same
FROM serial_results s,
     (SELECT bloom_agg(id) AS a, bloom_agg(id, 400000, 0.01) AS c, bloom_agg(id % 90000) AS e
      FROM par) p;
RESET parallel_leader_participation;
CREATE TABLE part_filters AS
SELECT id % 8 AS part, bloom_agg(id, 400000, 0.01) AS f FROM par GROUP BY id % 8;
EXPLAIN (COSTS OFF) SELECT bloom_union_agg(f), bloom_intersection_agg(f) FROM part_filters;
SELECT bloom_union_agg(f) = (SELECT c FROM serial_results) AS parallel_union_same,
       (bloom_info(bloom_intersection_agg(f))).inserted AS parallel_intersection_inserted
FROM part_filters;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
