-- The batched filter scan (Custom Scan "Bloom Filter Scan", bloomscan.c):
-- for every query shape, the same rows as the plain plan, with
-- bloomfilter.batched_scan on and off; and where it is chosen.
-- Every filter here is small: batched_scan_min_size 0 lets them all batch.
SET bloomfilter.batched_scan_min_size = 0;

CREATE TABLE scan_rows AS
SELECT i AS id,
       CASE WHEN i % 37 = 0 THEN NULL ELSE i % 5000 END AS user_id,
       'u' || (i % 7) AS tag,
       i % 11 AS grp
FROM generate_series(1, 10000) i;
ANALYZE scan_rows;

CREATE TABLE scan_filters (name text PRIMARY KEY, f bloom);
INSERT INTO scan_filters
SELECT 'users', bloom_agg(g) FROM generate_series(0, 4999, 3) g;
INSERT INTO scan_filters
SELECT 'tags', bloom_agg('u' || g) FROM generate_series(0, 3) g;
-- a chain of several segments: it grew from a capacity of 100
INSERT INTO scan_filters
SELECT 'chain', bloom_add_all(bloom_empty(100, 0.01, 2), array_agg(g))
FROM generate_series(0, 4999, 7) g;
INSERT INTO scan_filters VALUES ('empty', bloom_empty(1000)), ('none', NULL);
SELECT name, (bloom_info(f)).bytes > 0 AS has_bytes FROM scan_filters ORDER BY name;

-- psql leaves :'name' alone between dollar quotes: the functions below put
-- that filter of scan_filters there, as a constant.
CREATE FUNCTION scan_literals(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT name, f FROM scan_filters WHERE f IS NOT NULL LOOP
		sql := replace(sql, ':''' || r.name || '''', quote_literal(r.f::text));
	END LOOP;
	RETURN sql;
END
$$;

-- The query's rows with the scan on and off: their count and whether they
-- are the same multiset (or the same error), with which plan "on" used.
-- ordered: the rows must also come in the same order.
CREATE FUNCTION scan_rows_of(query text, ordered boolean) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	result text[];
BEGIN
	PERFORM setseed(0.42);
	IF ordered THEN
		EXECUTE 'SELECT array_agg(q::text) FROM (' || query || ') q' INTO result;
	ELSE
		EXECUTE 'SELECT array_agg(q::text ORDER BY q::text) FROM (' || query || ') q' INTO result;
	END IF;
	RETURN coalesce(result, '{}');
EXCEPTION WHEN others THEN
	RETURN ARRAY['ERROR: ' || SQLERRM];
END
$$;

CREATE FUNCTION scan_plan(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	query := scan_literals(query);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%Bloom Filter Scan%' THEN
			RETURN 'batched';
		END IF;
	END LOOP;
	RETURN 'plain';
END
$$;

CREATE FUNCTION scan_check(query text, ordered boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	on_rows text[];
	off_rows text[];
	on_plan text;
	off_plan text;
BEGIN
	query := scan_literals(query);
	PERFORM set_config('bloomfilter.batched_scan', 'on', false);
	on_plan := scan_plan(query);
	on_rows := scan_rows_of(query, ordered);
	PERFORM set_config('bloomfilter.batched_scan', 'off', false);
	off_plan := scan_plan(query);
	off_rows := scan_rows_of(query, ordered);
	PERFORM set_config('bloomfilter.batched_scan', 'on', false);
	IF off_plan <> 'plain' THEN
		RETURN 'batched scan used while off';
	END IF;
	IF on_rows IS DISTINCT FROM off_rows THEN
		RETURN format('DIFFERENT: on %s, off %s', on_rows[1:3], off_rows[1:3]);
	END IF;
	IF on_rows[1] LIKE 'ERROR: %' THEN
		RETURN on_plan || ', same error: ' || substr(on_rows[1], 8);
	END IF;
	RETURN format('%s, same %s rows', on_plan, cardinality(on_rows));
END
$$;

-- EXPLAIN's lines but those that differ between PostgreSQL versions: the
-- InitPlans' and the row counts of ANALYZE.
CREATE FUNCTION scan_explain(query text, with_analyze boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF'
		|| CASE WHEN with_analyze THEN ', ANALYZE, TIMING OFF, SUMMARY OFF, BUFFERS OFF' ELSE '' END
		|| ') ' || scan_literals(query) LOOP
		CONTINUE WHEN line ~ 'InitPlan|Params Evaluated|scan_filters|Index Cond|Index Searches|Disabled:';
		RETURN NEXT regexp_replace(line, ' \(actual .*\)$', '');
	END LOOP;
END
$$;

-- What the plan shows: the key, the filter's size (a constant's is known
-- at plan time), the other quals as its Filter, never the filter's value.
SELECT f AS users FROM scan_filters WHERE name = 'users' \gset
SELECT f AS chain FROM scan_filters WHERE name = 'chain' \gset
EXPLAIN (COSTS OFF)
SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id) AND grp <> 3;
SELECT scan_explain($$SELECT count(*) FROM scan_rows
	WHERE user_id <@ (SELECT f FROM scan_filters WHERE name = 'users')$$);
-- under ANALYZE, the rows each filter removed
SELECT scan_explain($$SELECT count(*) FROM scan_rows
	WHERE (SELECT f FROM scan_filters WHERE name = 'users') @> user_id AND tag <> 'u3'$$, true);

-- The three spellings, constant and subquery filters, text keys.
SELECT scan_check($$SELECT * FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows WHERE :'users'::bloom @> user_id$$, true);
SELECT scan_check($$SELECT * FROM scan_rows WHERE user_id <@ :'users'::bloom$$, true);
SELECT scan_check($$SELECT id, tag FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id)$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'tags'), tag)$$, true);
-- a chained filter, an empty one, a NULL one
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'chain'), user_id)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'empty'), user_id)$$);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'none'), user_id)$$);
-- a filter built in the query, once per scan
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE bloom_contains(bloom_add((SELECT f FROM scan_filters WHERE name = 'users'), 1), user_id)$$, true);
-- projections, and a leakproof expression as the key
SELECT scan_check($$SELECT id * 2, upper(tag), user_id IS NULL FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT scan_check($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id::bigint)$$, true);

-- Other quals: before the probe (cheaper, leakproof), after it, several.
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE grp <> 3 AND bloom_contains(:'users'::bloom, user_id) AND id % 3 = 1$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) AND bloom_contains(:'users'::bloom, id)$$, true);
-- volatile quals: after the probe they see the same rows in the same
-- order; before it (the cheaper one first) the scan is not offered
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) AND random() < 0.5$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE random() < 0.5 AND bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT scan_check($$SELECT id, random() FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
-- quals that fail: after the probe, only for the rows it keeps (0 is in
-- the filter; 4998 is, but past the LIMIT); before it, the plain plan
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) AND 10 / user_id > 0$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) AND 10 / (user_id - 4998) >= 0 LIMIT 5$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE 10 / user_id > 0 AND bloom_contains(:'users'::bloom, user_id)$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE (10 / (user_id - 4998)) >= 0 AND bloom_contains(:'users'::bloom, user_id) LIMIT 5$$, true);
-- a key that may fail is not read ahead: the plain plan
SELECT scan_check($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, 10 / user_id)$$);
-- a filter of another kind fails at the first key, as the function does
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'tags'), user_id)$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE grp > 100 AND bloom_contains((SELECT f FROM scan_filters WHERE name = 'tags'), user_id)$$);
-- a corrupted stored filter fails where the function first reads it: at
-- the first non-null key, so not at all where every key is NULL
CREATE FUNCTION scan_unchecked(bytea, int) RETURNS bloom
LANGUAGE internal IMMUTABLE STRICT AS 'bytea_substr_no_len';
CREATE TABLE scan_corrupt AS
SELECT scan_unchecked(set_byte(f::bytea, 2, 9), 1) AS f FROM scan_filters WHERE name = 'users';
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_corrupt), user_id)$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE user_id IS NULL AND bloom_contains((SELECT f FROM scan_corrupt), user_id)$$);
DROP TABLE scan_corrupt;
DROP FUNCTION scan_unchecked(bytea, int);
-- a subquery that fails when the probe first needs it
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE f IS NOT NULL), user_id)$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE id < 0 AND bloom_contains((SELECT f FROM scan_filters WHERE f IS NOT NULL), user_id)$$);

-- LIMIT, OFFSET, ORDER BY, aggregates, DISTINCT, set operations.
SELECT scan_check($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id) LIMIT 7$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) OFFSET 130 LIMIT 300$$, true);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) ORDER BY user_id DESC, id LIMIT 20$$, true);
SELECT scan_check($$SELECT tag, count(*), sum(user_id) FROM scan_rows
	WHERE bloom_contains(:'users'::bloom, user_id) GROUP BY tag$$);
SELECT scan_check($$SELECT DISTINCT user_id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$);
SELECT scan_check($$SELECT user_id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)
	EXCEPT SELECT id FROM scan_rows WHERE id % 2 = 0$$);

-- Joins, and rescans: the scan inside a nested loop, with the filter
-- fixed, or a parameter that changes on every rescan.
CREATE TABLE scan_small AS SELECT g AS k, 'v' || g AS v FROM generate_series(0, 10) g;
ANALYZE scan_small;
SELECT scan_check($$SELECT r.id, s.v FROM scan_rows r JOIN scan_small s ON r.grp = s.k
	WHERE bloom_contains(:'users'::bloom, r.user_id)$$);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT r.id, s.v FROM scan_small s JOIN scan_rows r ON r.grp = s.k
WHERE bloom_contains(:'users'::bloom, r.user_id) AND s.k < 3;
SELECT scan_check($$SELECT r.id, s.v FROM scan_small s JOIN scan_rows r ON r.grp = s.k
	WHERE bloom_contains(:'users'::bloom, r.user_id) AND s.k < 3$$);
SELECT scan_check($$SELECT f.name, c.n FROM scan_filters f,
	LATERAL (SELECT count(*) AS n, sum(r.id) AS s FROM scan_rows r WHERE r.user_id <@ f.f) c
	WHERE f.name <> 'tags'$$);
SELECT scan_check($$SELECT f.name,
	(SELECT count(*) FROM scan_rows r WHERE bloom_contains(f.f, r.user_id) AND r.id < 5000)
	FROM scan_filters f WHERE f.name <> 'tags'$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Partitions: one scan per partition.
CREATE TABLE scan_parts (id int, user_id int, tag text) PARTITION BY RANGE (id);
CREATE TABLE scan_parts_1 PARTITION OF scan_parts FOR VALUES FROM (MINVALUE) TO (3500);
CREATE TABLE scan_parts_2 PARTITION OF scan_parts FOR VALUES FROM (3500) TO (7000);
CREATE TABLE scan_parts_3 PARTITION OF scan_parts FOR VALUES FROM (7000) TO (MAXVALUE);
INSERT INTO scan_parts SELECT id, user_id, tag FROM scan_rows;
ANALYZE scan_parts;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM scan_parts WHERE bloom_contains(:'users'::bloom, user_id) AND id > 3000;
SELECT scan_check($$SELECT * FROM scan_parts WHERE bloom_contains(:'users'::bloom, user_id) AND id > 3000$$);
SELECT scan_check($$SELECT * FROM scan_parts
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'chain'), user_id) LIMIT 50$$, true);

-- Changes: UPDATE and DELETE through the scan, and row locks.
BEGIN;
SET LOCAL bloomfilter.batched_scan = on;
UPDATE scan_rows SET tag = tag || '!' WHERE bloom_contains(:'users'::bloom, user_id) AND grp = 1;
DELETE FROM scan_rows WHERE :'users'::bloom @> user_id AND grp = 2;
SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r;
ROLLBACK;
BEGIN;
SET LOCAL bloomfilter.batched_scan = off;
UPDATE scan_rows SET tag = tag || '!' WHERE bloom_contains(:'users'::bloom, user_id) AND grp = 1;
DELETE FROM scan_rows WHERE :'users'::bloom @> user_id AND grp = 2;
SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r;
ROLLBACK;
SELECT scan_check($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)
	ORDER BY id LIMIT 5 FOR UPDATE$$, true);

-- Cursors: a scroll cursor walks back and forth (the planner puts a
-- Material above the scan, which cannot run backward).  scroll false:
-- declared with neither SCROLL nor NO SCROLL.
CREATE FUNCTION cursor_walk(query text, scroll boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	walk text := '';
BEGIN
	query := scan_literals(query);
	IF scroll THEN
		OPEN c SCROLL FOR EXECUTE query;
	ELSE
		OPEN c FOR EXECUTE query;
	END IF;
	FOR i IN 1..5 LOOP
		FETCH NEXT FROM c INTO r;
		walk := walk || r.id || ' ';
	END LOOP;
	FOR i IN 1..3 LOOP
		FETCH PRIOR FROM c INTO r;
		walk := walk || r.id || ' ';
	END LOOP;
	FETCH LAST FROM c INTO r;
	walk := walk || r.id || ' ';
	FETCH RELATIVE -10 FROM c INTO r;
	walk := walk || r.id || ' ';
	FETCH ABSOLUTE 3 FROM c INTO r;
	walk := walk || r.id;
	CLOSE c;
	RETURN walk;
END
$$;
SET bloomfilter.batched_scan = on;
SELECT cursor_walk($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$) AS walk_on \gset
SET bloomfilter.batched_scan = off;
SELECT cursor_walk($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$) AS walk_off \gset
SELECT :'walk_on' = :'walk_off' AS same_walk, :'walk_on' AS walk;
SET bloomfilter.batched_scan = on;
-- A cursor with neither SCROLL nor NO SCROLL may go back where its plan
-- can, as the plain scan can: it is not offered the scan, which cannot.
SELECT plan FROM scan_explain($$DECLARE may_scroll CURSOR FOR
	SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$) AS plan
WHERE plan !~ 'Filter:';
BEGIN;
DECLARE may_scroll CURSOR FOR
	SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id);
FETCH 3 FROM may_scroll;
FETCH 2 FROM may_scroll;
FETCH BACKWARD 2 FROM may_scroll;
ROLLBACK;
-- nor a PL/pgSQL cursor without SCROLL, which goes back the same way
SELECT cursor_walk($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$, false) AS back_on \gset
SET bloomfilter.batched_scan = off;
SELECT cursor_walk($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$, false) AS back_off \gset
SELECT :'back_on' = :'back_off' AS same_walk, :'back_on' AS walk;
SET bloomfilter.batched_scan = on;
-- The same in a new session, where the module loads while the cursor's
-- statement is planned (a scalar subquery: no literal of the type loads it
-- first): the planner hook did not see the statement start, so only a
-- statement that cannot be such a cursor gets the scan.
\c -
SET bloomfilter.batched_scan_min_size = 0;
BEGIN;
DECLARE may_scroll CURSOR FOR
	SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id);
FETCH 2 FROM may_scroll;
FETCH BACKWARD 1 FROM may_scroll;
ROLLBACK;
\c -
SET bloomfilter.batched_scan_min_size = 0;
SELECT plan FROM scan_explain($$SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id)$$) AS plan;
SET bloomfilter.batched_scan = on;
-- NO SCROLL says it will not go back: the scan, and FETCH BACKWARD fails
-- as it does over the plain plan
EXPLAIN (COSTS OFF) DECLARE forward_only NO SCROLL CURSOR FOR
	SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id);
BEGIN;
DECLARE forward_only NO SCROLL CURSOR FOR
	SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id);
FETCH 3 FROM forward_only;
FETCH BACKWARD 1 FROM forward_only;
ROLLBACK;
-- WHERE CURRENT OF acts on the row the cursor returned last, though the
-- scan has read rows past it
BEGIN;
DECLARE forward_only NO SCROLL CURSOR FOR
	SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id);
FETCH 3 FROM forward_only;
UPDATE scan_rows SET tag = 'current' WHERE CURRENT OF forward_only RETURNING id;
FETCH 2 FROM forward_only;
DELETE FROM scan_rows WHERE CURRENT OF forward_only RETURNING id;
MOVE FORWARD ALL IN forward_only;
DELETE FROM scan_rows WHERE CURRENT OF forward_only;
ROLLBACK;
-- in PL/pgSQL, every row the cursor returns, across batches
CREATE FUNCTION cursor_marks_current() RETURNS TABLE (marked bigint, wrong bigint)
LANGUAGE plpgsql AS $$
DECLARE
	c NO SCROLL CURSOR FOR
		SELECT id FROM scan_rows
		WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id);
BEGIN
	FOR r IN c LOOP
		UPDATE scan_rows SET tag = 'current' WHERE CURRENT OF c;
	END LOOP;
	RETURN QUERY SELECT count(*) FILTER (WHERE tag = 'current'),
		count(*) FILTER (WHERE (tag = 'current') <> coalesce(
			bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id), false))
	FROM scan_rows;
END
$$;
BEGIN;
SELECT plan FROM scan_explain($$DECLARE c NO SCROLL CURSOR FOR
	SELECT id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id)$$) AS plan;
SELECT * FROM cursor_marks_current();
ROLLBACK;
DROP FUNCTION cursor_marks_current();

-- Prepared statements with a generic plan: the filter is a parameter.
SET plan_cache_mode = force_generic_plan;
PREPARE probe_users(bloom) AS
	SELECT count(*), sum(id) FROM scan_rows WHERE bloom_contains($1, user_id) AND grp <> 4;
EXPLAIN (COSTS OFF) EXECUTE probe_users(:'users');
EXECUTE probe_users(:'users');
EXECUTE probe_users(:'chain');
EXECUTE probe_users(NULL);
DEALLOCATE probe_users;
SET bloomfilter.batched_scan = off;
PREPARE probe_users(bloom) AS
	SELECT count(*), sum(id) FROM scan_rows WHERE bloom_contains($1, user_id) AND grp <> 4;
EXPLAIN (COSTS OFF) EXECUTE probe_users(:'users');
EXECUTE probe_users(:'users');
EXECUTE probe_users(:'chain');
EXECUTE probe_users(NULL);
DEALLOCATE probe_users;
SET bloomfilter.batched_scan = on;
RESET plan_cache_mode;

-- A PL/pgSQL variable as the filter, growing between probes.
CREATE FUNCTION growing_probe() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	f bloom := bloom_empty(100, 0.01, 2);
	counts text := '';
	n bigint;
BEGIN
	FOR step IN 1..3 LOOP
		f := bloom_add_all(f, ARRAY(SELECT g FROM generate_series(step * 1000, step * 1000 + 999) g));
		SELECT count(*) INTO n FROM scan_rows WHERE bloom_contains(f, user_id);
		counts := counts || n || ' ';
	END LOOP;
	RETURN counts;
END
$$;
SET bloomfilter.batched_scan = on;
SELECT growing_probe() AS growing_on \gset
SET bloomfilter.batched_scan = off;
SELECT growing_probe() AS growing_off \gset
SELECT :'growing_on' = :'growing_off' AS same_counts, :'growing_on' AS counts;
SET bloomfilter.batched_scan = on;

-- Parallel: a Gather over the scan, the workers sharing the table.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT scan_explain($$SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id) AND grp <> 5$$);
SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r
WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id) AND grp <> 5 \gset on_
SET bloomfilter.batched_scan = off;
SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r
WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id) AND grp <> 5 \gset off_
SET bloomfilter.batched_scan = on;
SELECT :on_count = :off_count AND :on_sum = :off_sum AS same_parallel, :on_count AS count;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM scan_parts WHERE bloom_contains(:'users'::bloom, user_id);
SELECT count(*), sum(hashtext(p::text)) FROM scan_parts p WHERE bloom_contains(:'users'::bloom, user_id) \gset on_
SET bloomfilter.batched_scan = off;
SELECT count(*), sum(hashtext(p::text)) FROM scan_parts p WHERE bloom_contains(:'users'::bloom, user_id) \gset off_
SET bloomfilter.batched_scan = on;
SELECT :on_count = :off_count AND :on_sum = :off_sum AS same_parallel, :on_count AS count;
-- rescans of a parallel scan: a Gather inside a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET parallel_leader_participation = off;
SELECT count(*), sum(r.id) FROM scan_small s JOIN scan_rows r ON r.grp = s.k
WHERE bloom_contains(:'users'::bloom, r.user_id) AND s.k < 3 \gset on_
SET bloomfilter.batched_scan = off;
SELECT count(*), sum(r.id) FROM scan_small s JOIN scan_rows r ON r.grp = s.k
WHERE bloom_contains(:'users'::bloom, r.user_id) AND s.k < 3 \gset off_
SET bloomfilter.batched_scan = on;
SELECT :on_count = :off_count AND :on_sum = :off_sum AS same_rescans, :on_count AS count;
RESET parallel_leader_participation;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- qfilter probes: the same scan, with qf_prefetch, and the same rows and
-- errors.  A key removed again is absent but for false positives, through
-- the scan as through the function.
CREATE TABLE scan_filters_q (name text PRIMARY KEY, q qfilter);
INSERT INTO scan_filters_q
SELECT 'users', qfilter_agg(g) FROM generate_series(0, 4999, 3) g;
INSERT INTO scan_filters_q
SELECT 'tags', qfilter_agg('u' || g) FROM generate_series(0, 3) g;
INSERT INTO scan_filters_q
SELECT 'churn', qfilter_remove_all(qfilter_agg(g), ARRAY(SELECT generate_series(0, 4999, 6)))
FROM generate_series(0, 4999, 3) g;
INSERT INTO scan_filters_q VALUES ('empty', qfilter_empty(1000)), ('none', NULL);
SELECT scan_explain($$SELECT count(*) FROM scan_rows
	WHERE (SELECT q FROM scan_filters_q WHERE name = 'users') @> user_id AND tag <> 'u3'$$, true);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'users'), user_id)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE (SELECT q FROM scan_filters_q WHERE name = 'users') @> user_id AND grp <> 3$$, true);
SELECT scan_check($$SELECT id, tag FROM scan_rows
	WHERE user_id <@ (SELECT q FROM scan_filters_q WHERE name = 'churn')$$, true);
SELECT count(*) FILTER (WHERE user_id % 6 = 0) AS removed_found,
       count(*) FILTER (WHERE user_id % 6 = 3) AS kept_found
FROM scan_rows WHERE user_id <@ (SELECT q FROM scan_filters_q WHERE name = 'churn');
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'tags'), tag)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'empty'), user_id)$$);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'none'), user_id)$$);
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE qfilter_contains(qfilter_add(qfilter_empty(10), 7), user_id)$$, true);
-- a filter of another kind fails at the first key, as the function does
SELECT scan_check($$SELECT id FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'tags'), user_id)$$);
-- two workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT scan_explain($$SELECT count(*) FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'churn'), user_id)$$);
SELECT scan_check($$SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'churn'), user_id)$$);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a function of the same name in another schema, on text, is not a probe
CREATE SCHEMA scan_other;
CREATE FUNCTION scan_other.qfilter_contains(text, int) RETURNS boolean
LANGUAGE sql IMMUTABLE AS 'SELECT $2 % 2 = 0';
SELECT scan_plan($$SELECT id FROM scan_rows WHERE scan_other.qfilter_contains('x', user_id)$$);
DROP SCHEMA scan_other CASCADE;

-- Filters of megabytes stored out of line are fetched into memory on huge
-- pages (largevalue.c), by the scan and by the probe functions alike, in
-- each parallel worker too; a compressed one is detoasted as usual.
CREATE TABLE scan_large (f bloom, q qfilter);
INSERT INTO scan_large
SELECT bloom_add_all(bloom_empty(2500000), a), qfilter_add_all(qfilter_empty(1000000), a)
FROM (SELECT ARRAY(SELECT generate_series(0, 4999, 2)) AS a) keys;
SELECT pg_column_size(f) >= 2 * 1024 * 1024 AS bloom_stored_whole,
       pg_column_size(q) < (qfilter_info(q)).bytes AS qfilter_compressed
FROM scan_large;
SELECT scan_check($$SELECT id, user_id FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_large), user_id)$$, true);
SELECT scan_check($$SELECT id, user_id FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_large), user_id)$$, true);
SELECT count(*) FILTER (WHERE user_id % 2 = 0) AS even_found,
       (SELECT count(*) FROM scan_rows WHERE user_id % 2 = 0) AS even_rows
FROM scan_rows WHERE bloom_contains((SELECT f FROM scan_large), user_id);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT scan_check($$SELECT count(*), sum(hashtext(r::text)) FROM scan_rows r
	WHERE bloom_contains((SELECT f FROM scan_large), user_id)$$);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE scan_large;

-- Where it is not chosen: the setting off, a null filter.
SET bloomfilter.batched_scan = off;
SELECT scan_plan($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$);
SELECT scan_plan($$SELECT id FROM scan_rows
	WHERE qfilter_contains((SELECT q FROM scan_filters_q WHERE name = 'users'), user_id)$$);
SET bloomfilter.batched_scan = on;
SELECT scan_plan($$SELECT id FROM scan_rows WHERE bloom_contains(NULL::bloom, user_id)$$);
SELECT scan_plan($$SELECT id FROM scan_rows WHERE qfilter_contains(NULL::qfilter, user_id)$$);
-- At the default batched_scan_min_size (1MB) a smaller filter, constant or
-- from a parameter, gets the same plan and is probed row by row, with the
-- same rows: the size chooses the batch, not the plan.
RESET bloomfilter.batched_scan_min_size;
SHOW bloomfilter.batched_scan_min_size;
SELECT scan_plan($$SELECT id FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$);
SELECT scan_explain($$SELECT count(*) FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT scan_explain($$SELECT count(*) FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id) AND grp <> 3$$, true);
SELECT scan_check($$SELECT * FROM scan_rows
	WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id) AND grp <> 3$$, true);
-- on either side of a threshold of 16kB, the same rows
SET bloomfilter.batched_scan_min_size = '16kB';
INSERT INTO scan_filters SELECT 'large', bloom_agg(g) FROM generate_series(0, 19999) g;
SELECT f AS large FROM scan_filters WHERE name = 'large' \gset
SELECT (bloom_info(:'users'::bloom)).bytes < 16384 AS users_small,
       (bloom_info(:'large'::bloom)).bytes >= 16384 AS large_large;
SELECT scan_explain($$SELECT count(*) FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT scan_explain($$SELECT count(*) FROM scan_rows WHERE bloom_contains(:'large'::bloom, user_id)$$, true);
SELECT scan_check($$SELECT * FROM scan_rows WHERE bloom_contains(:'users'::bloom, user_id) AND grp <> 3$$, true);
SELECT scan_check($$SELECT * FROM scan_rows WHERE bloom_contains(:'large'::bloom, user_id) AND grp <> 3$$, true);
RESET bloomfilter.batched_scan_min_size;

-- Row-level security: the policy's quals run before the probe (a lower
-- security level), so a role sees through the scan only the rows it may
-- see, as through the plain plan; a policy with a function that is not
-- leakproof may not run ahead of its parent, and the scan is not offered.
CREATE TABLE scan_rls AS SELECT id, user_id, grp FROM scan_rows;
ALTER TABLE scan_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY scan_rls_visible ON scan_rls FOR SELECT USING (grp <> 3);
CREATE ROLE scan_reader;
GRANT SELECT ON scan_rls, scan_filters TO scan_reader;
SET ROLE scan_reader;
SELECT scan_check($$SELECT * FROM scan_rls WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT count(*) AS rows, count(*) FILTER (WHERE grp = 3) AS hidden
FROM scan_rls WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id);
RESET ROLE;
CREATE FUNCTION scan_not_leakproof(g int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN g <> 4; END $$;
CREATE POLICY scan_rls_opaque ON scan_rls AS RESTRICTIVE FOR SELECT USING (scan_not_leakproof(grp));
SET ROLE scan_reader;
SELECT scan_check($$SELECT * FROM scan_rls WHERE bloom_contains(:'users'::bloom, user_id)$$, true);
SELECT count(*) AS rows, count(*) FILTER (WHERE grp IN (3, 4)) AS hidden
FROM scan_rls WHERE bloom_contains((SELECT f FROM scan_filters WHERE name = 'users'), user_id);
RESET ROLE;
DROP TABLE scan_rls;
DROP FUNCTION scan_not_leakproof(int);
REVOKE SELECT ON scan_filters FROM scan_reader;
DROP ROLE scan_reader;

-- a function that only shares a probe's name, over a type that only shares
-- the filter's, is the user's own: a plain scan runs it (taking its
-- argument, an enum here, for a filter crashed the server)
CREATE SCHEMA scan_decoys;
CREATE TYPE scan_decoys.bloom AS ENUM ('x', 'y');
CREATE FUNCTION scan_decoys.bloom_contains(scan_decoys.bloom, n int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN n % 2 = 0; END $$;
CREATE TABLE scan_numbers AS SELECT g AS n FROM generate_series(1, 100) g;
EXPLAIN (COSTS OFF) SELECT count(*) FROM scan_numbers WHERE scan_decoys.bloom_contains('x', n);
SELECT count(*) AS even FROM scan_numbers WHERE scan_decoys.bloom_contains('x', n);
DROP TABLE scan_numbers;
DROP SCHEMA scan_decoys CASCADE;

DROP FUNCTION growing_probe();
DROP FUNCTION cursor_walk(text, boolean);
DROP FUNCTION scan_check(text, boolean);
DROP FUNCTION scan_plan(text);
DROP FUNCTION scan_rows_of(text, boolean);
DROP FUNCTION scan_literals(text);
DROP FUNCTION scan_explain(text, boolean);
DROP TABLE scan_parts, scan_small, scan_filters, scan_filters_q, scan_rows;
RESET bloomfilter.batched_scan;
