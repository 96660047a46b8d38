-- The planner's estimate of a probe: bloom_contains, @> and <@ agree, and
-- when the filter is known at plan time the estimate follows what it holds.
CREATE TABLE requests AS
SELECT i AS id, (i % 50000) * 3 AS user_id, 'u' || (i % 7) AS tag
FROM generate_series(1, 100000) i;
-- Statistics from every row (ANALYZE samples 300 rows per unit of target),
-- so that they and the estimates below are the same on every run: from a
-- random sample of 30,000 rows, a few runs in a hundred put another false
-- positive or two among the histogram's bounds, 1% each, and the estimate
-- for the filter of no user id past 3x.
SET default_statistics_target = 1000;
ANALYZE requests;
RESET default_statistics_target;

CREATE FUNCTION explain_json(query text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
	RETURN plan;
END
$$;

-- Estimated rows of a query against its actual rows, as "within 3x".
-- (counted_query, when given, is a query with the same result to count).
CREATE FUNCTION estimate_within_3x(query text, counted_query text DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	estimated float8;
	actual float8;
BEGIN
	estimated := (explain_json(query) -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
	EXECUTE 'SELECT count(*) FROM (' || coalesce(counted_query, query) || ') q' INTO actual;
	RETURN estimated BETWEEN greatest(actual, 1) / 3 AND greatest(actual, 1) * 3;
END
$$;

-- filters holding 2%, 30% and all of the user ids, and one of no user id
SELECT bloom_agg(g * 3)::text AS few FROM generate_series(0, 999) g \gset
SELECT bloom_agg(g * 3)::text AS many FROM generate_series(0, 14999) g \gset
SELECT bloom_agg(g * 3)::text AS every FROM generate_series(0, 49999) g \gset
SELECT bloom_agg(g * 3 + 1)::text AS none FROM generate_series(0, 49999) g \gset

SELECT name,
       estimate_within_3x(format('SELECT * FROM requests WHERE bloom_contains(%L::bloom, user_id)', f)) AS function,
       estimate_within_3x(format('SELECT * FROM requests WHERE %L::bloom @> user_id', f)) AS contains_operator,
       estimate_within_3x(format('SELECT * FROM requests WHERE user_id <@ %L::bloom', f)) AS contained_by_operator
FROM (VALUES ('few', :'few'), ('many', :'many'), ('every', :'every'), ('none', :'none')) v(name, f);

-- the function and its operators give the same estimate
SELECT count(DISTINCT rows) AS distinct_estimates
FROM (VALUES (format('SELECT * FROM requests WHERE bloom_contains(%L::bloom, user_id)', :'many')),
             (format('SELECT * FROM requests WHERE %L::bloom @> user_id', :'many')),
             (format('SELECT * FROM requests WHERE user_id <@ %L::bloom', :'many'))) q(query),
     LATERAL (SELECT (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8 AS rows
              FROM (SELECT explain_json(query) AS j) e) r;

-- a parameter of a custom plan is known too
PREPARE probe(bloom) AS SELECT * FROM requests WHERE bloom_contains($1, user_id);
SET plan_cache_mode = force_custom_plan;
SELECT estimate_within_3x(format('EXECUTE probe(%L)', :'few'),
                          format('SELECT * FROM requests WHERE bloom_contains(%L::bloom, user_id)', :'few'))
       AS custom_plan;
RESET plan_cache_mode;
DEALLOCATE probe;

-- not known at plan time (a scalar subquery): the documented default, 0.5%
CREATE TABLE filters AS SELECT 'many'::text AS name, :'many'::bloom AS f;
SELECT ((j -> 0 -> 'Plan' ->> 'Plan Rows')::float8 / 100000) AS default_selectivity
FROM (SELECT explain_json('SELECT * FROM requests WHERE bloom_contains((SELECT f FROM filters), user_id)') AS j) e;
-- a key of another kind, or of kind "other": the default too, and no error
-- while planning (execution refuses the first)
SELECT ((j -> 0 -> 'Plan' ->> 'Plan Rows')::float8 / 100000) AS other_kind_selectivity
FROM (SELECT explain_json(format('SELECT * FROM requests WHERE %L::bloom @> tag', :'many')) AS j) e;

-- where row-level security hides rows from the caller, the statistics'
-- sampled values are not probed (as for any operator that is not
-- leakproof): a plan's estimate must not tell whether a hidden row's value
-- is in a filter.  Here 777 is a third of the rows, all of them hidden.
CREATE TABLE tenant_rows AS
SELECT CASE WHEN i % 3 = 0 THEN 777 ELSE i END AS v,
       CASE WHEN i % 3 = 0 THEN 'other' ELSE 'mine' END AS tenant
FROM generate_series(1, 30000) i;
ANALYZE tenant_rows;
CREATE ROLE planner_tenant;
GRANT SELECT ON tenant_rows TO planner_tenant;
ALTER TABLE tenant_rows ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_mine ON tenant_rows USING (tenant = 'mine');
CREATE FUNCTION estimate_of_filter_of(value int) RETURNS float8
LANGUAGE sql AS $$
SELECT (explain_json(format('SELECT * FROM tenant_rows WHERE bloom_contains(%L::bloom, v)',
                            bloom_add(bloom_empty(10), value)))
        -> 0 -> 'Plan' ->> 'Plan Rows')::float8
$$;
-- the owner, whom the policy does not restrict, gets the statistics' view
SELECT estimate_of_filter_of(777) > 10 * estimate_of_filter_of(778) AS owner_estimate_follows_statistics;
SET ROLE planner_tenant;
SELECT estimate_of_filter_of(777) = estimate_of_filter_of(778) AS hidden_value_leaves_estimate;
RESET ROLE;
DROP TABLE tenant_rows;
DROP FUNCTION estimate_of_filter_of(int);
DROP ROLE planner_tenant;
