-- Operators, and the btree/hash support that GROUP BY, DISTINCT and UNION use.
\set VERBOSITY terse

CREATE TEMP TABLE ops AS
SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3]) AS f,
       bloom_add_all(bloom_empty(1000), ARRAY[3, 4]) AS g;

SELECT f @> 1 AS contains_op, 1 <@ f AS contained_op,
       f @> 1000001 AS absent, 1000001 <@ f AS absent_commuted
FROM ops;

-- an untyped literal on the right is a value, not a filter
SELECT bloom_add(bloom_empty(10), 'abc'::text) @> 'abc' AS untyped_literal_is_text;

SELECT (f + 99) @> 99 AS plus_adds, f + 99 = bloom_add(f, 99) AS plus_is_bloom_add FROM ops;
SELECT (f | g) @> 4 AND (f | g) @> 1 AS union_op,
       (f & g) @> 3 AS intersection_op,
       f | g = bloom_union(f, g) AS union_is_function,
       f & g = bloom_intersection(f, g) AS intersection_is_function
FROM ops;
SELECT f = f AS eq_self, f <> g AS ne_other, f = g AS eq_other, f <> f AS ne_self FROM ops;
SELECT (f < g) <> (f >= g) AS lt_ge_consistent, (f > g) <> (f <= g) AS gt_le_consistent,
       bloom_cmp(f, g) = -bloom_cmp(g, f) AS cmp_antisymmetric, bloom_cmp(f, f) AS cmp_self
FROM ops;

-- GROUP BY, DISTINCT and UNION over filters, sorted and hashed
CREATE TEMP TABLE many AS
SELECT i % 3 AS grp, bloom_add(bloom_empty(100), i % 3) AS f FROM generate_series(1, 30) i;
SELECT count(DISTINCT f) AS distinct_filters FROM many;
SET enable_hashagg = off;
SELECT count(*) AS groups_sorted FROM (SELECT f FROM many GROUP BY f) s;
RESET enable_hashagg;
SET enable_sort = off;
SELECT count(*) AS groups_hashed FROM (SELECT f FROM many GROUP BY f) s;
RESET enable_sort;
SELECT count(*) AS union_rows FROM (SELECT f FROM many UNION SELECT f FROM many) u;
SELECT bool_and(a.f = b.f) AS hash_join_matches, count(*) AS joined
FROM (SELECT DISTINCT grp, f FROM many) a JOIN (SELECT DISTINCT grp, f FROM many) b ON a.f = b.f;
