-- parallel.sql: the three bloom_agg forms in a forced parallel plan, which
-- runs the combine, serialize and deserialize functions.  Each result must
-- equal the serial filter of build.sql bit for bit, and the plan must show a
-- Partial Aggregate that workers really ran.
--
-- The query runs as EXPLAIN ANALYZE CREATE TABLE AS inside PL/pgSQL: the
-- one way to get both the plan that ran and its result, and a CREATE TABLE
-- AS may run in parallel where an INSERT ... SELECT may not.  The leader
-- does not scan, so every row passes through a worker's serialised state.

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

CREATE FUNCTION prop_build_parallel(p_typ text, p_tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
	plan_problem text;
	parts text[] := ARRAY['bloom_agg(v)', 'bloom_agg(v, fpr)', 'bloom_agg(v, capacity, fpr)'];
	result record;
BEGIN
	DROP TABLE IF EXISTS prop_parallel_result;
	FOR line IN EXECUTE format(
		'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
		'CREATE TABLE prop_parallel_result AS SELECT bloom_agg(v) AS a, '
		'bloom_agg(v, 0.001) AS b, bloom_agg(v, 5000, 0.01) AS c FROM %I', p_tbl)
	LOOP
		plan := plan || btrim(line) || ' / ';
	END LOOP;
	IF plan !~ 'Partial Aggregate' OR plan !~ 'Workers Launched: [1-9]' THEN
		plan_problem := 'not a parallel plan that ran in workers: ' || plan;
	END IF;
	SELECT * INTO STRICT result FROM prop_parallel_result;
	INSERT INTO prop_built VALUES
		(p_typ, 'parallel ' || parts[1], result.a, parts[1], 'distinct', plan_problem),
		(p_typ, 'parallel ' || parts[2], result.b, parts[2], 'distinct', plan_problem),
		(p_typ, 'parallel ' || parts[3], result.c, parts[3], 'all', plan_problem);
EXCEPTION WHEN OTHERS THEN
	INSERT INTO prop_built
	SELECT p_typ, 'parallel ' || part, NULL, part, NULL,
		   format('parallel build failed: %s %s', SQLSTATE, SQLERRM)
	FROM unnest(parts) AS part;
END
$$;

SELECT prop_build_parallel(typ, tbl) FROM prop_type ORDER BY typ;
DROP TABLE IF EXISTS prop_parallel_result;
