-- Every aggregate of the extension over NULL inputs: only NULLs, NULLs
-- first, NULLs last and empty groups, in plain, grouped, window and
-- moving-frame plans and in parallel plans whose partial states saw only
-- NULLs.  An aggregate that saw no value but NULLs is NULL; one whose NULLs
-- surround values gives the filter of the values.  A state that is NULL
-- must stay a NULL datum through transition, combine, serialize and final:
-- a NULL pointer passed on as a value ends the backend.
SET client_min_messages = warning;

CREATE TABLE agg_nulls (g int, n bigint, b bloom, q qfilter);
-- group 1: only NULLs; group 2: NULLs first; group 3: NULLs last
INSERT INTO agg_nulls
SELECT 1, NULL, NULL, NULL FROM generate_series(1, 3);
INSERT INTO agg_nulls
SELECT 2, NULL, NULL, NULL FROM generate_series(1, 2);
INSERT INTO agg_nulls
SELECT 2, i, bloom_add(bloom_empty(100, 0.01), i), qfilter_add(qfilter_empty(100, 0.01), i)
FROM generate_series(1, 2) i;
INSERT INTO agg_nulls
SELECT 3, i, bloom_add(bloom_empty(100, 0.01), i), qfilter_add(qfilter_empty(100, 0.01), i)
FROM generate_series(1, 2) i;
INSERT INTO agg_nulls
SELECT 3, NULL, NULL, NULL FROM generate_series(1, 2);

-- One row per aggregate and group: whether the result is NULL, and, if
-- not, whether it holds the group's values (1 and 2).
CREATE FUNCTION agg_nulls_summary(f bloom) RETURNS text
LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN f IS NULL THEN 'null'
               WHEN bloom_contains_all(f, ARRAY[1, 2]) THEN 'holds 1, 2'
               ELSE 'not both' END $$;
CREATE FUNCTION agg_nulls_summary(f qfilter) RETURNS text
LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN f IS NULL THEN 'null'
               WHEN qfilter_contains_all(f, ARRAY[1, 2]) THEN 'holds 1, 2'
               ELSE 'not both' END $$;

-- only NULLs, ungrouped: every one of the ten aggregates is NULL
SELECT agg_nulls_summary(bloom_agg(n)) AS agg,
       agg_nulls_summary(bloom_agg(n, 0.01)) AS agg_fpr,
       agg_nulls_summary(bloom_agg(n, 100, 0.01)) AS agg_fixed,
       agg_nulls_summary(bloom_agg(n, 100, 0.01, 2)) AS agg_growing,
       agg_nulls_summary(bloom_union_agg(b)) AS union_agg,
       agg_nulls_summary(bloom_intersection_agg(b)) AS intersection_agg,
       agg_nulls_summary(qfilter_agg(n)) AS qagg,
       agg_nulls_summary(qfilter_agg(n, 0.01)) AS qagg_fpr,
       agg_nulls_summary(qfilter_agg(n, 100, 0.01)) AS qagg_fixed,
       agg_nulls_summary(qfilter_union_agg(q)) AS qunion_agg
FROM agg_nulls WHERE g = 1;

-- the report's query, and its window forms
SELECT qfilter_union_agg(NULL::qfilter) IS NULL AS only_nulls FROM generate_series(1, 3);
SELECT qfilter_union_agg(NULL::qfilter) OVER () IS NULL AS window_null FROM generate_series(1, 3);
SELECT g, qfilter_union_agg(NULL::qfilter) OVER (ORDER BY g) IS NULL AS running_null
FROM generate_series(1, 3) g;
SELECT g, qfilter_union_agg(NULL::qfilter)
          OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) IS NULL AS moving_null
FROM generate_series(1, 3) g;

-- grouped: only NULLs, NULLs first, NULLs last
SELECT g,
       agg_nulls_summary(bloom_agg(n)) AS agg,
       agg_nulls_summary(bloom_agg(n, 0.01)) AS agg_fpr,
       agg_nulls_summary(bloom_agg(n, 100, 0.01)) AS agg_fixed,
       agg_nulls_summary(bloom_agg(n, 100, 0.01, 2)) AS agg_growing,
       agg_nulls_summary(bloom_union_agg(b)) AS union_agg,
       agg_nulls_summary(bloom_intersection_agg(b)) AS intersection_agg
FROM agg_nulls GROUP BY g ORDER BY g;
SELECT g,
       agg_nulls_summary(qfilter_agg(n)) AS qagg,
       agg_nulls_summary(qfilter_agg(n, 0.01)) AS qagg_fpr,
       agg_nulls_summary(qfilter_agg(n, 100, 0.01)) AS qagg_fixed,
       agg_nulls_summary(qfilter_union_agg(q)) AS qunion_agg
FROM agg_nulls GROUP BY g ORDER BY g;
-- the same with the rows sorted into each aggregate, NULLs first and last
SELECT g,
       agg_nulls_summary(bloom_union_agg(b ORDER BY n NULLS FIRST)) AS union_first,
       agg_nulls_summary(bloom_union_agg(b ORDER BY n NULLS LAST)) AS union_last,
       agg_nulls_summary(qfilter_union_agg(q ORDER BY n NULLS FIRST)) AS qunion_first,
       agg_nulls_summary(qfilter_union_agg(q ORDER BY n NULLS LAST)) AS qunion_last,
       agg_nulls_summary(qfilter_agg(n ORDER BY n NULLS FIRST)) AS qagg_first
FROM agg_nulls GROUP BY g ORDER BY g;

-- empty groups: no row at all gives no group, and an empty input no row
SELECT g, bloom_agg(n), qfilter_union_agg(q) FROM agg_nulls WHERE false GROUP BY g;
SELECT bloom_union_agg(b) IS NULL AS union_none, qfilter_union_agg(q) IS NULL AS qunion_none,
       qfilter_agg(n) IS NULL AS qagg_none
FROM agg_nulls WHERE false;

-- windows: a running frame over each group (the first rows of groups 1
-- and 2 saw only NULLs), and a moving frame that slides over NULLs
SELECT g, n,
       agg_nulls_summary(bloom_agg(n, 100, 0.01) OVER w) AS agg_fixed,
       agg_nulls_summary(bloom_union_agg(b) OVER w) AS union_agg,
       agg_nulls_summary(bloom_intersection_agg(b) OVER w) AS intersection_agg,
       agg_nulls_summary(qfilter_agg(n) OVER w) AS qagg,
       agg_nulls_summary(qfilter_union_agg(q) OVER w) AS qunion_agg
FROM agg_nulls
WINDOW w AS (PARTITION BY g ORDER BY n NULLS FIRST ROWS UNBOUNDED PRECEDING)
ORDER BY g, n NULLS FIRST;
SELECT g, n,
       agg_nulls_summary(qfilter_agg(n) OVER w) AS qagg,
       agg_nulls_summary(qfilter_agg(n, 0.01) OVER w) AS qagg_fpr,
       agg_nulls_summary(qfilter_agg(n, 100, 0.01) OVER w) AS qagg_fixed,
       agg_nulls_summary(qfilter_union_agg(q) OVER w) AS qunion_agg,
       agg_nulls_summary(bloom_union_agg(b) OVER w) AS union_agg
FROM agg_nulls
WINDOW w AS (PARTITION BY g ORDER BY n NULLS LAST ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
ORDER BY g, n NULLS LAST;

-- parallel plans whose workers see only NULLs: each partial state is NULL,
-- and combine and serialize must keep it so
CREATE TABLE agg_nulls_many AS
SELECT NULL::bigint AS n, NULL::bloom AS b, NULL::qfilter AS q
FROM generate_series(1, 5000);
ANALYZE agg_nulls_many;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT qfilter_union_agg(q) FROM agg_nulls_many;
SELECT agg_nulls_summary(bloom_agg(n)) AS agg,
       agg_nulls_summary(bloom_agg(n, 0.01)) AS agg_fpr,
       agg_nulls_summary(bloom_agg(n, 100, 0.01)) AS agg_fixed,
       agg_nulls_summary(bloom_union_agg(b)) AS union_agg,
       agg_nulls_summary(bloom_intersection_agg(b)) AS intersection_agg,
       agg_nulls_summary(qfilter_agg(n)) AS qagg,
       agg_nulls_summary(qfilter_agg(n, 0.01)) AS qagg_fpr,
       agg_nulls_summary(qfilter_agg(n, 100, 0.01)) AS qagg_fixed,
       agg_nulls_summary(qfilter_union_agg(q)) AS qunion_agg
FROM agg_nulls_many;
-- the growing form is not parallel: it runs in the leader alone
SELECT agg_nulls_summary(bloom_agg(n, 100, 0.01, 2)) AS agg_growing FROM agg_nulls_many;
-- partial states of which some saw values and some only NULLs
INSERT INTO agg_nulls_many
SELECT i, bloom_add(bloom_empty(100, 0.01), i), qfilter_add(qfilter_empty(100, 0.01), i)
FROM generate_series(1, 2) i;
SELECT agg_nulls_summary(bloom_agg(n)) AS agg,
       agg_nulls_summary(bloom_agg(n, 100, 0.01)) AS agg_fixed,
       agg_nulls_summary(bloom_union_agg(b)) AS union_agg,
       agg_nulls_summary(qfilter_agg(n)) AS qagg,
       agg_nulls_summary(qfilter_union_agg(q)) AS qunion_agg
FROM agg_nulls_many;
-- grouped in parallel: one group of only NULLs
SELECT n IS NULL AS null_group, agg_nulls_summary(qfilter_union_agg(q)) AS qunion_agg,
       agg_nulls_summary(bloom_union_agg(b)) AS union_agg
FROM agg_nulls_many GROUP BY n IS NULL ORDER BY 1;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

DROP TABLE agg_nulls, agg_nulls_many;
DROP FUNCTION agg_nulls_summary(bloom), agg_nulls_summary(qfilter);
