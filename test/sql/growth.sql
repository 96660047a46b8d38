-- Growing filters: bloom_empty(capacity, fpr, growth) and
-- bloom_agg(value, capacity, fpr, growth) build a chain of segments (a
-- scalable Bloom filter) that starts a segment growth times larger, at half
-- the rate, whenever its last is full.

-- a new chain: one segment, sized for the capacity at half the target rate
SELECT layout, bits = (bloom_params(1000, 0.005)).bits AS first_segment_at_half_rate,
       hashes, capacity, target_fpr, inserted, segments, growth
FROM bloom_info(bloom_empty(1000, 0.01, 2));
SELECT segments, growth FROM bloom_info(bloom_empty(1000, 0.01));

-- it grows: 20x its capacity in five segments (1000 + 2000 + ... + 16000),
-- finds every value added, and stays within its target rate
CREATE TEMP TABLE grown AS
SELECT bloom_add_all(bloom_empty(1000, 0.01, 2), array_agg(g)) AS f
FROM generate_series(1, 20000) g;
SELECT layout, segments, capacity, inserted, over_capacity FROM grown, bloom_info(f);
SELECT count(*) AS missing FROM grown, generate_series(1, 20000) g WHERE NOT f @> g;
SELECT (SELECT count(*) FILTER (WHERE f @> g) FROM generate_series(1000001, 1200000) g)
         <= 0.01 * 200000 AS within_target,
       bloom_fpr(f) <= 0.01 AS estimate_within_target
FROM grown;

-- values already present take no room: adding them again grows nothing
SELECT (bloom_info(bloom_add_all(f, ARRAY(SELECT generate_series(1, 20000))))).segments AS segments_after_readding,
       (bloom_info(bloom_add_all(f, ARRAY(SELECT generate_series(1, 20000))))).inserted
FROM grown;

-- the growing aggregate builds its chain from the distinct values in one
-- fixed order, not in the order they came (bloom_agg.c): the same segments
-- and count as adding them, every value found, the rate within target
CREATE TEMP TABLE grown_agg AS
SELECT bloom_agg(g, 1000, 0.01, 2) AS f FROM generate_series(1, 20000) g;
SELECT a.segments = b.segments AS same_segments, a.inserted = b.inserted AS same_count,
       a.capacity = b.capacity AS same_capacity
FROM grown_agg, grown, bloom_info(grown_agg.f) a, bloom_info(grown.f) b;
SELECT count(*) AS agg_missing FROM grown_agg, generate_series(1, 20000) g WHERE NOT f @> g;
SELECT (SELECT count(*) FILTER (WHERE f @> g) FROM generate_series(1000001, 1200000) g)
       <= 0.01 * 200000 AS agg_within_target
FROM grown_agg;
-- so it is the same whatever the order of the rows, and repeats change nothing
SELECT bloom_agg(g, 1000, 0.01, 2) = (SELECT f FROM grown_agg) AS any_order_same
FROM (SELECT g FROM generate_series(1, 20000) g ORDER BY g DESC) s;
SELECT bloom_agg(g % 20000 + 1, 1000, 0.01, 2) = (SELECT f FROM grown_agg) AS repeats_same
FROM generate_series(1, 60000) g;
-- bloom_add_all and a loop of bloom_add build the same value as each other
DO $$
DECLARE
	built bloom := bloom_empty(1000, 0.01, 2);
BEGIN
	FOR i IN 1..20000 LOOP
		built := bloom_add(built, i);
	END LOOP;
	RAISE NOTICE 'loop equals add_all: %', built = (SELECT f FROM grown);
END $$;
SELECT bloom_add(bloom_add(bloom_empty(10, 0.01, 3), 1), 2) = bloom_empty(10, 0.01, 3) + 1 + 2 AS operator_form;

-- the aggregate skips NULLs, needs the same parameters on every row, and
-- never runs in parallel (a parallel union would overfill the first segment)
SELECT (bloom_info(bloom_agg(v, 10, 0.1, 2))).inserted FROM (VALUES (1), (NULL), (2)) t(v);
SELECT bloom_agg(g, 10 + g % 2, 0.1, 2) FROM generate_series(1, 3) g;
SELECT bloom_agg(g, 10, 0.1, NULL) FROM generate_series(1, 3) g;
-- growth 0: a filter of fixed size, as bloom_empty(capacity, fpr, 0) makes
SELECT bloom_agg(g, 1000, 0.01, 0) = bloom_agg(g, 1000, 0.01) AS fixed_form
FROM generate_series(1, 1000) g;
SELECT aggcombinefn <> 0 AND aggserialfn <> 0 AS combines FROM pg_aggregate
WHERE aggfnoid = 'bloom_agg(anycompatible, bigint, double precision, integer)'::regprocedure;

-- union: segment by segment, the longer chain's extra segments as they are;
-- it commutes and keeps every value of both sides
CREATE TEMP TABLE pair AS
SELECT (SELECT bloom_agg(g, 1000, 0.01, 2) FROM generate_series(1, 200) g) AS a,
       (SELECT bloom_agg(g, 1000, 0.01, 2) FROM generate_series(10001, 16000) g) AS b;
SELECT (bloom_info(a)).segments AS a_segments, (bloom_info(b)).segments AS b_segments,
       (bloom_info(a | b)).segments, (bloom_info(a | b)).inserted,
       a | b = b | a AS commutes
FROM pair;
SELECT count(*) AS missing FROM pair, generate_series(1, 200) g WHERE NOT (a | b) @> g;
SELECT count(*) AS missing FROM pair, generate_series(10001, 16000) g WHERE NOT (a | b) @> g;
SELECT bloom_union_agg(f) = (SELECT a | b FROM pair) AS union_agg_same
FROM (SELECT a FROM pair UNION ALL SELECT b FROM pair) t(f);
-- a union of a filter with itself changes no bit, only the counts
SELECT (bloom_info(f | f)).bits_set = (bloom_info(f)).bits_set AS same_bits,
       (bloom_info(f | f)).inserted FROM grown;

-- a union never grows a chain: segments that each took their capacity
-- overfill side by side, and the warning says so
SELECT (bloom_info(a | b)).segments, (bloom_info(a | b)).over_capacity
FROM (SELECT bloom_agg(g, 100, 0.01, 2) AS a FROM generate_series(1, 100) g) x,
     (SELECT bloom_agg(g, 100, 0.01, 2) AS b FROM generate_series(101, 200) g) y;

-- what cannot be combined
SELECT bloom_empty(1000, 0.01, 2) & bloom_empty(1000, 0.01, 2);
SELECT bloom_intersection_agg(f) FROM (VALUES (bloom_empty(10, 0.1, 2)), (bloom_empty(10, 0.1, 2))) t(f);
SELECT bloom_empty(1000, 0.01, 2) | bloom_empty(1000, 0.01, 3);
SELECT bloom_empty(1000, 0.01, 2) | bloom_empty(1000, 0.01);
SELECT bloom_empty(1000, 0.01, 2) | bloom_empty(1000, 0.02, 2);

-- parameters
SELECT bloom_empty(1000, 0.01, 1);
SELECT bloom_empty(1000, 0.01, 17);
SELECT bloom_empty(1000, 0.01, -2);
SELECT bloom_empty(0, 0.01, 2);
SELECT bloom_empty(1000, 1.5e-18, 2);
-- a first segment of the largest size leaves no room for its descriptor
SELECT bloom_empty(604941108, 0.02, 2);

-- key kinds are checked as for any filter
SELECT bloom_empty(10, 0.01, 2) + 1 @> 'a'::text;

-- a chain stops growing where its next segment's rate cannot be reached
-- (halving 1e-16 five times passes 1e-18) or its size would pass the
-- largest value; then its last segment overfills, with the warning
CREATE TEMP TABLE stopped AS
SELECT bloom_add_all(bloom_empty(1, 1e-16, 2), ARRAY(SELECT generate_series(1, 1000))) f;
SELECT segments, over_capacity,
       (SELECT count(*) FROM generate_series(1, 1000) g WHERE NOT f @> g) AS missing
FROM stopped, bloom_info(f);
SELECT (bloom_info(bloom_add_all(bloom_empty(1, 0.4, 16), ARRAY(SELECT generate_series(1, 100000))))).segments;

-- text and binary forms round-trip and are validated
SELECT f::text::bloom = f AS text_round_trip, f::bytea::bloom = f AS bytea_round_trip FROM grown;
SELECT bloom_contains('bloom:QkYCAgABAAIAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwIAAAAAAAAA6oBOpAAAAAABAAAABwAAAAEAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAAAAAAAAAAAAAAAAAAAAAAgABAAAAAAIAg=='::bloom, 2);
-- a segment whose k (byte 60) was changed would answer "absent" for values added
SELECT overlay(bloom_add(bloom_empty(10, 0.01, 2), 1)::bytea placing '\x03'::bytea from 61)::bloom;
-- a segment cut short, and one too many announced
SELECT substring(bloom_add(bloom_empty(10, 0.01, 2), 1)::bytea from 1 for 100)::bloom;
SELECT (bloom_add(bloom_empty(10, 0.01, 2), 1)::bytea || '\x00'::bytea)::bloom;

-- the growing aggregate in parallel plans, grouped, past work_mem: the same
-- chain as a serial plan, byte for byte
CREATE TABLE growth_src AS SELECT g AS id, g % 5 AS grp FROM generate_series(1, 60000) g;
ANALYZE growth_src;
CREATE TEMP TABLE growth_serial AS
SELECT bloom_agg(id, 1000, 0.01, 2) AS f, bloom_agg(id::text, 5000, 0.001, 4) AS t FROM growth_src;
CREATE TEMP TABLE growth_serial_groups AS
SELECT grp, bloom_agg(id, 1000, 0.01, 2) AS f FROM growth_src GROUP BY grp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(id, 1000, 0.01, 2) FROM growth_src;
SELECT p.f = s.f AS parallel_same, p.t = s.t AS parallel_text_same
FROM growth_serial s,
     (SELECT bloom_agg(id, 1000, 0.01, 2) AS f, bloom_agg(id::text, 5000, 0.001, 4) AS t
      FROM growth_src) p;
SELECT count(*) AS groups, bool_and(p.f = s.f) AS parallel_groups_same
FROM growth_serial_groups s
     JOIN (SELECT grp, bloom_agg(id, 1000, 0.01, 2) AS f FROM growth_src GROUP BY grp) p USING (grp);
-- no worker can start: the leader's partial state is handed over or sent
SET max_parallel_workers = 0;
SELECT p.f = s.f AS leader_only_same
FROM growth_serial s, (SELECT bloom_agg(id, 1000, 0.01, 2) AS f FROM growth_src) p;
RESET max_parallel_workers;
-- past work_mem the keys go to a temporary file, sorted there
SET work_mem = '64kB';
SELECT p.f = s.f AS parallel_spilled_same
FROM growth_serial s, (SELECT bloom_agg(id, 1000, 0.01, 2) AS f FROM growth_src) p;
SET max_parallel_workers_per_gather = 0;
SELECT p.f = s.f AS spilled_same, p.t = s.t AS spilled_text_same
FROM growth_serial s,
     (SELECT bloom_agg(id, 1000, 0.01, 2) AS f, bloom_agg(id::text, 5000, 0.001, 4) AS t
      FROM growth_src) p;
RESET work_mem;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a window frame that grows row by row builds each row's chain anew
SELECT bool_and(w.f = (SELECT bloom_agg(i, 10, 0.01, 2) FROM generate_series(1, w.id) i)) AS window_same
FROM (SELECT id, bloom_agg(id, 10, 0.01, 2) OVER (ORDER BY id) AS f
      FROM growth_src WHERE id <= 200) w
WHERE id % 50 = 0;
DROP TABLE growth_src;
