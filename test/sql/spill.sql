-- Self-sizing bloom_agg past its memory budget: the hashes go to a
-- temporary file, and the filter is the one built in memory, bit for bit,
-- whatever the plan: plain, grouped (hashed or sorted), parallel, rescanned.
-- At work_mem = 64kB a state keeps 6,144 hashes in memory (three quarters
-- of the budget) and splits what it spills in two partitions at a time; a
-- group of a hashed GROUP BY has hash_mem, twice that.  The DEBUG lines
-- say which states spill.
\set VERBOSITY terse

CREATE TABLE spill_src AS
SELECT i AS id,
       i % 7000 AS repeated,                     -- 7,000 values, each about 17 times
       md5(i::text) AS name,
       CASE WHEN i <= 60000 THEN 0 ELSE i % 500 + 1 END AS g   -- one large group, 500 small ones
FROM generate_series(1, 120000) i;
ANALYZE spill_src;

-- the filters built in memory
SET work_mem = '1GB';
CREATE TABLE in_memory AS
SELECT bloom_agg(id) AS a, bloom_agg(repeated) AS b, bloom_agg(name, 0.001) AS c,
       bloom_agg(id % 3000) AS d, bloom_agg(id) FILTER (WHERE id <= 5000) AS e
FROM spill_src;
CREATE TABLE in_memory_groups AS
SELECT g, bloom_agg(id) AS f, bloom_agg(name) AS h FROM spill_src GROUP BY g;

-- the same filters with 64kB: a, b and c spill (b's duplicates only after
-- some spills); d, 3,000 distinct values, and e, 5,000 rows, never do
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = debug1;
SELECT s.a = m.a AS distinct_same, s.b = m.b AS duplicates_same, s.c = m.c AS fpr_form_same,
       s.d = m.d AS few_distinct_same, s.e = m.e AS small_same
FROM in_memory m,
     (SELECT bloom_agg(id) AS a, bloom_agg(repeated) AS b, bloom_agg(name, 0.001) AS c,
             bloom_agg(id % 3000) AS d, bloom_agg(id) FILTER (WHERE id <= 5000) AS e
      FROM spill_src) s;
RESET client_min_messages;
-- the same aggregate twice in one query
SELECT a = a2 AS shared_state_same, a = (SELECT a FROM in_memory) AS shared_same_as_memory
FROM (SELECT bloom_agg(id) AS a, bloom_agg(id) AS a2 FROM spill_src) s;
SELECT (bloom_info(a)).inserted AS a_inserted, (bloom_info(b)).inserted AS b_inserted,
       (bloom_info(c)).inserted AS c_inserted
FROM in_memory;
-- the fixed form is its filter from the start and has nothing to spill
SELECT bloom_agg(id, 200000, 0.01) = bloom_add_all(bloom_empty(200000, 0.01), array_agg(id))
       AS fixed_same
FROM spill_src;

-- a spilled state whose filter fits its budget (at 64kB, about 50,000
-- values) and whose hashes held no duplicate in memory guesses that every
-- value is distinct, and fills the filter while it counts; duplicates only
-- the count finds (each value twice, 20,000 rows apart) make it fill the
-- filter again, from the file
SET work_mem = '1GB';
CREATE TABLE fits_budget AS
SELECT bloom_agg(id) FILTER (WHERE id <= 40000) AS all_distinct,
       bloom_agg(CASE WHEN id <= 20000 THEN id ELSE id - 20000 END)
           FILTER (WHERE id <= 40000) AS twice
FROM spill_src;
SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT s.all_distinct = m.all_distinct AS filled_while_counting_same,
       s.twice = m.twice AS filled_again_same,
       (bloom_info(s.all_distinct)).inserted AS all_distinct_inserted,
       (bloom_info(s.twice)).inserted AS twice_inserted
FROM fits_budget m,
     (SELECT bloom_agg(id) FILTER (WHERE id <= 40000) AS all_distinct,
             bloom_agg(CASE WHEN id <= 20000 THEN id ELSE id - 20000 END)
                 FILTER (WHERE id <= 40000) AS twice
      FROM spill_src) s;
RESET client_min_messages;
-- every added value is found in the filters filled either way
SELECT bool_and(bloom_contains(s.all_distinct, i)) AS all_distinct_finds_all,
       bool_and(bloom_contains(s.twice, i)) FILTER (WHERE i <= 20000) AS twice_finds_all
FROM (SELECT bloom_agg(id) FILTER (WHERE id <= 40000) AS all_distinct,
             bloom_agg(CASE WHEN id <= 20000 THEN id ELSE id - 20000 END)
                 FILTER (WHERE id <= 40000) AS twice
      FROM spill_src) s,
     generate_series(1, 40000) i;

-- GROUP BY: only the large group spills, hashed or sorted
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT g, bloom_agg(id), bloom_agg(name) FROM spill_src GROUP BY g;
SET client_min_messages = debug1;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same, bool_and(s.h = m.h) AS names_same
FROM in_memory_groups m
     JOIN (SELECT g, bloom_agg(id) AS f, bloom_agg(name) AS h FROM spill_src GROUP BY g) s USING (g);
RESET client_min_messages;
RESET enable_sort;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT g, bloom_agg(id), bloom_agg(name) FROM spill_src GROUP BY g;
SET client_min_messages = debug1;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same, bool_and(s.h = m.h) AS names_same
FROM in_memory_groups m
     JOIN (SELECT g, bloom_agg(id) AS f, bloom_agg(name) AS h FROM spill_src GROUP BY g) s USING (g);
RESET client_min_messages;
RESET enable_hashagg;

-- a window aggregate cannot clean up a file, so it keeps its hashes in memory
SELECT bool_and(f = bloom_agg_of_prefix) AS window_same
FROM (SELECT id, bloom_agg(id) OVER (ORDER BY id) AS f FROM spill_src WHERE id <= 300) w,
     LATERAL (SELECT bloom_agg(i) AS bloom_agg_of_prefix FROM generate_series(1, w.id) i) p
WHERE id % 100 = 0;

-- the files are gone once the query ends, and after an error
SELECT count(*) AS temporary_files FROM pg_ls_tmpdir();
BEGIN;
SELECT (bloom_info(bloom_agg(id))).inserted FROM spill_src;
SELECT count(*) AS temporary_files_in_transaction FROM pg_ls_tmpdir();
-- a cursor closed before it reads every group: a hashed GROUP BY builds
-- every state first, and most never reach their final function
SET LOCAL enable_sort = off;
DECLARE groups CURSOR FOR SELECT bloom_agg(id) IS NOT NULL AS built FROM spill_src GROUP BY g;
FETCH 1 FROM groups;
CLOSE groups;
SELECT count(*) AS temporary_files_after_cursor FROM pg_ls_tmpdir();
COMMIT;
SELECT bloom_agg(CASE WHEN id < 100000 THEN id ELSE 1 / (id - id) END) FROM spill_src;
SELECT count(*) AS temporary_files_after_error FROM pg_ls_tmpdir();
-- an error caught in a subtransaction
DO $$
BEGIN
	PERFORM bloom_agg(CASE WHEN id < 100000 THEN id ELSE 1 / (id - id) END) FROM spill_src;
EXCEPTION WHEN division_by_zero THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT count(*) AS temporary_files_after_subtransaction FROM pg_ls_tmpdir();

-- rescanned, a spilled state is closed and a new one built each time
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT v.n, s.a = (SELECT a FROM in_memory) AS rescanned_same
FROM (VALUES (1), (2), (3)) v(n) LEFT JOIN LATERAL (SELECT bloom_agg(id) AS a FROM spill_src) s ON true;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- parallel plans: workers that spill send their distinct hashes, and the
-- leader's combining state spills what it receives past its budget
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE VIEW parallel_same AS
SELECT s.a = m.a AS distinct_same, s.b = m.b AS duplicates_same, s.c = m.c AS fpr_form_same,
       s.d = m.d AS few_distinct_same
FROM in_memory m,
     (SELECT bloom_agg(id) AS a, bloom_agg(repeated) AS b, bloom_agg(name, 0.001) AS c,
             bloom_agg(id % 3000) AS d
      FROM spill_src) s;
EXPLAIN (COSTS OFF)
SELECT bloom_agg(id), bloom_agg(repeated), bloom_agg(name, 0.001), bloom_agg(id % 3000) FROM spill_src;
SELECT * FROM parallel_same;
-- the same two in a parallel plan, counted by the leader's combining state
SELECT s.all_distinct = m.all_distinct AS parallel_all_distinct_same,
       s.twice = m.twice AS parallel_twice_same
FROM fits_budget m,
     (SELECT bloom_agg(id) FILTER (WHERE id <= 40000) AS all_distinct,
             bloom_agg(CASE WHEN id <= 20000 THEN id ELSE id - 20000 END)
                 FILTER (WHERE id <= 40000) AS twice
      FROM spill_src) s;
-- no worker can start: the leader runs the partial states, which spill,
-- and hands them over with their files, or serialises them
SET max_parallel_workers = 0;
SET client_min_messages = debug1;
SELECT * FROM parallel_same;
SET bloomfilter.parallel_handover = off;
SELECT * FROM parallel_same;
RESET bloomfilter.parallel_handover;
RESET client_min_messages;
RESET max_parallel_workers;
-- a parallel GROUP BY
EXPLAIN (COSTS OFF) SELECT g, bloom_agg(id) FROM spill_src GROUP BY g;
SELECT count(*) AS groups, bool_and(s.f = m.f) AS ids_same
FROM in_memory_groups m
     JOIN (SELECT g, bloom_agg(id) AS f FROM spill_src GROUP BY g) s USING (g);
SELECT count(*) AS temporary_files FROM pg_ls_tmpdir();
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET work_mem;
DROP VIEW parallel_same;
DROP TABLE spill_src, in_memory, in_memory_groups, fits_budget;
