-- Construction, adding, probing, batch forms, set algebra, inspection.
\set VERBOSITY terse

-- bloom_params is the sizing calculator of bloom_empty
SELECT * FROM bloom_params(1000000, 0.01);
SELECT * FROM bloom_params(1000);
SELECT p.bits = i.bits AND p.bytes = i.bytes AND p.hashes = i.hashes AS params_match_empty
FROM bloom_params(123456, 0.001) p, bloom_info(bloom_empty(123456, 0.001)) i;

SELECT * FROM bloom_info(bloom_empty(1000));

-- adding and probing
SELECT bloom_contains(bloom_add(bloom_empty(100), 7), 7) AS added,
       bloom_contains(bloom_empty(100), 7) AS empty_has_nothing;
SELECT (bloom_info(bloom_add(bloom_add(bloom_empty(100), 7), 8))).inserted;

-- NULLs: probing NULL is NULL; adding NULL keeps the filter; no filter stays NULL
SELECT bloom_contains(bloom_add(bloom_empty(100), 7), NULL::int) IS NULL AS probe_null;
SELECT bloom_add(bloom_add(bloom_empty(100), 7), NULL::int) = bloom_add(bloom_empty(100), 7) AS add_null_keeps;
SELECT bloom_add(NULL::bloom, 7) IS NULL AS add_to_null;

-- bloom_add returns a new value; the input is untouched
CREATE TEMP TABLE one (f bloom);
INSERT INTO one VALUES (bloom_empty(1000));
SELECT bloom_add(f, 1) <> f AS changed_copy, (bloom_info(f)).inserted AS original_inserted FROM one;

-- batch forms
SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3]) =
       bloom_add(bloom_add(bloom_add(bloom_empty(1000), 1), 2), 3) AS add_all_equals_adds;
SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, NULL, 3]) =
       bloom_add(bloom_add(bloom_empty(1000), 1), 3) AS add_all_skips_nulls;
SELECT bloom_add_all(bloom_empty(1000), NULL::int[]) = bloom_empty(1000) AS add_all_null_array;
SELECT bloom_add_all(bloom_empty(1000), '{}'::int[]) = bloom_empty(1000) AS add_all_empty_array;
WITH f AS (SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3]) AS f)
SELECT bloom_contains_all(f, ARRAY[1, 2, 3]) AS all_present,
       bloom_contains_all(f, ARRAY[1, 2, 1000001]) AS one_missing,
       bloom_contains_any(f, ARRAY[1000001, 1000002, 3]) AS any_present,
       bloom_contains_any(f, ARRAY[1000001, 1000002]) AS none_present,
       bloom_contains_all(f, ARRAY[1, NULL]) IS NULL AS all_with_null,
       bloom_contains_any(f, ARRAY[1000001, NULL]) IS NULL AS any_with_null,
       bloom_contains_any(f, ARRAY[1, NULL]) AS any_decided,
       bloom_contains_all(f, '{}'::int[]) AS all_of_nothing,
       bloom_contains_any(f, '{}'::int[]) AS any_of_nothing
FROM f;
SELECT bloom_contains_all(bloom_add_all(bloom_empty(10000), ARRAY(SELECT generate_series(1, 5000))),
                          ARRAY(SELECT generate_series(1, 5000))) AS batch_no_false_negatives;

-- union and intersection
CREATE TEMP TABLE ab AS
SELECT bloom_add_all(bloom_empty(10000), ARRAY(SELECT generate_series(1, 3000))) AS a,
       bloom_add_all(bloom_empty(10000), ARRAY(SELECT generate_series(2001, 5000))) AS b;
SELECT bloom_contains_all(bloom_union(a, b), ARRAY(SELECT generate_series(1, 5000))) AS union_has_both,
       bloom_contains_all(bloom_intersection(a, b), ARRAY(SELECT generate_series(2001, 3000))) AS intersection_has_common,
       (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_intersection(a, b) @> i) < 100 AS intersection_drops_most_others,
       (bloom_info(bloom_union(a, b))).inserted AS union_inserted,
       (bloom_info(bloom_intersection(a, b))).inserted AS intersection_inserted
FROM ab;
SELECT bloom_union(a, NULL) = a AS union_null_right, bloom_union(NULL, b) = b AS union_null_left,
       bloom_intersection(a, NULL) = a AS intersection_null,
       bloom_union(NULL::bloom, NULL::bloom) IS NULL AS both_null
FROM ab;
-- an empty filter takes the other's key kind
SELECT (bloom_info(bloom_union(bloom_empty(10000), a))).key_kind AS union_kind,
       (bloom_info(bloom_intersection(a, bloom_empty(10000)))).key_kind AS intersection_kind
FROM ab;

-- estimates
SELECT abs(bloom_cardinality(a) - 3000) < 150 AS cardinality_close,
       bloom_fpr(a) < 0.001 AS underfilled_fpr_small,
       bloom_fpr(bloom_empty(10)) = 0 AS empty_fpr_zero,
       bloom_cardinality(bloom_empty(10)) = 0 AS empty_cardinality_zero
FROM ab;
-- at capacity a filter is at or below its target: well below with few
-- values (the sizing margin), near it with many
WITH full_filter AS (SELECT bloom_add_all(bloom_empty(100, 0.01), ARRAY(SELECT generate_series(1, 100))) AS small,
                            bloom_add_all(bloom_empty(10000, 0.01), ARRAY(SELECT generate_series(1, 10000))) AS f)
SELECT bloom_fpr(small) <= 0.01 AS small_at_capacity_within_target,
       bloom_fpr(f) BETWEEN 0.008 AND 0.01 AS at_capacity_fpr_near_target,
       (bloom_info(f)).fill_ratio BETWEEN 0.3 AND 0.7 AS half_full
FROM full_filter;
-- overfilling shows in the estimates, and nothing is lost
WITH over AS (SELECT bloom_add_all(bloom_empty(100, 0.01), ARRAY(SELECT generate_series(1, 2000))) AS f)
SELECT bloom_fpr(f) > 0.5 AS overfilled_fpr_high,
       bloom_contains_all(f, ARRAY(SELECT generate_series(1, 2000))) AS still_no_false_negatives
FROM over;
-- 100 times overfilled, every bit set: the count estimate stays finite, a
-- lower bound (the count at which half a bit would still be clear)
WITH over AS (SELECT bloom_add_all(bloom_empty(1000, 0.01), ARRAY(SELECT generate_series(1, 100000))) AS f)
SELECT (bloom_info(f)).fill_ratio = 1 AS saturated,
       round(bloom_cardinality(f)) AS estimated_distinct,
       bloom_cardinality(f) = (bloom_info(f)).estimated_distinct AS info_agrees,
       bloom_cardinality(f) < (bloom_info(f)).inserted AS lower_bound,
       bloom_fpr(f) = 1 AS fpr_one
FROM over;

-- counters stop at their maximum instead of wrapping to zero
SELECT (bloom_info(bloom_add('bloom:QkYBAQYFAAAAAAAAAQAAAAAAAAAAAAAAAQAAAAAAAAB7FK5H4XqEP///////////FKkDRAAAAAD/////////////////////////////////////////////////////////////////////////////////////'::bloom, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid))).inserted AS saturated_add,
       (bloom_info('bloom:QkYBAQYFAAAAAAAAAQAAAAAAAAAAAAAAAQAAAAAAAAB7FK5H4XqEP///////////FKkDRAAAAAD/////////////////////////////////////////////////////////////////////////////////////'::bloom | 'bloom:QkYBAQYFAAAAAAAAAQAAAAAAAAAAAAAAAQAAAAAAAAB7FK5H4XqEP///////////FKkDRAAAAAD/////////////////////////////////////////////////////////////////////////////////////'::bloom)).inserted AS saturated_union;

-- a PL/pgSQL variable is reassigned and its memory reused: every probe must
-- see the filter the variable holds now, never one cached for an old value
-- (here an empty filter and a filter holding i take turns)
DO $$
DECLARE
	f bloom;
	misses int := 0;
BEGIN
	FOR i IN 1..40 LOOP
		f := CASE WHEN i % 2 = 1 THEN bloom_empty(100) ELSE bloom_add(bloom_empty(100), i) END;
		IF bloom_contains(f, i) <> (i % 2 = 0) THEN
			misses := misses + 1;
		END IF;
		IF bloom_contains_any(f, ARRAY[i]) <> (i % 2 = 0) THEN
			misses := misses + 1;
		END IF;
	END LOOP;
	RAISE NOTICE 'plpgsql variable probes wrong: %', misses;
END $$;


-- an overfilled filter still finds everything, says so in bloom_info, and
-- warns once per statement (not per row) once its rate passes twice its target
CREATE TABLE overfilled AS
SELECT bloom_add_all(bloom_empty(100), array_agg(i)) AS f FROM generate_series(1, 1000) i;
SELECT bloom_contains_all(f, ARRAY(SELECT generate_series(1, 1000))) AS finds_all,
       (bloom_info(f)).over_capacity, (bloom_info(f)).estimated_fpr > 0.02 AS rate_above_twice_target,
       (bloom_info(bloom_empty(100))).over_capacity AS empty_over_capacity
FROM overfilled;
SELECT count(bloom_add(f, i)) AS adds FROM overfilled, generate_series(1, 5) i;
SELECT count(bloom_add(f, i)) AS adds_in_a_second_statement FROM overfilled, generate_series(1, 5) i;
SELECT (bloom_union(f, f) IS NOT NULL) AS union_warns FROM overfilled;
SELECT bloom_agg(i, 100, 0.01) IS NOT NULL AS fixed_aggregate_warns FROM generate_series(1, 1000) i;
SELECT bloom_union_agg(f) IS NOT NULL AS union_aggregate_warns FROM overfilled, generate_series(1, 3);
-- filled to capacity, or through the self-sizing aggregate: no warning, not over capacity
SELECT (bloom_info(bloom_add_all(bloom_empty(1000), array_agg(i)))).over_capacity AS at_capacity,
       (bloom_info(bloom_agg(i))).over_capacity AS self_sized
FROM generate_series(1, 1000) i;

-- a PL/pgSQL loop, nested calls and the operator build the same filter as
-- one bloom_add_all, and a loop can probe what it built (from PostgreSQL 18
-- on the loop changes its variable in place instead of copying it)
CREATE FUNCTION loop_adds(n int) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
	f bloom := bloom_empty(1000);
	found int := 0;
BEGIN
	FOR i IN 1..n LOOP
		f := bloom_add(f, i);
		IF f @> i THEN
			found := found + 1;
		END IF;
		f := f + (i + 100000);
		f := bloom_add_all(f, ARRAY[i + 200000]);
	END LOOP;
	IF found <> n THEN
		RAISE EXCEPTION 'only % of % values found', found, n;
	END IF;
	RETURN f;
END
$$;
SELECT loop_adds(300) = bloom_add_all(bloom_empty(1000),
                                      ARRAY(SELECT unnest(ARRAY[i, i + 100000, i + 200000])
                                            FROM generate_series(1, 300) i)) AS loop_equals_add_all,
       bloom_add(bloom_add(bloom_add(bloom_empty(10), 1), 2), 3) = bloom_add_all(bloom_empty(10), ARRAY[1, 2, 3])
           AS nested_equals_add_all;
CREATE TABLE loop_filter AS SELECT loop_adds(50) AS f;
SELECT f = loop_adds(50) AS stored_equals_built, f::text::bloom = f AS text_round_trip FROM loop_filter;
DROP TABLE loop_filter;
