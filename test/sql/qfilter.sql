-- qfilter: a counting quotient filter.  Add, remove and count; no false
-- negatives or undercounts through any path; unions are multiset sums;
-- window frames, parallel plans and recomputation give the same bytes;
-- every bad input is an error with its SQLSTATE.
\set VERBOSITY default

-- ---------------------------------------------------------------------
-- Construction, add, remove, count
-- ---------------------------------------------------------------------
SELECT format_version, slots, remainder_bits, capacity, target_fpr, count, key_kind
FROM qfilter_info(qfilter_empty(1000));
SELECT slots, remainder_bits FROM qfilter_info(qfilter_empty(1000, 0.001));

CREATE TABLE qf AS
SELECT qfilter_add(qfilter_add(qfilter_add(qfilter_empty(1000), 42), 42), 7) AS f;
SELECT f @> 42 AS has_42, f @> 7 AS has_7, 42 <@ f AS contained, f @> 8 AS has_8,
       qfilter_contains(f, 42::smallint) AS int2_probe, f @> 42.0 AS numeric_probe
FROM qf;
SELECT qfilter_count(f, 42) AS c42, qfilter_count(f, 7) AS c7, qfilter_count(f, 8) AS c8,
       (qfilter_info(f)).count AS total
FROM qf;
-- one copy out at a time; the last one out empties the key
SELECT qfilter_count(qfilter_remove(f, 42), 42) AS one_left,
       qfilter_count(qfilter_remove(qfilter_remove(f, 42), 42), 42) AS none_left,
       (qfilter_info(qfilter_remove(qfilter_remove(qfilter_remove(f, 42), 42), 7))).count AS total_left,
       qfilter_remove(qfilter_remove(qfilter_remove(f, 42), 42), 7)
         = qfilter_remove(qfilter_add(qfilter_empty(1000), 1), 1) AS same_as_emptied
FROM qf;
-- removing what is not there: NOTICE, filter unchanged
SELECT qfilter_remove(f, 12345) = f AS unchanged FROM qf;
SELECT qfilter_remove(qfilter_empty(10), 1) = qfilter_empty(10) AS unchanged_empty;
-- NULLs: adding or removing NULL keeps the filter; probes of NULL are NULL
SELECT qfilter_add(f, NULL::int) = f AS add_null, qfilter_remove(f, NULL::int) = f AS remove_null,
       qfilter_contains(f, NULL::int) IS NULL AS probe_null, qfilter_add(NULL, 1) IS NULL AS null_filter
FROM qf;
-- an empty filter contains nothing, of any kind
SELECT qfilter_empty(10) @> 1 AS int_probe, qfilter_empty(10) @> 'x'::text AS text_probe,
       qfilter_count(qfilter_empty(10), 1) AS count;

-- every key kind: added keys are found, counts are exact for these
SELECT qfilter_add(qfilter_empty(10), 'café'::text) @> 'café'::varchar AS text_kind,
       qfilter_add(qfilter_empty(10), 'ab  '::char(4)) @> 'ab'::text AS bpchar_blanks,
       qfilter_add(qfilter_empty(10), '\x0102'::bytea) @> '\x0102'::bytea AS bytea_kind,
       qfilter_add(qfilter_empty(10), 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid)
         @> 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS uuid_kind,
       qfilter_add(qfilter_empty(10), -0.0::float8) @> 0.0::float4 AS float_zero,
       qfilter_add(qfilter_empty(10), 'NaN'::float8) @> 'NaN'::float8 AS float_nan,
       qfilter_add(qfilter_empty(10), true) @> true AS bool_kind,
       qfilter_add(qfilter_empty(10), date '2026-01-02') @> date '2026-01-02' AS date_kind,
       qfilter_add(qfilter_empty(10), 1.50::numeric) @> 1.5 AS numeric_scale;

-- ---------------------------------------------------------------------
-- Array forms
-- ---------------------------------------------------------------------
SELECT qfilter_contains_all(qfilter_add_all(qfilter_empty(100), ARRAY[1, 2, 3, 3]), ARRAY[1, 2, 3]) AS all_in,
       qfilter_count(qfilter_add_all(qfilter_empty(100), ARRAY[1, 2, 3, 3]), 3) AS three_twice,
       qfilter_contains_any(qfilter_add_all(qfilter_empty(100), ARRAY[1, 2]), ARRAY[9, 2]) AS any_in,
       qfilter_contains_all(qfilter_add_all(qfilter_empty(100), ARRAY[1]), ARRAY[1, NULL]) AS all_with_null,
       qfilter_add_all(qfilter_empty(100), ARRAY[1, NULL, 2]) = qfilter_add_all(qfilter_empty(100), ARRAY[2, 1]) AS nulls_skipped;
-- emptied filters keep their key kind, so they equal each other, not qfilter_empty
SELECT qfilter_remove_all(qfilter_add_all(qfilter_empty(100), ARRAY[1, 2, 3]), ARRAY[3, 2, 1])
       = qfilter_remove(qfilter_add(qfilter_empty(100), 9), 9) AS all_removed;
-- one NOTICE for the keys that are not there
SELECT qfilter_remove_all(qfilter_add_all(qfilter_empty(100), ARRAY[1, 2]), ARRAY[1, 5, 6])
       = qfilter_add(qfilter_empty(100), 2) AS others_removed;

-- ---------------------------------------------------------------------
-- Aggregates
-- ---------------------------------------------------------------------
CREATE TABLE events (id bigint, name text, t int);
INSERT INTO events
SELECT i % 40000, 'user-' || (i % 40000), i FROM generate_series(1, 100000) i;
ANALYZE events;

CREATE TABLE agg AS
SELECT qfilter_agg(id) AS self, qfilter_agg(name, 0.001) AS by_fpr,
       qfilter_agg(id, 60000, 0.01) AS fixed FROM events;
-- zero false negatives and no undercount (each id occurs 2 or 3 times)
SELECT count(*) FILTER (WHERE NOT agg.self @> e.id) AS self_fn,
       count(*) FILTER (WHERE NOT agg.by_fpr @> e.name) AS fpr_fn,
       count(*) FILTER (WHERE qfilter_count(agg.self, e.id) < e.n) AS undercounts
FROM agg, (SELECT id, name, count(*) AS n FROM events GROUP BY id, name) e;
SELECT capacity, count, target_fpr, key_kind FROM agg, qfilter_info(agg.self);
SELECT capacity, count, target_fpr, key_kind FROM agg, qfilter_info(agg.by_fpr);
-- measured false positives of absent keys, against the rates asked for
SELECT count(*) FILTER (WHERE agg.self @> g) < 0.01 * 100000 AS self_rate_ok,
       count(*) FILTER (WHERE agg.by_fpr @> ('absent-' || g)) < 0.001 * 100000 * 1.5 AS fpr_rate_ok
FROM agg, generate_series(1000000, 1099999) g;
-- the aggregate equals adding every value in turn
SELECT qfilter_add_all(qfilter_empty(60000), array_agg(id)) = (SELECT fixed FROM agg) AS agg_equals_adds
FROM events;
-- parameters that change from row to row are refused, as bloom_agg's are:
-- the first row's would decide, and the filter depend on the rows' order
\set VERBOSITY terse
SELECT qfilter_agg(g, CASE WHEN g % 2 = 0 THEN 0.02 ELSE 0.01 END) FROM generate_series(1, 10) g;
SELECT qfilter_agg(g, 10 + g % 2, 0.01) FROM generate_series(1, 10) g;
\set VERBOSITY default
-- no rows: NULL; only NULLs: an empty filter
SELECT qfilter_agg(id) IS NULL AS no_rows FROM events WHERE false;
-- over only NULLs every form is NULL, as bloom_agg and sum are, per group too
SELECT qfilter_agg(NULL::int) IS NULL AS self_only_nulls,
       qfilter_agg(NULL::int, 0.01) IS NULL AS fpr_only_nulls,
       qfilter_agg(NULL::int, 10, 0.01) IS NULL AS fixed_only_nulls
FROM generate_series(1, 3);
SELECT g % 2 AS grp, qfilter_agg(CASE WHEN g % 2 = 0 THEN g END) IS NULL AS only_nulls
FROM generate_series(1, 6) g GROUP BY g % 2 ORDER BY 1;
SELECT g, qfilter_agg(CASE WHEN g > 2 THEN g END) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) IS NULL
       AS frame_only_nulls
FROM generate_series(1, 4) g ORDER BY g;

-- union: the multiset sum, as | and as an aggregate
SELECT qfilter_count(a | b, 5) AS five_twice, (qfilter_info(a | b)).count AS total,
       a | b = qfilter_add_all(a, ARRAY[5, 6]) AS union_equals_adds,
       qfilter_union_agg(x) = a | b AS union_agg_same
FROM (SELECT qfilter_add_all(qfilter_empty(100), ARRAY[4, 5]) AS a,
             qfilter_add_all(qfilter_empty(100), ARRAY[5, 6]) AS b) s,
     LATERAL (VALUES (a), (b), (NULL::qfilter)) v(x)
GROUP BY a, b;
-- union of a grown filter and a fresh one: grows once, keys of both found
SELECT slots > (qfilter_info(qfilter_empty(100))).slots AS grew, count, key_kind
FROM qfilter_info((SELECT qfilter_agg(g, 100, 0.01) FROM generate_series(1, 150) g)
                  | (SELECT qfilter_agg(g, 100, 0.01) FROM generate_series(151, 190) g));

-- moving window frames use the inverse transition and give the same bytes
-- as recomputing each frame
SELECT bool_and(w.f = (SELECT qfilter_agg(e2.id) FROM events e2 WHERE e2.t BETWEEN w.t - 6 AND w.t))
       AS frames_same
FROM (SELECT t, qfilter_agg(id) OVER (ORDER BY t ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS f
      FROM events WHERE t <= 300) w;
SELECT bool_and(w.f = (SELECT qfilter_agg(e2.id, 50, 0.01) FROM events e2 WHERE e2.t BETWEEN w.t - 9 AND w.t))
       AS fixed_frames_same
FROM (SELECT t, qfilter_agg(id, 50, 0.01) OVER (ORDER BY t ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS f
      FROM events WHERE t <= 200) w;

-- parallel plans build the same filter, byte for byte
SET max_parallel_workers_per_gather = 0;
CREATE TABLE qf_serial AS
SELECT qfilter_agg(id) AS a, qfilter_agg(name, 0.001) AS b, qfilter_agg(id, 60000, 0.01) AS c FROM events;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT qfilter_agg(id) FROM events;
SELECT s.a = p.a AS self_same, s.b = p.b AS fpr_same, s.c = p.c AS fixed_same
FROM qf_serial s,
     (SELECT qfilter_agg(id) AS a, qfilter_agg(name, 0.001) AS b,
             qfilter_agg(id, 60000, 0.01) AS c FROM events) p;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- ---------------------------------------------------------------------
-- Forms: text, bytea, binary COPY; comparison and grouping
-- ---------------------------------------------------------------------
SELECT f::text LIKE 'qfilter:%' AS text_prefix, f::text::qfilter = f AS text_round_trip,
       f::bytea::qfilter = f AS bytea_round_trip, substr(f::bytea, 1, 2) AS magic
FROM qf;
-- in the cluster's own directory: a file under /tmp would outlive it, owned by
-- the server's user, and refuse the next build's server as another user
SELECT current_setting('data_directory') || '/bloomfilter_regress_qfilter.bin' AS regress_qfilter_bin \gset
COPY agg TO :'regress_qfilter_bin' WITH (FORMAT binary);
CREATE TABLE agg_copy (LIKE agg);
COPY agg_copy FROM :'regress_qfilter_bin' WITH (FORMAT binary);
SELECT a.self = b.self AND a.by_fpr = b.by_fpr AND a.fixed = b.fixed AS binary_copy_round_trip
FROM agg a, agg_copy b;
SELECT count(DISTINCT f) AS distinct_filters, count(*) AS rows
FROM (VALUES (qfilter_add(qfilter_empty(10), 1)), (qfilter_add(qfilter_empty(10), 1)),
             (qfilter_add(qfilter_empty(10), 2))) v(f);
SET enable_hashagg = off;
SELECT count(*) FROM (SELECT f FROM (VALUES (qfilter_add(qfilter_empty(10), 1)),
                                            (qfilter_add(qfilter_empty(10), 1))) v(f) GROUP BY f) g;
RESET enable_hashagg;

-- ---------------------------------------------------------------------
-- Errors
-- ---------------------------------------------------------------------
\set VERBOSITY sqlstate
SELECT qfilter_empty(0);
SELECT qfilter_empty(10, 0);
SELECT qfilter_empty(10, 0.6);
SELECT qfilter_empty(1000000000, 1e-15);
SELECT qfilter_empty(9000000000000);
SELECT qfilter_agg(g, 0, 0.01) FROM generate_series(1, 3) g;
-- kinds never mix: a text key in a number filter would be a false negative
SELECT qfilter_add(qfilter_empty(10), 1) @> 'x'::text;
SELECT qfilter_remove(qfilter_add(qfilter_empty(10), 1), 'x'::text);
SELECT qfilter_add(qfilter_add(qfilter_empty(10), 1), 'x'::text);
-- a filter is not a key
SELECT qfilter_add(qfilter_empty(10), qfilter_empty(10));
SELECT qfilter_add(qfilter_empty(10), bloom_empty(10));
-- unions need the same parameters and kinds
SELECT qfilter_empty(10) | qfilter_empty(20);
SELECT qfilter_add(qfilter_empty(10), 1) | qfilter_add(qfilter_empty(10), 'x'::text);
SELECT qfilter_union_agg(f) FROM (VALUES (qfilter_empty(10)), (qfilter_empty(11))) v(f);
-- past twice the capacity a filter grows on, exactly, and warns once its
-- rate passes twice the target; valid unions never fail for size
SELECT count, target_fpr, estimated_fpr > 0.02 AS rate_passed_twice_the_target
FROM qfilter_info(qfilter_add_all(qfilter_empty(10), ARRAY(SELECT generate_series(1, 40))));
SELECT count FROM qfilter_info((SELECT qfilter_agg(g, 10, 0.01) FROM generate_series(1, 40) g));
SELECT count, qfilter_contains_all(f, ARRAY(SELECT generate_series(1, 3000))) AS all_found
FROM (SELECT qfilter_union_agg(f) AS f
      FROM (SELECT qfilter_agg(g, 1000, 0.01) AS f FROM generate_series(1, 3000) g
            GROUP BY g % 3) parts) u, qfilter_info(u.f);
SELECT count FROM qfilter_info((SELECT qfilter_agg(g, 1000, 0.01) FROM generate_series(1, 1000) g)
                               | (SELECT qfilter_agg(g, 1000, 0.01) FROM generate_series(1001, 2000) g)
                               | (SELECT qfilter_agg(g, 1000, 0.01) FROM generate_series(2001, 3000) g));
-- it stops only where its fingerprints have no remainder bit left
SELECT qfilter_add_all(qfilter_empty(10, 0.5), ARRAY(SELECT generate_series(1, 100000)));
-- bad input: syntax, corruption, truncation
SELECT 'nope'::qfilter;
SELECT 'qfilter:!!!'::qfilter;
SELECT 'qfilter:UUY='::qfilter;
SELECT '\x5146'::bytea::qfilter;
SELECT (SELECT set_byte(f::bytea, 30, get_byte(f::bytea, 30) # 1) FROM qf)::qfilter;
SELECT (SELECT set_byte(f::bytea, 100, get_byte(f::bytea, 100) # 1) FROM qf)::qfilter;
SELECT (SELECT substr(f::bytea, 1, length(f::bytea) - 1) FROM qf)::qfilter;
-- a bloom value is not a qfilter, nor the other way round
SELECT bloom_empty(10)::bytea::qfilter;
SELECT qfilter_empty(10)::bytea::bloom;
-- the messages of the errors users meet most
\set VERBOSITY default
SELECT count FROM qfilter_info(qfilter_add_all(qfilter_empty(10), ARRAY(SELECT generate_series(1, 40))));
SELECT qfilter_add_all(qfilter_empty(10, 0.5), ARRAY(SELECT generate_series(1, 100000)));
SELECT qfilter_empty(10) | qfilter_empty(20);
SELECT qfilter_add(qfilter_empty(10), 1) @> 'x'::text;

DROP TABLE qf, events, agg, agg_copy, qf_serial;
