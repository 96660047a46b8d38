-- scan_differential.sql: the randomized differential test of the batched
-- filter scan (Custom Scan "Bloom Filter Scan", src/bloomscan.c).
--
-- What it promises to check: with bloomfilter.batched_scan on, a query
-- returns exactly what the plain plan (the setting off) returns: the same
-- multiset of rows, in the same order where the plain plan's order is
-- fixed (one table, no parallel workers), the same SQLSTATE where the
-- plain plan fails, the same number of calls of a volatile function, and
-- never a row less (a false negative, the worst bug a filter can have).
-- test/sql/bloomscan.sql checks hand-picked shapes; this file combines
-- them at random, 700 queries by default (some 40 s on two busy cores).
--
-- It owns, all in the schema scan_diff (made again by each run, and left
-- behind for a look after a failure):
--   - the tables and filters the queries probe (sd_t, its partitioned twin
--     sd_p, a security-barrier view sd_v, a copy under row-level security
--     sd_r, a small outer table sd_o, the filters sd_filters and
--     sd_qfilters) and the helper functions the generated quals call;
--   - the generator: sd_generate(n) makes case n, a query and how to run
--     it, from the seed and n alone, each choice drawn by name (sd_pick),
--     so that one case can be made again without the cases before it;
--   - the runner: sd_side runs a case with the scan on or off, inside a
--     subtransaction it always rolls back (settings, UPDATE/DELETE);
--     sd_compare says what differs; sd_run records one case;
--   - the report: one "ok"/"not ok" line per way of running a query and
--     per coverage check, and "#" lines for each query that differed
--     (seed, number, settings, the query), as test/property/run.sh counts.
--
-- The dimensions drawn for each case (sd_generate):
--   how it runs    rows (one statement), cursor (FETCH/MOVE forward, and
--                  backward with SCROLL or neither option), prepared (PREPARE ... $1 with a
--                  generic or custom plan, EXECUTEd with 1-3 filters),
--                  UPDATE (moving rows to other partitions too) and
--                  DELETE ... RETURNING (rolled back);
--   the filter     bloom or qfilter, of integers, text or dates, or of
--                  the wrong kind (an error), small or stored out of
--                  line; a constant literal, a scalar subquery (an
--                  InitPlan), a filter grown in the query, a stored
--                  chain, a filter changed by bloom_add/qfilter_add, an
--                  empty one, a NULL one, a subquery that fails, a
--                  parameter, or the outer side of a join (a new filter
--                  on every rescan, growing ones among them, as it is or
--                  changed);
--   the key        a column, a NULL-bearing column, a cast (to a domain
--                  too), a CASE, an expression that may not run ahead,
--                  text (some stored out of line), a date, a key from the
--                  outer side of a join;
--   the probe      bloom_contains(f, k) / qfilter_contains(f, k), f @> k,
--                  k <@ f;
--   other quals    0-3 of: cheap leakproof, cheap not leakproof,
--                  expensive (leakproof or not), volatile (random() after
--                  setseed, nextval, counted), failing for some rows
--                  (1/(x - c), a function that raises), a second probe;
--                  each written before or after the probe;
--   the relation   a table with dead and moved rows, a partitioned table
--                  (a partition with a dropped column, an empty one), a
--                  security-barrier view, a table with row-level security
--                  read by a role it applies to;
--   the query      a projection (volatile or failing ones too), DISTINCT,
--                  an aggregate, GROUP BY, ORDER BY, LIMIT/OFFSET, FOR
--                  UPDATE; joins: a nested loop that rescans the scan, a
--                  LATERAL subquery whose filter or key comes from the
--                  outer row, a correlated subquery, a hash join, two
--                  scans joined;
--   the plan       serial, or parallel (forced: parallel_setup_cost = 0
--                  and so on, two workers, the leader scanning or not);
--                  batched_scan_min_size 0, so that every filter batches,
--                  or now and then the default, so that small filters are
--                  probed row by row; now and then JIT-compiled.
--
-- Run by test/property/run.sh (SCAN_DIFF_SEED, SCAN_DIFF_QUERIES, ... set
-- the variables below).  Alone, as a superuser, in any database where the
-- extension can be created:
--   psql -X -At -v ON_ERROR_STOP=1 -v seed=7 -v queries=5000 -v seconds=600 \
--        -d DB -f test/property/scan_differential.sql
-- psql variables (all optional): seed (1), first (1: the number of the
-- first case), queries (700: how many cases), seconds (60: stop making
-- new cases after that long), verbose (1: show every differing query
-- whole, filters included, and both results).  A differing case is made
-- again alone with seed=S first=N queries=1.

SET client_min_messages = warning;
\if :{?seed}
\else
\set seed 1
\endif
\if :{?first}
\else
\set first 1
\endif
\if :{?queries}
\else
\set queries 700
\endif
\if :{?seconds}
\else
\set seconds 60
\endif
\if :{?verbose}
\else
\set verbose 0
\endif

CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP SCHEMA IF EXISTS scan_diff CASCADE;
CREATE SCHEMA scan_diff;
-- the extension's schema after ours: the queries name its functions bare
SELECT set_config('search_path', 'scan_diff, ' || n.nspname, false) AS search_path
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'bloomfilter' \gset
SET scan_diff.seed = :'seed';
SET scan_diff.show_whole = :'verbose';
SELECT clock_timestamp() + make_interval(secs => :seconds) AS deadline \gset
SET scan_diff.deadline = :'deadline';

-- -------------------------------------------------------------------------
-- The data

-- 3000 rows, 24 batches of 128.  No index, so that every plan scans.  Dead
-- rows (deleted) and moved ones (HOT-updated: their new version is further
-- down the page) sit among the live ones, which the batch must skip and
-- keep in the table's order; fillfactor leaves room for the rolled-back
-- updates to stay on their page; no autovacuum, so the plans stay put.
-- Keys: k, kn (NULL-bearing) int; s, sn (NULL-bearing), sl (some stored
-- out of line) text; d date.
CREATE TABLE sd_t (id int, k int, kn int, s text, sn text, g int, d date, sl text)
	WITH (fillfactor = 70, autovacuum_enabled = off);
ALTER TABLE sd_t ALTER COLUMN sl SET STORAGE EXTERNAL;
INSERT INTO sd_t
SELECT i, (i * 37) % 1000,
	   CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7) % 1500 END,
	   'u' || i % 9,
	   CASE WHEN i % 7 = 0 THEN NULL ELSE 'v' || i % 50 END,
	   i % 11,
	   date '2020-01-01' + (i * 13) % 700,
	   CASE WHEN i % 30 = 0 THEN repeat(chr(97 + i % 26), 2100) || i % 40 ELSE 'v' || i % 50 END
FROM generate_series(1, 3000) i;
UPDATE sd_t SET g = g WHERE id % 17 = 0;
DELETE FROM sd_t WHERE id % 101 = 0;
ANALYZE sd_t;

-- The same rows, partitioned: one partition has its columns at other
-- positions (a dropped column before them), one is empty.
CREATE TABLE sd_p (id int, k int, kn int, s text, sn text, g int, d date, sl text)
	PARTITION BY RANGE (id);
CREATE TABLE sd_p1 PARTITION OF sd_p FOR VALUES FROM (MINVALUE) TO (1000)
	WITH (autovacuum_enabled = off);
CREATE TABLE sd_p2 (pad text, id int, k int, kn int, s text, sn text, g int, d date, sl text)
	WITH (autovacuum_enabled = off);
ALTER TABLE sd_p2 DROP COLUMN pad;
ALTER TABLE sd_p ATTACH PARTITION sd_p2 FOR VALUES FROM (1000) TO (2200);
CREATE TABLE sd_p3 PARTITION OF sd_p FOR VALUES FROM (5000) TO (6000)
	WITH (autovacuum_enabled = off);
CREATE TABLE sd_p4 PARTITION OF sd_p DEFAULT WITH (autovacuum_enabled = off);
INSERT INTO sd_p SELECT * FROM sd_t;
ANALYZE sd_p;

-- A probe from outside a security-barrier view stays above it.
CREATE VIEW sd_v WITH (security_barrier) AS SELECT * FROM sd_t WHERE g <> 4;

-- The same rows under row-level security, read as sd_reader: the policy's
-- qual runs before any of the query's (a lower security level), the probe
-- among them.  The role is the cluster's: made once, kept.
CREATE TABLE sd_r WITH (autovacuum_enabled = off) AS SELECT * FROM sd_t;
ANALYZE sd_r;
ALTER TABLE sd_r ENABLE ROW LEVEL SECURITY;
CREATE POLICY sd_r_visible ON sd_r USING (g <> 3);
DO $$
BEGIN
	CREATE ROLE sd_reader;
EXCEPTION WHEN duplicate_object THEN
	NULL;
END
$$;

-- The outer side of joins: o.k matches sd_t.g.
CREATE TABLE sd_o (o int PRIMARY KEY, k int, v text, flag boolean);
INSERT INTO sd_o SELECT i, i, 'v' || i, i % 2 = 0 FROM generate_series(1, 8) i;
ANALYZE sd_o;

-- The filters, each of a kind of key: int (int2/4/8 and numeric), text,
-- date, float8 (only ever probed with the wrong kind), or any (no key yet).
CREATE FUNCTION sd_ints(low int, high int, step int) RETURNS int[]
LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY(SELECT generate_series(low, high, step)) $$;
CREATE FUNCTION sd_tags() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$ SELECT '{u0, u1, u4, v3, v7, v10, v22, v41}'::text[] $$;

CREATE TABLE sd_filters (name text PRIMARY KEY, kind text, f bloom);
INSERT INTO sd_filters
SELECT 'users', 'int', bloom_agg(g) FROM unnest(sd_ints(0, 1499, 3)) g
UNION ALL SELECT 'all', 'int', bloom_agg(g) FROM unnest(sd_ints(0, 2999, 1)) g
UNION ALL SELECT 'few', 'int', bloom_add_all(bloom_empty(100), '{0, 7, 500, 1001}'::int[])
-- chains of segments: grown from a small capacity
UNION ALL SELECT 'chain', 'int', bloom_add_all(bloom_empty(50, 0.01, 2), sd_ints(0, 1499, 2))
UNION ALL SELECT 'grow1', 'int', bloom_add_all(bloom_empty(20, 0.01, 2), sd_ints(0, 99, 5))
UNION ALL SELECT 'grow2', 'int', bloom_add_all(bloom_empty(20, 0.01, 2), sd_ints(0, 499, 5))
UNION ALL SELECT 'grow3', 'int', bloom_add_all(bloom_empty(20, 0.01, 2), sd_ints(0, 1499, 5))
UNION ALL SELECT 'empty', 'any', bloom_empty(1000)
UNION ALL SELECT 'none', 'any', NULL
UNION ALL SELECT 'tags', 'text', bloom_agg(t) FROM unnest(sd_tags()) t
UNION ALL SELECT 'tags_chain', 'text',
		  bloom_add_all(bloom_empty(4, 0.01, 2), ARRAY(SELECT 'v' || g FROM unnest(sd_ints(0, 49, 3)) g))
UNION ALL SELECT 'longs', 'text', bloom_agg(sl) FROM sd_t WHERE id % 60 = 0
UNION ALL SELECT 'dates', 'date', bloom_agg(date '2020-01-01' + g) FROM unnest(sd_ints(0, 699, 2)) g
UNION ALL SELECT 'floats', 'float', bloom_agg(g::float8) FROM unnest(sd_ints(0, 999, 1)) g
-- large enough to be stored out of line, compressed: detoasted to probe
UNION ALL SELECT 'big', 'int', bloom_add_all(bloom_empty(200000), sd_ints(0, 2999, 2));

CREATE TABLE sd_qfilters (name text PRIMARY KEY, kind text, q qfilter);
INSERT INTO sd_qfilters
SELECT 'users', 'int', qfilter_agg(g) FROM unnest(sd_ints(0, 1499, 3)) g
UNION ALL SELECT 'all', 'int', qfilter_agg(g) FROM unnest(sd_ints(0, 2999, 1)) g
-- keys removed again: absent but for false positives
UNION ALL SELECT 'churn', 'int', qfilter_remove_all(qfilter_agg(g), sd_ints(0, 1499, 6))
		  FROM unnest(sd_ints(0, 1499, 3)) g
UNION ALL SELECT 'grow1', 'int', qfilter_add_all(qfilter_empty(3000), sd_ints(0, 99, 5))
UNION ALL SELECT 'grow2', 'int', qfilter_add_all(qfilter_empty(3000), sd_ints(0, 499, 5))
UNION ALL SELECT 'grow3', 'int', qfilter_add_all(qfilter_empty(3000), sd_ints(0, 1499, 5))
UNION ALL SELECT 'empty', 'any', qfilter_empty(1000)
UNION ALL SELECT 'none', 'any', NULL
UNION ALL SELECT 'tags', 'text', qfilter_agg(t) FROM unnest(sd_tags()) t
UNION ALL SELECT 'longs', 'text', qfilter_agg(sl) FROM sd_t WHERE id % 60 = 0
UNION ALL SELECT 'dates', 'date', qfilter_agg(date '2020-01-01' + g) FROM unnest(sd_ints(0, 699, 2)) g
UNION ALL SELECT 'floats', 'float', qfilter_agg(g::float8) FROM unnest(sd_ints(0, 999, 1)) g
UNION ALL SELECT 'big', 'int', qfilter_add_all(qfilter_empty(200000), sd_ints(0, 2999, 2));
ANALYZE sd_filters, sd_qfilters;
-- the generator trusts the kind column: so must the filters
SELECT CASE WHEN count(*) FILTER (WHERE coalesce(key_kind, 'none')
								  <> CASE kind WHEN 'int' THEN 'number' WHEN 'any' THEN 'none' ELSE kind END) = 0
			THEN 'ok - ' ELSE 'not ok - ' END
	   || 'the filters are of the kinds the generator draws them for'
FROM (SELECT kind, (bloom_info(f)).key_kind FROM sd_filters
	  UNION ALL
	  SELECT kind, (qfilter_info(q)).key_kind FROM sd_qfilters) f;

-- A key cast to a domain.
CREATE DOMAIN sd_count AS int CHECK (VALUE >= 0);

-- Calls of a volatile qual, counted: the batched scan must call it for the
-- same rows as the plain plan, no more.
CREATE SEQUENCE sd_calls;

GRANT USAGE ON SCHEMA scan_diff TO sd_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA scan_diff TO sd_reader;
GRANT UPDATE, DELETE ON sd_r TO sd_reader;
GRANT ALL ON SEQUENCE sd_calls TO sd_reader;

-- Quals the planner orders by their cost: expensive ones after the probe,
-- a cheap one before it; leakproof (it may run ahead) or not.
CREATE FUNCTION sd_slow(x int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE COST 1000
AS $$ BEGIN RETURN x % 5 <> 1; END $$;
CREATE FUNCTION sd_slow_opaque(x int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$ BEGIN RETURN x % 3 <> 2; END $$;
CREATE FUNCTION sd_cheap_opaque(x int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 0.01 AS $$ BEGIN RETURN x <> 6; END $$;
-- fails at one row: the plain plan fails only if it reaches that row
CREATE FUNCTION sd_fail_at(x int, bad int) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$
BEGIN
	IF x = bad THEN
		RAISE EXCEPTION 'sd_fail_at reached row %', x USING ERRCODE = 'SDF01';
	END IF;
	RETURN true;
END
$$;

-- -------------------------------------------------------------------------
-- Drawing choices
--
-- Each choice of case n is a hash of (seed, n, the choice's name): a case
-- is made the same way whatever ran before it, and adding a dimension does
-- not change the other draws.  hashtext is the same on every version.

CREATE FUNCTION sd_draw(n int, what text) RETURNS bigint
LANGUAGE sql STABLE AS $$
	SELECT hashtext(current_setting('scan_diff.seed') || '/' || n || '/' || what)::bigint + 2147483648
$$;

-- One of options; list an option twice to make it twice as likely.
CREATE FUNCTION sd_pick(n int, what text, VARIADIC options text[]) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT options[1 + sd_draw(n, what) % cardinality(options)]
$$;

CREATE FUNCTION sd_chance(n int, what text, percent int) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT sd_draw(n, what) % 100 < percent
$$;

CREATE FUNCTION sd_number(n int, what text, low int, high int) RETURNS int
LANGUAGE sql STABLE AS $$
	SELECT (low + sd_draw(n, what) % (high - low + 1))::int
$$;

-- -------------------------------------------------------------------------
-- The generator

-- One case: a query and how to run it.
CREATE TYPE sd_case AS (
	n int,
	mode text,				-- rows, cursor, prepared, dml
	summary text,			-- the dimensions drawn, for the report
	sql text,				-- the query (the filter is $1 if prepared)
	display text,			-- sql with the literal filters abbreviated
	settings text[],		-- name, value, name, value, ...
	ordered boolean,		-- the rows' order is fixed: compare it too
	plan_bound boolean,		-- its result depends on the plan's shape
	param_type text,		-- prepared: the type of $1
	params text[],			-- prepared: each EXECUTE's argument
	cursor_option text,		-- cursor: SCROLL, NO SCROLL or nothing
	fetches text[],			-- cursor: the moves
	after_sql text			-- dml: the table's state after the change
);

-- A filter's value as a literal of its type (or NULL), and how the
-- report shows it.
CREATE FUNCTION sd_literal(ftype text, fname text, OUT value text, OUT shown text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	txt text;
BEGIN
	IF ftype = 'bloom' THEN
		SELECT f::text INTO txt FROM sd_filters WHERE name = fname;
	ELSE
		SELECT q::text INTO txt FROM sd_qfilters WHERE name = fname;
	END IF;
	value := coalesce(quote_literal(txt) || '::' || ftype, 'NULL::' || ftype);
	shown := CASE WHEN txt IS NULL THEN value
				  ELSE format('''<%s %s>''::%s', ftype, fname, ftype) END;
END
$$;

-- The names of the filters of a type for a kind of key; with wrong, those
-- of the other kinds (each probe then fails, at its first non-null key).
CREATE FUNCTION sd_filter_names(ftype text, kind text, wrong boolean) RETURNS text[]
LANGUAGE sql STABLE AS $$
	SELECT array_agg(name ORDER BY name)
	FROM (SELECT name, kind AS fkind FROM sd_filters WHERE ftype = 'bloom'
		  UNION ALL
		  SELECT name, kind FROM sd_qfilters WHERE ftype = 'qfilter') f
	WHERE CASE WHEN wrong THEN fkind NOT IN (kind, 'any') ELSE fkind IN (kind, 'any') END
$$;

-- The filter's expression, from where it comes (source), and how the report
-- shows it.  A filter "grown" here is built by the query itself, once per
-- scan, a chain of segments for bloom.
CREATE FUNCTION sd_filter_expr(n int, ftype text, kind text, fname text, source text,
							   OUT expr text, OUT shown text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	col text := CASE ftype WHEN 'bloom' THEN 'f' ELSE 'q' END;
	tbl text := CASE ftype WHEN 'bloom' THEN 'sd_filters' ELSE 'sd_qfilters' END;
	added text := CASE kind WHEN 'text' THEN '''v7''' WHEN 'date' THEN 'date ''2020-01-08'''
							ELSE '7' END;
	values_sql text := CASE kind
		WHEN 'text' THEN 'ARRAY(SELECT ''v'' || g FROM generate_series(0, 49, 2) g)'
		WHEN 'date' THEN 'ARRAY(SELECT date ''2020-01-01'' + g FROM generate_series(0, 699, 3) g)'
		ELSE format('ARRAY(SELECT generate_series(0, 1499, %s))', sd_number(n, 'grown step', 2, 9)) END;
BEGIN
	CASE source
		WHEN 'literal' THEN
			SELECT l.value, l.shown INTO expr, shown FROM sd_literal(ftype, fname) l;
			RETURN;
		WHEN 'null' THEN
			expr := 'NULL::' || ftype;
		WHEN 'subquery' THEN
			expr := format('(SELECT %s FROM %s WHERE name = %L)', col, tbl, fname);
		WHEN 'changed' THEN
			expr := format('%s_add((SELECT %s FROM %s WHERE name = %L), %s)',
						   ftype, col, tbl, fname, added);
		WHEN 'grown' THEN
			expr := CASE ftype
				WHEN 'bloom' THEN 'bloom_add_all(bloom_empty(20, 0.01, 2), ' || values_sql || ')'
				ELSE 'qfilter_add_all(qfilter_empty(2000), ' || values_sql || ')' END;
		WHEN 'failing' THEN
			-- more than one row: fails when the probe first needs it
			expr := format('(SELECT %s FROM %s WHERE %s IS NOT NULL)', col, tbl, col);
		WHEN 'param' THEN
			expr := '$1';
		WHEN 'outer' THEN
			-- a parameter, or an expression of one: copied, not in place
			expr := sd_pick(n, 'outer filter', 'o.' || col, 'o.' || col,
							format('%s_add(o.%s, %s)', ftype, col, added));
	END CASE;
	shown := expr;
END
$$;

-- The key, of kind: columns, a NULL-bearing column, text stored out of
-- line, casts (to a domain too) and a CASE that may run ahead,
-- expressions that may not (int4pl can fail, so can int2(int4)).
CREATE FUNCTION sd_key(n int, kind text, outer_key boolean) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
	IF outer_key THEN
		-- a key that the outer row changes on every rescan
		RETURN CASE kind WHEN 'text' THEN 'CASE WHEN o.flag THEN r.s ELSE r.sn END'
						 WHEN 'date' THEN 'CASE WHEN o.flag THEN r.d END'
						 ELSE 'CASE WHEN o.flag THEN r.k ELSE r.kn END' END;
	END IF;
	IF kind = 'text' THEN
		RETURN sd_pick(n, 'text key', 'r.s', 'r.s', 'r.sn', 'r.sn', 'r.sl', 'r.s::varchar',
					   'CASE WHEN r.g > 4 THEN r.s ELSE r.sn END', 'lower(r.s)', '(r.sn || '''')');
	ELSIF kind = 'date' THEN
		RETURN sd_pick(n, 'date key', 'r.d', 'r.d', 'CASE WHEN r.g > 4 THEN r.d END');
	END IF;
	RETURN sd_pick(n, 'int key', 'r.k', 'r.k', 'r.kn', 'r.kn', 'r.id', 'r.k::bigint',
				   'r.kn::numeric', 'CASE WHEN r.g > 4 THEN r.k END', 'COALESCE(r.kn, r.k)',
				   '(r.k + 1)', 'r.g::smallint', 'r.k::sd_count');
END
$$;

-- The probe, in one of its three spellings.
CREATE FUNCTION sd_probe(n int, ftype text, filter text, key text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT format(sd_pick(n, 'spelling', '%1$s_contains(%2$s, %3$s)', '%2$s @> %3$s', '%3$s <@ %2$s'),
				  ftype, filter, key)
$$;

-- Qual i of case n, written before or after the probe (the planner then
-- orders the quals by cost).  volatile: its calls count; fails: it raises
-- for some row.
CREATE FUNCTION sd_qual(n int, i int, OUT expr text, OUT volatile boolean, OUT fails boolean)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	kind text := sd_pick(n, 'qual ' || i,
						 'cheap', 'cheap', 'cheap', 'cheap', 'cheap', 'opaque', 'expensive',
						 'expensive', 'volatile', 'volatile', 'failing', 'probe');
BEGIN
	volatile := kind = 'volatile';
	fails := kind = 'failing';
	expr := CASE kind
		WHEN 'cheap' THEN sd_pick(n, 'cheap ' || i,
			format('r.g <> %s', sd_number(n, 'g ' || i, 0, 10)),
			format('r.id > %s', sd_number(n, 'id ' || i, 0, 2900)),
			'r.s <> ''u3''', 'r.kn IS NOT NULL', 'r.sn IS NULL')
		WHEN 'opaque' THEN sd_pick(n, 'opaque ' || i, 'sd_cheap_opaque(r.g)', 'r.id % 4 <> 1')
		WHEN 'expensive' THEN sd_pick(n, 'expensive ' || i, 'sd_slow(r.id)', 'sd_slow_opaque(r.k)')
		WHEN 'volatile' THEN sd_pick(n, 'volatile ' || i,
			format('random() < 0.%s', sd_number(n, 'random ' || i, 2, 9)),
			'nextval(''sd_calls'') > 0')
		-- a row the scan reaches early, late, or never (0)
		WHEN 'failing' THEN sd_pick(n, 'failing ' || i,
			format('10 / (r.id - %s) <> 3', sd_pick(n, 'bad id ' || i, '0', '5', '40', '700', '2999')),
			format('10 / (r.k - %s) <> 3', sd_number(n, 'bad k ' || i, 0, 999)),
			format('sd_fail_at(r.id, %s)', sd_pick(n, 'bad row ' || i, '0', '3', '260', '1900')))
		WHEN 'probe' THEN sd_pick(n, 'second probe ' || i,
			'bloom_contains((SELECT f FROM sd_filters WHERE name = ''all''), r.id)',
			'r.kn <@ (SELECT q FROM sd_qfilters WHERE name = ''users'')')
	END;
END
$$;

-- The moves of a cursor: forward only with NO SCROLL, any otherwise.
-- Whether a cursor declared with neither option may go backward
-- PostgreSQL leaves to its plan: a sequential scan can, the batched scan
-- cannot, so such a cursor must not be given the batched scan.
CREATE FUNCTION sd_fetches(n int, scroll boolean) RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
	moves text[] := '{}';
	move text;
BEGIN
	FOR i IN 1 .. sd_number(n, 'moves', 2, 12) LOOP
		IF scroll THEN
			move := sd_pick(n, 'move ' || i, 'NEXT', 'NEXT', 'PRIOR', 'FIRST', 'LAST',
							'ABSOLUTE', 'RELATIVE', 'FORWARD', 'BACKWARD');
		ELSE
			move := sd_pick(n, 'move ' || i, 'NEXT', 'NEXT', 'NEXT', 'RELATIVE', 'FORWARD');
		END IF;
		IF move IN ('ABSOLUTE', 'RELATIVE', 'FORWARD', 'BACKWARD') THEN
			move := move || ' ' || CASE
				WHEN move = 'ABSOLUTE' OR (move = 'RELATIVE' AND scroll)
					THEN sd_number(n, 'count ' || i, -300, 300)
				ELSE sd_number(n, 'count ' || i, 1, 300) END;
		END IF;
		moves := moves || move;
	END LOOP;
	RETURN moves;
END
$$;

-- The WHERE clause around the probe: 0-3 other quals, each written before
-- or after it (the planner then orders them by cost and security level).
-- cond_shown is cond with probe_shown; told says how many went where.
CREATE FUNCTION sd_where(n int, probe text, probe_shown text, OUT cond text, OUT cond_shown text,
						 OUT volatile boolean, OUT failing int, OUT told text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	qual record;
	before text[] := '{}';
	after text[] := '{}';
BEGIN
	volatile := false;
	failing := 0;
	FOR i IN 1 .. sd_pick(n, 'quals', '0', '1', '1', '2', '2', '3')::int LOOP
		SELECT * INTO qual FROM sd_qual(n, i);
		volatile := volatile OR qual.volatile;
		failing := failing + qual.fails::int;
		IF sd_chance(n, 'before ' || i, 50) THEN
			before := before || qual.expr;
		ELSE
			after := after || qual.expr;
		END IF;
	END LOOP;
	cond := array_to_string(before || probe || after, ' AND ');
	cond_shown := array_to_string(before || probe_shown || after, ' AND ');
	told := CASE WHEN cardinality(before) + cardinality(after) > 0
				 THEN format(', other quals: %s before, %s after', cardinality(before), cardinality(after))
				 ELSE '' END;
END
$$;

-- What a query of the shape does with the rows: its select list, and
-- DISTINCT, an aggregate or GROUP BY (wrap), ORDER BY, LIMIT/OFFSET, row
-- locks; whether the list is volatile, or may fail.
CREATE TYPE sd_rows AS (list text, wrap text, order_by text, limits text, locking text,
						volatile boolean, failing int);
CREATE FUNCTION sd_rows_clauses(n int, mode text, shape text,
								OUT list text, OUT wrap text, OUT order_by text, OUT limits text,
								OUT locking text, OUT volatile boolean, OUT failing int)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	wrap := 'none';
	order_by := '';
	limits := '';
	locking := '';
	IF shape = 'single' AND mode <> 'dml' THEN
		wrap := sd_pick(n, 'wrap', 'none', 'none', 'none', 'none', 'none', 'distinct', 'aggregate',
						'group');
		list := CASE wrap
			WHEN 'distinct' THEN sd_pick(n, 'list', 'r.k', 'r.g, r.s', 'r.kn')
			WHEN 'aggregate' THEN 'count(*), sum(r.k), count(r.kn), min(r.s), max(r.id)'
			WHEN 'group' THEN 'r.g, count(*), sum(r.id), max(r.sn)'
			ELSE sd_pick(n, 'list', 'r.*', 'r.id', 'r.id, r.k, r.s', 'r.*',
						 'r.id * 2 AS twice, upper(r.s) AS up, r.kn IS NULL AS kn_null',
						 'r.id, random() AS rnd', 'r.id, nextval(''sd_calls'') AS tick',
						 format('r.id, 10 / (r.id - %s) AS q', sd_pick(n, 'bad list', '9', '1000'))) END;
		order_by := CASE wrap
			WHEN 'none' THEN sd_pick(n, 'order', '', '', '', ' ORDER BY r.id', ' ORDER BY r.k DESC, r.id',
									 ' ORDER BY r.s, r.id DESC')
			WHEN 'distinct' THEN sd_pick(n, 'order', '', ' ORDER BY ' || list)
			WHEN 'group' THEN sd_pick(n, 'order', '', ' ORDER BY r.g')
			ELSE '' END;
		IF wrap = 'none' AND sd_chance(n, 'locking', 8) THEN
			locking := sd_pick(n, 'lock', ' FOR UPDATE', ' FOR SHARE');
		END IF;
	ELSIF shape IN ('nested loop', 'hash join') THEN
		list := sd_pick(n, 'list', 'r.id, o.v', 'r.*, o.o', 'count(*), sum(r.id), max(o.v)');
		IF list !~ 'count' THEN
			order_by := sd_pick(n, 'order', '', '', ' ORDER BY r.id, o.o');
		END IF;
	ELSIF shape IN ('lateral filter', 'lateral key') THEN
		list := sd_pick(n, 'list', 'r.id', 'r.id, r.k, r.sn');
		order_by := sd_pick(n, 'order', '', ' ORDER BY r.id DESC');
	ELSIF shape = 'subplan' THEN
		list := sd_pick(n, 'list', 'count(*) || '':'' || coalesce(sum(r.id), 0)', 'max(r.id)');
	ELSE
		list := 'r.id, r2.id AS id2';
	END IF;
	IF mode <> 'dml' AND shape <> 'subplan' AND (list !~ 'count' OR wrap = 'group') THEN
		limits := sd_pick(n, 'limit', '', '', '', ' LIMIT 1', ' LIMIT 7', ' LIMIT 200', ' OFFSET 130',
						  ' OFFSET 40 LIMIT 300', ' LIMIT 1000');
	END IF;
	IF shape LIKE 'lateral%' AND limits = '' THEN
		limits := ' OFFSET 0';	-- keeps the subquery apart: outer values are parameters
	END IF;
	volatile := list ~ 'random|nextval';
	failing := (list ~ '10 /')::int;
END
$$;

-- The query's text, from its parts (cond: the WHERE clause, rows:
-- sd_rows_clauses), around the scanned relation tbl, aliased r.
CREATE FUNCTION sd_query(n int, mode text, shape text, tbl text, cond text, rows sd_rows,
						 outer_tbl text, outer_names text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
	outer_rows int := sd_number(n, 'outer rows', 1, 6);
BEGIN
	IF mode = 'dml' THEN
		RETURN format(CASE sd_pick(n, 'change', 'update', 'move', 'delete', 'delete')
			WHEN 'update'
				THEN 'UPDATE %s r SET s = r.s || ''!'', kn = r.kn + 1 WHERE %s RETURNING r.id, r.s, r.kn'
			-- new versions in pages still to scan; in sd_p, in partitions
			-- still to scan (not to be seen by this scan)
			WHEN 'move' THEN 'UPDATE %s r SET id = r.id + 1100 WHERE %s RETURNING r.id, r.k'
			ELSE 'DELETE FROM %s r WHERE %s RETURNING r.*' END, tbl, cond);
	END IF;
	RETURN CASE shape
		WHEN 'single' THEN
			format('SELECT %s%s FROM %s r WHERE %s%s%s%s%s',
				   CASE rows.wrap WHEN 'distinct' THEN 'DISTINCT ' ELSE '' END, rows.list, tbl, cond,
				   CASE rows.wrap WHEN 'group' THEN ' GROUP BY r.g' ELSE '' END,
				   rows.order_by, rows.limits, rows.locking)
		WHEN 'nested loop' THEN
			format('SELECT %s FROM sd_o o JOIN %s r ON r.g = o.k WHERE o.k < %s AND %s%s%s',
				   rows.list, tbl, outer_rows, cond, rows.order_by, rows.limits)
		WHEN 'hash join' THEN
			format('SELECT %s FROM %s r JOIN sd_o o ON r.g = o.k WHERE %s%s%s',
				   rows.list, tbl, cond, rows.order_by, rows.limits)
		WHEN 'two scans' THEN
			format('SELECT %s FROM %s r JOIN sd_t r2 ON r2.id = r.id + 1 WHERE %s'
				   ' AND r2.kn <@ (SELECT f FROM sd_filters WHERE name = ''chain'')%s%s',
				   rows.list, tbl, cond, rows.order_by, rows.limits)
		WHEN 'lateral key' THEN
			format('SELECT o.o, x.* FROM sd_o o CROSS JOIN LATERAL'
				   ' (SELECT %s FROM %s r WHERE %s%s%s) x WHERE o.o <= %s',
				   rows.list, tbl, cond, rows.order_by, rows.limits, outer_rows)
		WHEN 'lateral filter' THEN
			format('SELECT o.name, x.* FROM %s o CROSS JOIN LATERAL'
				   ' (SELECT %s FROM %s r WHERE %s%s%s) x WHERE o.name IN (%s)',
				   outer_tbl, rows.list, tbl, cond, rows.order_by, rows.limits, outer_names)
		ELSE
			format('SELECT o.name, (SELECT %s FROM %s r WHERE %s) AS x FROM %s o WHERE o.name IN (%s)',
				   rows.list, tbl, cond, outer_tbl, outer_names)
	END;
END
$$;

-- The settings a case runs with, on either side.
CREATE FUNCTION sd_settings(n int, shape text, tbl text, parallel boolean) RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
	settings text[] := '{}';
BEGIN
	IF tbl = 'sd_r' THEN
		settings := settings || ARRAY['role', 'sd_reader'];
	END IF;
	IF parallel THEN
		settings := settings || ARRAY['parallel_setup_cost', '0', 'parallel_tuple_cost', '0',
			'min_parallel_table_scan_size', '0', 'max_parallel_workers_per_gather', '2',
			'parallel_leader_participation', sd_pick(n, 'leader', 'on', 'off')];
	ELSE
		-- else none: the expensive quals would make some plans parallel
		-- on their own, and their rows' order then is not fixed
		settings := settings || ARRAY['max_parallel_workers_per_gather', '0'];
	END IF;
	-- now and then the default size: a small filter probed row by row
	settings := settings || ARRAY['bloomfilter.batched_scan_min_size',
		CASE WHEN sd_chance(n, 'row by row', 12) THEN '1MB' ELSE '0' END];
	-- now and then the expressions compiled (no inlining or optimizing:
	-- they cost far more than the query)
	IF sd_chance(n, 'jit', 4) THEN
		settings := settings || ARRAY['jit', 'on', 'jit_above_cost', '0',
			'jit_inline_above_cost', '-1', 'jit_optimize_above_cost', '-1'];
	END IF;
	IF shape IN ('nested loop', 'lateral filter', 'lateral key', 'subplan') THEN
		-- the scan is the inner side, rescanned for each outer row
		settings := settings || ARRAY['enable_hashjoin', 'off', 'enable_mergejoin', 'off',
			'enable_material', 'off', 'enable_memoize', sd_pick(n, 'memoize', 'on', 'off')];
	ELSIF shape IN ('hash join', 'two scans') THEN
		settings := settings || ARRAY['enable_nestloop', 'off', 'enable_mergejoin', 'off'];
	END IF;
	RETURN settings;
END
$$;

-- Case n.
CREATE FUNCTION sd_generate(n int) RETURNS sd_case
LANGUAGE plpgsql STABLE AS $$
DECLARE
	c sd_case;
	ftype text := sd_pick(n, 'type', 'bloom', 'bloom', 'qfilter');
	kind text := sd_pick(n, 'kind', 'int', 'int', 'int', 'int', 'text', 'date');
	wrong boolean := sd_chance(n, 'wrong kind', 4);
	fname text;
	shape text;
	source text;
	tbl text;
	filter record;
	key text;
	probe text;
	probe_shown text;
	quals record;			-- sd_where
	rows sd_rows;
	volatile boolean;
	failing int := 0;
	outer_tbl text := CASE ftype WHEN 'bloom' THEN 'sd_filters' ELSE 'sd_qfilters' END;
	outer_names text;
	parallel boolean;
	executed text[];
BEGIN
	c.n := n;
	c.mode := sd_pick(n, 'mode', 'rows', 'rows', 'rows', 'rows', 'rows', 'rows',
					  'cursor', 'cursor', 'prepared', 'prepared', 'dml', 'dml');
	-- the shape: which joins, and where the filter and the key come from
	shape := CASE c.mode
		WHEN 'dml' THEN 'single'
		WHEN 'cursor' THEN sd_pick(n, 'shape', 'single', 'single', 'single', 'nested loop',
								   'lateral filter', 'lateral key')
		WHEN 'prepared' THEN sd_pick(n, 'shape', 'single', 'single', 'single', 'nested loop',
									 'hash join')
		ELSE sd_pick(n, 'shape', 'single', 'single', 'single', 'single', 'single', 'nested loop',
					 'lateral filter', 'lateral key', 'subplan', 'hash join', 'two scans') END;
	tbl := sd_pick(n, 'table', 'sd_t', 'sd_t', 'sd_t', 'sd_p', 'sd_p', 'sd_v', 'sd_r');
	-- the filter
	fname := sd_pick(n, 'filter', VARIADIC sd_filter_names(ftype, kind, wrong));
	source := CASE
		WHEN c.mode = 'prepared' THEN 'param'
		WHEN shape IN ('lateral filter', 'subplan') THEN 'outer'
		ELSE sd_pick(n, 'source', 'literal', 'literal', 'literal', 'literal', 'subquery', 'subquery',
					 'subquery', 'subquery', 'changed', 'grown', 'null', 'failing') END;
	-- (a filter changed in the query is copied for each row by the plain
	-- plan: not a large one)
	IF source = 'changed' AND fname = 'big' THEN
		source := 'subquery';
	END IF;
	SELECT * INTO filter FROM sd_filter_expr(n, ftype, kind, fname, source);
	failing := failing + (source = 'failing')::int + wrong::int;
	-- the key and the probe
	key := sd_key(n, kind, shape = 'lateral key');
	probe := sd_probe(n, ftype, filter.expr, key);
	probe_shown := sd_probe(n, ftype, filter.shown, key);
	SELECT * INTO quals FROM sd_where(n, probe, probe_shown);
	failing := failing + quals.failing;

	-- the select list, and what is done with the rows
	SELECT * INTO rows FROM sd_rows_clauses(n, c.mode, shape);
	volatile := quals.volatile OR rows.volatile;
	failing := failing + rows.failing;

	-- Parallel workers, where the answer cannot depend on which process
	-- reads which rows: nothing volatile (random() would not run in a
	-- worker anyway), at most one thing that fails, no LIMIT without a
	-- total order, no row locks, no cursor, no change.  No nested loop:
	-- a Gather on its inner side starts its workers again for each outer
	-- row (test/sql/bloomscan.sql has one such rescan).
	parallel := c.mode IN ('rows', 'prepared') AND shape IN ('single', 'hash join', 'two scans')
		AND NOT volatile AND failing <= 1 AND (rows.limits = '' OR rows.order_by <> '')
		AND rows.locking = ''
		AND sd_chance(n, 'parallel', 30);
	c.settings := sd_settings(n, shape, tbl, parallel);

	-- the filters of the outer side: some of the kind's, the one drawn
	-- among them (and it, of the wrong kind); not the large one if
	-- changed, which the plain plan would copy for each row
	outer_names := (SELECT string_agg(DISTINCT quote_literal(name), ', ' ORDER BY quote_literal(name))
					FROM unnest(sd_filter_names(ftype, kind, false) || fname) name
					WHERE (sd_chance(n, 'outer ' || name, 50) OR name = fname)
					  AND NOT (name = 'big' AND filter.expr ~ '_add\('));

	-- the query, twice: to run, and to show
	c.sql := sd_query(n, c.mode, shape, tbl, quals.cond, rows, outer_tbl, outer_names);
	c.display := sd_query(n, c.mode, shape, tbl, quals.cond_shown, rows, outer_tbl, outer_names);
	c.after_sql := format('SELECT count(*) || '' rows, '' || sum(hashtext(t::text)) FROM %s t',
						  CASE tbl WHEN 'sd_v' THEN 'sd_t' ELSE tbl END);

	-- how it runs
	IF c.mode = 'prepared' THEN
		c.param_type := ftype;
		c.settings := c.settings || ARRAY['plan_cache_mode',
			sd_pick(n, 'plan cache', 'force_generic_plan', 'force_generic_plan', 'force_custom_plan')];
		executed := ARRAY[fname];
		-- later executions with other filters, of the wrong kind too
		FOR i IN 2 .. sd_number(n, 'executions', 1, 3) LOOP
			executed := executed || sd_pick(n, 'execution ' || i, VARIADIC sd_filter_names(ftype, kind,
				sd_chance(n, 'execution wrong ' || i, 15)));
		END LOOP;
		c.params := ARRAY(SELECT (sd_literal(ftype, name)).value
						  FROM unnest(executed) WITH ORDINALITY AS e(name, i) ORDER BY i);
	ELSIF c.mode = 'cursor' THEN
		-- A SCROLL cursor re-fetches rows by running its plan backward, or
		-- from a Materialize above a plan that cannot (as the batched
		-- scan): a volatile function then runs again, or not.  PostgreSQL
		-- tells to declare such a cursor NO SCROLL.  (Nor can it lock rows.)
		c.cursor_option := CASE
			WHEN volatile OR rows.locking <> '' THEN sd_pick(n, 'cursor', 'NO SCROLL', '')
			ELSE sd_pick(n, 'cursor', 'SCROLL', 'SCROLL', 'NO SCROLL', '') END;
		c.fetches := sd_fetches(n, c.cursor_option <> 'NO SCROLL');
	END IF;
	-- The plain plan's order is the table's where one table is scanned by
	-- one process and nothing reorders it (or the ORDER BY is total).
	c.ordered := NOT parallel AND shape = 'single' AND rows.wrap = 'none' OR c.mode = 'cursor';
	c.plan_bound := volatile OR failing > 0 OR rows.limits <> '' OR c.mode = 'cursor';
	c.summary := format('%s, %s, %s %s key %s from %s %s%s, on %s%s%s', c.mode, shape, ftype,
						CASE WHEN wrong THEN 'wrong-kind' ELSE kind END, key, source, fname,
						quals.told,
						tbl, CASE WHEN parallel THEN ', parallel' ELSE '' END,
						CASE WHEN c.mode = 'cursor' THEN format(', %s cursor: %s',
							coalesce(nullif(c.cursor_option, ''), 'default'), array_to_string(c.fetches, ', '))
							 WHEN c.mode = 'prepared' THEN ', executed with ' || array_to_string(executed, ', ')
							 ELSE '' END);
	RETURN c;
END
$$;

-- -------------------------------------------------------------------------
-- Running a case

-- The statement that returns a case's rows as one text[]: sorted, where
-- their order is not the plan's to keep, so that equal multisets compare
-- equal.  An UPDATE or DELETE returns its RETURNING rows.
CREATE FUNCTION sd_statement(c sd_case) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN c.mode = 'dml'
		THEN format('WITH changed AS (%s) SELECT array_agg(changed::text%s) FROM changed',
					c.sql, CASE WHEN c.ordered THEN '' ELSE ' ORDER BY changed::text' END)
		ELSE format('SELECT array_agg(q::text%s) FROM (%s) q',
					CASE WHEN c.ordered THEN '' ELSE ' ORDER BY q::text' END, c.sql) END
$$;

-- An error as a result.  Only its SQLSTATE is compared (sd_compare): the
-- message may name a row.
CREATE FUNCTION sd_error(state text, message text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'ERROR ' || state || ': ' || message $$;

-- The plan's nodes (EXPLAIN's first line and its "->" lines): which scan
-- ran, and the plan's shape around it.  A SCROLL cursor's plan is shown
-- as if declared NO SCROLL: the plan of either side is the same but for a
-- Materialize on top where its top node cannot run backward (as the
-- batched scan cannot).
CREATE FUNCTION sd_plan(c sd_case) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || CASE c.mode
		WHEN 'cursor' THEN format('DECLARE sd_cursor %s CURSOR FOR %s',
								  CASE WHEN c.cursor_option = '' THEN '' ELSE 'NO SCROLL' END, c.sql)
		WHEN 'prepared' THEN format('EXECUTE sd_prepared(%s)', c.params[1])
		ELSE sd_statement(c) END
	LOOP
		IF plan IS NULL OR line ~ '->' THEN
			plan := concat_ws(E'\n', plan, line);
		END IF;
	END LOOP;
	RETURN plan;
EXCEPTION WHEN OTHERS THEN
	-- planning may fail as running does (a constant folded): sd_compare
	-- compares the runs
	RETURN 'ERROR ' || SQLSTATE;
END
$$;

-- The shape of a plan with either scan: the batched scan written as the
-- sequential scan it stands in for.
CREATE FUNCTION sd_shape(plan text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT regexp_replace(plan, '(Parallel )?Custom Scan \(Bloom Filter Scan\)', '\1Seq Scan', 'g')
$$;

-- rows: the statement's rows.
CREATE FUNCTION sd_rows(c sd_case) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	result text[];
BEGIN
	EXECUTE sd_statement(c) INTO result;
	RETURN coalesce(result, '{}');
EXCEPTION WHEN OTHERS THEN
	RETURN ARRAY[sd_error(SQLSTATE, SQLERRM)];
END
$$;

-- prepared: each EXECUTE's rows after a marker, each EXECUTE's own error.
CREATE FUNCTION sd_executions(c sd_case) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	result text[] := '{}';
	found_rows text[];
BEGIN
	FOR i IN 1 .. cardinality(c.params) LOOP
		result := result || ('EXECUTE ' || i);
		BEGIN
			EXECUTE format('EXECUTE sd_prepared(%s)', c.params[i]) INTO found_rows;
			result := result || coalesce(found_rows, '{}');
		EXCEPTION WHEN OTHERS THEN
			result := result || sd_error(SQLSTATE, SQLERRM);
		END;
	END LOOP;
	RETURN result;
END
$$;

-- cursor: what each move found (or how far it moved), up to an error.
CREATE FUNCTION sd_cursor(c sd_case) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	cur refcursor;
	rec record;
	result text[] := '{}';
	word text;
	amount int;
	moved bigint;
	move text;
BEGIN
	CASE c.cursor_option
		WHEN 'SCROLL' THEN OPEN cur SCROLL FOR EXECUTE c.sql;
		WHEN 'NO SCROLL' THEN OPEN cur NO SCROLL FOR EXECUTE c.sql;
		ELSE OPEN cur FOR EXECUTE c.sql;
	END CASE;
	FOREACH move IN ARRAY c.fetches LOOP
		word := split_part(move, ' ', 1);
		amount := nullif(split_part(move, ' ', 2), '')::int;
		CASE word
			WHEN 'NEXT' THEN FETCH NEXT FROM cur INTO rec;
			WHEN 'PRIOR' THEN FETCH PRIOR FROM cur INTO rec;
			WHEN 'FIRST' THEN FETCH FIRST FROM cur INTO rec;
			WHEN 'LAST' THEN FETCH LAST FROM cur INTO rec;
			WHEN 'ABSOLUTE' THEN FETCH ABSOLUTE amount FROM cur INTO rec;
			WHEN 'RELATIVE' THEN FETCH RELATIVE amount FROM cur INTO rec;
			WHEN 'FORWARD' THEN MOVE FORWARD amount FROM cur;
			WHEN 'BACKWARD' THEN MOVE BACKWARD amount FROM cur;
		END CASE;
		IF word IN ('FORWARD', 'BACKWARD') THEN
			GET DIAGNOSTICS moved = ROW_COUNT;
			result := result || format('%s: moved %s', move, moved);
		ELSE
			result := result || format('%s: %s', move, CASE WHEN FOUND THEN rec::text ELSE 'none' END);
		END IF;
	END LOOP;
	CLOSE cur;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN result || sd_error(SQLSTATE, SQLERRM);
END
$$;

-- dml: the RETURNING rows, and the table's rows after the change.
CREATE FUNCTION sd_change(c sd_case) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	changed text[];
	left_over text;
BEGIN
	EXECUTE sd_statement(c) INTO changed;
	EXECUTE c.after_sql INTO left_over;
	RETURN coalesce(changed, '{}') || ('left ' || left_over);
EXCEPTION WHEN OTHERS THEN
	RETURN ARRAY[sd_error(SQLSTATE, SQLERRM)];
END
$$;

-- Runs case c with the batched scan on or off, and gives its results and
-- its plan.  Everything it does is rolled back: the settings (set local),
-- the changes; the random() seed and the count of volatile calls start
-- from the same values on either side.
CREATE FUNCTION sd_side(c sd_case, batched boolean, OUT result text[], OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
	prepared boolean := false;
BEGIN
	BEGIN
		PERFORM set_config('bloomfilter.batched_scan', CASE WHEN batched THEN 'on' ELSE 'off' END, true);
		FOR i IN 1 .. cardinality(c.settings) / 2 LOOP
			PERFORM set_config(c.settings[2 * i - 1], c.settings[2 * i], true);
		END LOOP;
		IF c.mode = 'prepared' THEN
			-- after the settings: a prepared plan keeps those it was made with
			EXECUTE format('PREPARE sd_prepared(%s) AS %s', c.param_type, sd_statement(c));
			prepared := true;
		END IF;
		plan := sd_plan(c);
		PERFORM setseed(0.25);
		PERFORM setval('sd_calls', 1, false);
		result := CASE c.mode
			WHEN 'rows' THEN sd_rows(c)
			WHEN 'prepared' THEN sd_executions(c)
			WHEN 'cursor' THEN sd_cursor(c)
			WHEN 'dml' THEN sd_change(c) END;
		result := result || (SELECT 'volatile calls: ' || CASE WHEN is_called THEN last_value ELSE 0 END
							 FROM sd_calls);
		RAISE EXCEPTION 'roll back' USING ERRCODE = 'SDR00';
	EXCEPTION WHEN SQLSTATE 'SDR00' THEN
		NULL;
	END;
	IF prepared THEN
		DEALLOCATE sd_prepared;
	END IF;
END
$$;

-- What differs between the batched scan's results and the plain plan's,
-- or NULL.  Errors compare by SQLSTATE; rows missing with the batched
-- scan are named first: they are the worst.
CREATE FUNCTION sd_compare(batched text[], plain text[]) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	on_rows text[] := ARRAY(SELECT regexp_replace(e, '^(ERROR [0-9A-Z]{5}): .*$', '\1')
							FROM unnest(batched) WITH ORDINALITY AS u(e, i) ORDER BY i);
	off_rows text[] := ARRAY(SELECT regexp_replace(e, '^(ERROR [0-9A-Z]{5}): .*$', '\1')
							 FROM unnest(plain) WITH ORDINALITY AS u(e, i) ORDER BY i);
	on_error text := (SELECT e FROM unnest(on_rows) e WHERE e ~ '^ERROR ' LIMIT 1);
	off_error text := (SELECT e FROM unnest(off_rows) e WHERE e ~ '^ERROR ' LIMIT 1);
	on_calls text := (SELECT e FROM unnest(on_rows) e WHERE e ~ '^volatile calls');
	off_calls text := (SELECT e FROM unnest(off_rows) e WHERE e ~ '^volatile calls');
	missing text[];
	extra text[];
BEGIN
	IF on_rows = off_rows THEN
		RETURN NULL;
	END IF;
	missing := ARRAY(SELECT unnest(off_rows) EXCEPT ALL SELECT unnest(on_rows));
	extra := ARRAY(SELECT unnest(on_rows) EXCEPT ALL SELECT unnest(off_rows));
	missing := ARRAY(SELECT e FROM unnest(missing) e WHERE e !~ '^(ERROR |volatile calls)');
	extra := ARRAY(SELECT e FROM unnest(extra) e WHERE e !~ '^(ERROR |volatile calls)');
	RETURN concat_ws('; ',
		CASE WHEN on_error IS DISTINCT FROM off_error
			 THEN format('another error: %s with the batched scan, %s without',
						 coalesce(on_error, 'none'), coalesce(off_error, 'none')) END,
		CASE WHEN cardinality(missing) > 0
			 THEN format('%s rows MISSING with the batched scan, first: %s',
						 cardinality(missing), array_to_string(missing[1:3], ' ')) END,
		CASE WHEN cardinality(extra) > 0
			 THEN format('%s rows more with the batched scan, first: %s',
						 cardinality(extra), array_to_string(extra[1:3], ' ')) END,
		CASE WHEN on_calls IS DISTINCT FROM off_calls
			 THEN format('%s with the batched scan, %s without', on_calls, off_calls) END,
		CASE WHEN cardinality(missing) = 0 AND cardinality(extra) = 0
				  AND on_error IS NOT DISTINCT FROM off_error AND on_calls IS NOT DISTINCT FROM off_calls
			 THEN 'the same rows in another order' END);
END
$$;

CREATE TABLE sd_results (
	n int PRIMARY KEY,
	mode text,
	summary text,
	settings text[],
	display text,
	sql text,
	batched boolean,		-- the batched scan was in the plan
	gathered boolean,		-- under a Gather
	errored text,			-- the SQLSTATE both sides failed with
	reshaped boolean,		-- the plans differ around the scan
	verdict text,			-- what differs, or NULL
	excused boolean,		-- the difference follows from the plans' shapes
	on_result text[],		-- kept where they differ
	off_result text[],
	ms numeric				-- how long it took, both sides
);

-- Case n: made, run with the scan on and off (which first is drawn too:
-- nothing one side leaves behind may favour the other), and recorded.
-- After the time limit, nothing.
CREATE PROCEDURE sd_run(n int)
LANGUAGE plpgsql AS $$
DECLARE
	c sd_case;
	on_side record;
	off_side record;
	verdict text;
	reshaped boolean;
	started timestamptz := clock_timestamp();
BEGIN
	IF clock_timestamp() > current_setting('scan_diff.deadline')::timestamptz THEN
		RETURN;
	END IF;
	c := sd_generate(n);
	IF sd_chance(n, 'batched first', 50) THEN
		SELECT * INTO on_side FROM sd_side(c, true);
		SELECT * INTO off_side FROM sd_side(c, false);
	ELSE
		SELECT * INTO off_side FROM sd_side(c, false);
		SELECT * INTO on_side FROM sd_side(c, true);
	END IF;
	verdict := sd_compare(on_side.result, off_side.result);
	IF off_side.plan ~ 'Bloom Filter Scan' THEN
		verdict := concat_ws('; ', 'a Bloom Filter Scan with bloomfilter.batched_scan off', verdict);
	END IF;
	reshaped := sd_shape(on_side.plan) IS DISTINCT FROM sd_shape(off_side.plan);
	INSERT INTO sd_results
	VALUES (n, c.mode, c.summary, c.settings, c.display, c.sql,
			on_side.plan ~ 'Bloom Filter Scan', on_side.plan ~ 'Gather',
			CASE WHEN verdict IS NULL THEN (SELECT substr(e, 7, 5) FROM unnest(on_side.result) e
											WHERE e ~ '^ERROR ' LIMIT 1) END,
			reshaped, verdict,
			-- the batched scan costs a little less than the sequential scan
			-- it replaces; should that tip another choice of the plan, a
			-- query whose answer depends on the plan may answer otherwise
			-- (a missing row is never excused: worth a look in any case)
			verdict IS NOT NULL AND reshaped AND c.plan_bound
			AND verdict !~ 'MISSING|batched_scan off',
			CASE WHEN verdict IS NOT NULL THEN on_side.result END,
			CASE WHEN verdict IS NOT NULL THEN off_side.result END,
			extract(epoch FROM clock_timestamp() - started) * 1000);
END
$$;

-- -------------------------------------------------------------------------
-- The run

-- The comparison itself must see each kind of difference.
SELECT CASE WHEN sd_compare('{(1),(2)}', '{(1),(2)}') IS NULL
			 AND sd_compare('{"ERROR 22012: division by zero"}', '{"ERROR 22012: other words"}') IS NULL
			 AND sd_compare('{(1)}', '{(1),(2)}') ~ '1 rows MISSING'
			 AND sd_compare('{(1),(2),(2)}', '{(1),(2)}') ~ '1 rows more'
			 AND sd_compare('{(2),(1)}', '{(1),(2)}') ~ 'another order'
			 AND sd_compare('{"ERROR 22012: x"}', '{"ERROR 21000: x"}') ~ 'another error'
			 AND sd_compare('{(1)}', '{(1),"ERROR 22012: x"}') ~ 'another error: none'
			 AND sd_compare('{"volatile calls: 3"}', '{"volatile calls: 2"}') ~ 'volatile calls: 3 with'
			THEN 'ok - ' ELSE 'not ok - ' END
	   || 'the comparison tells missing and extra rows, order, errors and volatile calls apart';

-- One transaction per case.  A case that hangs stops the run, and psql
-- shows which (ECHO errors).  Every 100 cases a VACUUM takes back the
-- space of the rolled-back changes (rows stay where they are), so the
-- tables do not grow with the run.
SELECT clock_timestamp() AS started \gset
SET statement_timeout = '120s';
\set ECHO errors
SELECT format('CALL sd_run(%s)', n), CASE WHEN n % 100 = 0 THEN 'VACUUM sd_t, sd_p, sd_r' END
FROM generate_series(:first, :first + :queries - 1) n \gexec
\set ECHO none
RESET statement_timeout;
SELECT round(extract(epoch FROM clock_timestamp() - :'started'::timestamptz)) AS elapsed \gset

-- -------------------------------------------------------------------------
-- The report

SELECT format('# seed %s, queries %s to %s: %s ran in %s s%s',
			  :'seed', :first, :first + :queries - 1, count(*), :elapsed,
			  CASE WHEN count(*) < :queries
				   THEN ' (stopped at the time limit, seconds=' || :seconds || ')' ELSE '' END)
FROM sd_results;

-- each query that differed, made again with seed=S first=N queries=1
SELECT format(E'# query %s of seed %s DIFFERS: %s\n#   %s\n#   settings: %s\n#   %s',
			  n, :'seed', verdict, summary, array_to_string(settings, ' '),
			  CASE WHEN current_setting('scan_diff.show_whole') = '1' THEN sql ELSE display END)
	   || CASE WHEN current_setting('scan_diff.show_whole') = '1'
			   THEN format(E'\n#   batched: %s\n#   plain:   %s', on_result, off_result) ELSE '' END
FROM sd_results WHERE verdict IS NOT NULL AND NOT excused ORDER BY n LIMIT 20;
SELECT format('# ... and %s more queries differ', count(*) - 20)
FROM sd_results WHERE verdict IS NOT NULL AND NOT excused HAVING count(*) > 20;

-- one check per way of running a query
SELECT CASE WHEN differ = 0 THEN 'ok - ' ELSE 'not ok - ' END
	   || format('%s: %s random queries%s the same with the batched scan on and off'
				 ' (%s batched, %s parallel, %s failing alike)',
				 CASE mode WHEN 'rows' THEN 'queries' WHEN 'cursor' THEN 'cursors'
						   WHEN 'prepared' THEN 'prepared statements'
						   ELSE 'UPDATE/DELETE ... RETURNING' END,
				 total, CASE WHEN differ > 0 THEN format(', %s not', differ) ELSE ',' END,
				 batched, gathered, errored)
FROM (SELECT mode, count(*) AS total,
			 count(*) FILTER (WHERE verdict IS NOT NULL AND NOT excused) AS differ,
			 count(*) FILTER (WHERE batched) AS batched, count(*) FILTER (WHERE gathered) AS gathered,
			 count(errored) AS errored
	  FROM sd_results GROUP BY mode) m
ORDER BY mode;

-- The run tested something: the batched scan ran in many plans, some in
-- parallel, and some queries failed (alike).  Too few queries to tell (a
-- single case made again) skip these.
SELECT CASE WHEN batched * 3 >= total AND parallel > 0 AND errored > 0 THEN 'ok - ' ELSE 'not ok - ' END
	   || format('coverage: the batched scan in %s of %s plans, %s of them parallel;'
				 ' %s queries failed alike', batched, total, parallel, errored)
FROM (SELECT count(*) AS total, count(*) FILTER (WHERE batched) AS batched,
			 count(*) FILTER (WHERE batched AND gathered) AS parallel, count(errored) AS errored
	  FROM sd_results) r
WHERE total >= 200;
SELECT '# failing alike, by SQLSTATE: ' || string_agg(format('%s %s', errored, n), ', ' ORDER BY errored)
FROM (SELECT errored, count(*) AS n FROM sd_results WHERE errored IS NOT NULL GROUP BY errored) e;
SELECT format('# %s queries were planned otherwise around the batched scan;'
			  ' %s of them answered otherwise, as their plans may',
			  count(*) FILTER (WHERE reshaped), count(*) FILTER (WHERE excused))
FROM sd_results;
