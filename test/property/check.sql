-- check.sql: the no-false-negative verdicts, one "ok"/"not ok" line each.
--
-- Run twice: in the database that built the filters (psql variable
-- restored=0: one line per (type, path) and per cross-type probe), and in
-- the database pg_restore made from its dump (restored=1: one line per type,
-- covering every filter of that type against the restored values).

-- How many non-NULL values a filter must find, and which it does not.
-- probe is the expression (over v) that is looked up; a row counts only
-- where guard holds and SQL says the probe equals v.  CASE keeps a cast
-- from running on a row its guard excludes.
CREATE FUNCTION prop_missing(p_tbl text, f bloom, probe text, guard text,
							 OUT probed bigint, OUT missing bigint,
							 OUT all_found boolean, OUT examples text)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format(
		'SELECT count(*), count(*) FILTER (WHERE NOT found), '
		'bloom_contains_all($1, array_agg(w)), '
		'array_to_string((array_agg(translate(left(w::text, 40), E''\n\r\t'', ''   '') ORDER BY rn) '
		'                 FILTER (WHERE NOT found))[1:5], '' | '') '
		'FROM (SELECT rn, w, coalesce($1 @> w AND w <@ $1 AND bloom_contains($1, w), false) AS found '
		'      FROM (SELECT rn, v, CASE WHEN %3$s THEN %1$s END AS w '
		'            FROM %2$I WHERE v IS NOT NULL) AS cast_rows '
		'      WHERE w = v) AS probes',
		probe, p_tbl, guard)
	INTO probed, missing, all_found, examples USING f;
END
$$;

-- NULL if the filter of this (type, path) is sound, else what is wrong.
CREATE FUNCTION prop_verdict(b prop_built, p_tbl text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	source bloom;
	inserted bigint;
	expected bigint;
BEGIN
	IF b.problem IS NOT NULL THEN
		RETURN b.problem;
	END IF;
	IF b.f IS NULL THEN
		RETURN 'no filter';
	END IF;
	IF b.same_as IS NOT NULL THEN
		SELECT s.f INTO source FROM prop_built s WHERE s.typ = b.typ AND s.path = b.same_as;
		IF source IS DISTINCT FROM b.f THEN
			RETURN 'differs from the filter of ' || b.same_as;
		END IF;
	END IF;
	IF b.expect_inserted IS NOT NULL THEN
		-- distinct as the filter sees it: strings without trailing blanks
		EXECUTE format('SELECT count(%s %s) FROM %I',
					   CASE b.expect_inserted WHEN 'distinct' THEN 'DISTINCT' ELSE '' END,
					   CASE WHEN b.typ IN ('text', 'varchar') THEN 'rtrim(v::text, '' '')' ELSE 'v' END,
					   p_tbl)
		INTO expected;
		SELECT i.inserted INTO inserted FROM bloom_info(b.f) AS i;
		IF inserted <> expected THEN
			RETURN format('bloom_info says %s inserted, expected %s (%s non-NULL values)',
						  inserted, expected, b.expect_inserted);
		END IF;
	END IF;
	SELECT * INTO r FROM prop_missing(p_tbl, b.f, 'v', 'true');
	IF r.missing > 0 OR r.probed = 0 OR r.all_found IS NOT TRUE THEN
		RETURN format('%s of %s values reported absent (bloom_contains_all: %s), first: %s',
					  r.missing, r.probed, r.all_found, r.examples);
	END IF;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	RETURN format('checking failed: %s %s', SQLSTATE, SQLERRM);
END
$$;

\if :restored

SELECT CASE WHEN EXISTS (SELECT FROM pg_extension WHERE extname = 'bloomfilter')
			THEN 'ok - ' ELSE 'not ok - ' END
	   || 'pg_restore created the extension';

SELECT CASE WHEN bad IS NULL THEN 'ok - ' ELSE 'not ok - ' END
	   || format('no false negatives, %s, pg_dump -Fc and pg_restore: %s filters',
				 typ, filters)
	   || coalesce(E'\n' || bad, '')
FROM (SELECT t.typ, count(b.path) AS filters,
			 string_agg(format('#   %s: %s', v.path, v.verdict), E'\n' ORDER BY v.path)
				 FILTER (WHERE v.verdict IS NOT NULL) AS bad
	  FROM prop_type t
		  LEFT JOIN prop_built b ON b.typ = t.typ
		  LEFT JOIN LATERAL (SELECT b.path, prop_verdict(b, t.tbl) AS verdict) AS v ON true
	  GROUP BY t.typ) AS per_type
ORDER BY typ;

\else

SELECT CASE WHEN v.verdict IS NULL THEN 'ok - ' ELSE 'not ok - ' END
	   || format('no false negatives, %s, %s', b.typ, b.path)
	   || coalesce(E'\n#   ' || v.verdict, '')
FROM prop_built b JOIN prop_type t USING (typ),
	LATERAL (SELECT prop_verdict(b, t.tbl) AS verdict) AS v
ORDER BY b.typ, b.path;

-- Probes by equal values of another type of the same kind.
SELECT CASE WHEN r.probed > 0 AND r.missing = 0 AND r.all_found THEN 'ok - ' ELSE 'not ok - ' END
	   || format('no false negatives, %s filter probed as %s: %s of %s equal values found',
				 c.typ, c.probe_as, r.probed - r.missing, r.probed)
	   || CASE WHEN r.missing > 0 THEN E'\n#   absent: ' || r.examples ELSE '' END
	   || CASE WHEN r.all_found IS NOT TRUE THEN E'\n#   bloom_contains_all is not true' ELSE '' END
FROM prop_cross c JOIN prop_type t USING (typ)
	JOIN prop_built b ON b.typ = c.typ AND b.path = 'bloom_agg(v)',
	LATERAL prop_missing(t.tbl, b.f, c.probe, c.guard) AS r
ORDER BY c.typ, c.probe_as;

-- The harness itself must notice absent values: a filter of half the rows
-- has to miss most of the other half.
SELECT CASE WHEN r.missing > 1000 THEN 'ok - ' ELSE 'not ok - ' END
	   || format('harness: a filter of the even rows misses %s of %s int4 values',
				 r.missing, r.probed)
FROM (SELECT bloom_agg(v) AS f FROM prop_v_int4 WHERE rn % 2 = 0) AS half,
	LATERAL prop_missing('prop_v_int4', half.f, 'v', 'true') AS r;

\endif
