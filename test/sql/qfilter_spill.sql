-- qfilter_agg and qfilter_union_agg past their memory budget: the items
-- (hashes, or fingerprints) go to a temporary file, which sorts them
-- partition by partition, and the filter is the one built in memory, bit
-- for bit, whatever the plan.  At work_mem = 64kB a state holds 6,144
-- items; the final sorts in memory only while a copy fits too.  The DEBUG
-- lines say which states spill.
\set VERBOSITY terse

CREATE TABLE qspill_src AS
SELECT i AS id,
       i % 7000 AS repeated,                     -- 7,000 values, each about 17 times
       CASE WHEN i % 3 = 0 THEN 42 ELSE i END AS heavy,   -- one value 40,000 times
       md5(i::text) AS name,
       CASE WHEN i <= 60000 THEN 0 ELSE i % 500 + 1 END AS g   -- one large group, 500 small ones
FROM generate_series(1, 120000) i;
ANALYZE qspill_src;

-- the filters built in memory
SET work_mem = '1GB';
CREATE TABLE qin_memory AS
SELECT qfilter_agg(id) AS a, qfilter_agg(repeated) AS b, qfilter_agg(heavy) AS c,
       qfilter_agg(name, 0.001) AS d, qfilter_agg(id, 200000, 0.01) AS e,
       qfilter_agg(id) FILTER (WHERE id <= 3000) AS small
FROM qspill_src;
CREATE TABLE qin_memory_groups AS
SELECT g, qfilter_agg(id) AS f, qfilter_agg(id, 200000, 0.01) AS fixed FROM qspill_src GROUP BY g;
CREATE TABLE qin_memory_union AS
SELECT qfilter_union_agg(fixed) AS u FROM qin_memory_groups;

-- the same filters with 64kB: all but the small one spill
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = debug1;
SELECT s.a = m.a AS distinct_same, s.b = m.b AS duplicates_same, s.c = m.c AS heavy_same,
       s.d = m.d AS fpr_form_same, s.e = m.e AS fixed_same, s.small = m.small AS small_same
FROM qin_memory m,
     (SELECT qfilter_agg(id) AS a, qfilter_agg(repeated) AS b, qfilter_agg(heavy) AS c,
             qfilter_agg(name, 0.001) AS d, qfilter_agg(id, 200000, 0.01) AS e,
             qfilter_agg(id) FILTER (WHERE id <= 3000) AS small
      FROM qspill_src) s;
SELECT qfilter_union_agg(fixed) = (SELECT u FROM qin_memory_union) AS union_same
FROM qin_memory_groups;
RESET client_min_messages;
SELECT (qfilter_info(a)).count AS a_count, (qfilter_info(c)).count AS heavy_count,
       qfilter_count(c, 42) AS copies_of_42
FROM qin_memory;

-- the file really is used: a limit on temporary files stops the query
-- (the SQLSTATE only: PostgreSQL 18 quotes the setting's name)
SET temp_file_limit = '64kB';
\set VERBOSITY sqlstate
SELECT qfilter_agg(id) IS NOT NULL FROM qspill_src;
\set VERBOSITY terse
RESET temp_file_limit;

-- GROUP BY: only the large group spills, hashed or sorted
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT g, qfilter_agg(id) FROM qspill_src GROUP BY g;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same, bool_and(s.fixed = m.fixed) AS fixed_same
FROM qin_memory_groups m
     JOIN (SELECT g, qfilter_agg(id) AS f, qfilter_agg(id, 200000, 0.01) AS fixed
           FROM qspill_src GROUP BY g) s USING (g);
RESET enable_sort;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT g, qfilter_agg(id) FROM qspill_src GROUP BY g;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same, bool_and(s.fixed = m.fixed) AS fixed_same
FROM qin_memory_groups m
     JOIN (SELECT g, qfilter_agg(id) AS f, qfilter_agg(id, 200000, 0.01) AS fixed
           FROM qspill_src GROUP BY g) s USING (g);
RESET enable_hashagg;

-- a window aggregate has no budget: it holds its items, the moving frame's
-- inverse transition included (work_mem back at its default, or the
-- window's own tuplestore spills and reading the frame dominates)
RESET work_mem;
WITH w AS MATERIALIZED (
	SELECT id, qfilter_agg(id) OVER (ORDER BY id ROWS BETWEEN 2000 PRECEDING AND CURRENT ROW) AS f
	FROM qspill_src WHERE id <= 6000)
SELECT count(*) AS frames, bool_and(f = expected) AS window_same
FROM w, LATERAL (SELECT qfilter_agg(i) AS expected
                 FROM generate_series(greatest(1, w.id - 2000), w.id) i) p
WHERE id % 1000 = 0;
SET work_mem = '64kB';

-- the files are gone once the query ends, and after an error
SELECT count(*) AS temporary_files FROM pg_ls_tmpdir();
SELECT qfilter_agg(CASE WHEN id < 100000 THEN id ELSE 1 / (id - id) END) FROM qspill_src;
SELECT count(*) AS temporary_files_after_error FROM pg_ls_tmpdir();

-- parallel plans: workers that spill send all their items, and the
-- leader's combining state spills what it receives past its budget
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE VIEW qparallel_same AS
SELECT s.a = m.a AS distinct_same, s.b = m.b AS duplicates_same, s.c = m.c AS heavy_same,
       s.e = m.e AS fixed_same
FROM qin_memory m,
     (SELECT qfilter_agg(id) AS a, qfilter_agg(repeated) AS b, qfilter_agg(heavy) AS c,
             qfilter_agg(id, 200000, 0.01) AS e
      FROM qspill_src) s;
EXPLAIN (COSTS OFF) SELECT qfilter_agg(id) FROM qspill_src;
SELECT * FROM qparallel_same;
-- no worker can start: the leader runs the partial states, which spill,
-- and serialises them with their files
SET max_parallel_workers = 0;
SELECT * FROM qparallel_same;
RESET max_parallel_workers;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same
FROM qin_memory_groups m
     JOIN (SELECT g, qfilter_agg(id) AS f FROM qspill_src GROUP BY g) s USING (g);
SELECT count(*) AS temporary_files FROM pg_ls_tmpdir();
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET work_mem;
DROP VIEW qparallel_same;
DROP TABLE qspill_src, qin_memory, qin_memory_groups, qin_memory_union;
