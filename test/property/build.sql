-- build.sql: builds a filter of every value table by every serial path that
-- can carry one, into prop_built, for check.sql to verify.
--
-- A path that fails records its error instead of stopping the run, so one
-- broken path is one failed check.  same_as names the path whose filter a
-- derived one must equal; expect_inserted the inserted count it must show
-- (self-sizing aggregates count distinct values, the others every non-NULL
-- value); problem what went wrong on the way (set by the COPY round trips
-- and parallel.sql).

SET max_parallel_workers_per_gather = 0;

CREATE TABLE prop_built (
	typ text,
	path text,
	f bloom,
	same_as text,
	expect_inserted text,
	problem text,
	PRIMARY KEY (typ, path)
);

-- A fold of bloom_add over the rows, one call per value.
SELECT format('CREATE AGGREGATE prop_fold(anycompatible) '
			  '(SFUNC = bloom_add, STYPE = bloom, INITCOND = %L)',
			  bloom_empty(5000, 0.01)::text)
\gexec

-- Runs query (one row, one filter) and records the filter or the error.
CREATE FUNCTION prop_build(p_typ text, p_path text, query text,
						   p_same_as text, p_expect_inserted text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	f bloom;
BEGIN
	BEGIN
		EXECUTE query INTO STRICT f;
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO prop_built
		VALUES (p_typ, p_path, NULL, p_same_as, p_expect_inserted,
				format('%s: %s %s', query, SQLSTATE, SQLERRM));
		RETURN;
	END;
	INSERT INTO prop_built
	VALUES (p_typ, p_path, f, p_same_as, p_expect_inserted,
			CASE WHEN f IS NULL THEN query || ' returned NULL' END);
END
$$;

-- %1$I is the value table, %2$L the type name.
CREATE TABLE prop_path (path text PRIMARY KEY, query text, same_as text, expect_inserted text);
INSERT INTO prop_path VALUES
	('bloom_agg(v)', 'SELECT bloom_agg(v) FROM %1$I', NULL, 'distinct'),
	('bloom_agg(v, fpr)', 'SELECT bloom_agg(v, 0.001) FROM %1$I', NULL, 'distinct'),
	('bloom_agg(v, capacity, fpr)', 'SELECT bloom_agg(v, 5000, 0.01) FROM %1$I', NULL, 'all'),
	('fold of bloom_add', 'SELECT prop_fold(v ORDER BY rn) FROM %1$I', NULL, 'all'),
	('bloom_add_all', 'SELECT bloom_add_all(bloom_empty(5000, 0.01), array_agg(v ORDER BY rn)) FROM %1$I',
	 NULL, 'all'),
	('bloom_union of halves',
	 'SELECT bloom_union(bloom_agg(v, 5000, 0.01) FILTER (WHERE rn %% 2 = 0), '
	 'bloom_agg(v, 5000, 0.01) FILTER (WHERE rn %% 2 = 1)) FROM %1$I', NULL, 'all'),
	('bloom_union_agg of parts',
	 'SELECT bloom_union_agg(part) FROM (SELECT bloom_agg(v, 5000, 0.01) AS part '
	 'FROM %1$I GROUP BY rn %% 7) AS parts', NULL, 'all'),
	('text round trip',
	 'SELECT f::text::bloom FROM prop_built WHERE typ = %2$L AND path = ''bloom_agg(v, capacity, fpr)''',
	 'bloom_agg(v, capacity, fpr)', NULL),
	('bytea cast round trip',
	 'SELECT f::bytea::bloom FROM prop_built WHERE typ = %2$L AND path = ''bloom_agg(v)''',
	 'bloom_agg(v)', NULL);

SELECT prop_build(t.typ, p.path, format(p.query, t.tbl, t.typ), p.same_as, p.expect_inserted)
FROM prop_type t, prop_path p
ORDER BY t.typ, p.path LIKE '%round trip', p.path;

-- COPY round trips of every filter built so far, binary and text, through
-- server-side files.  Per type, the copy of bloom_agg(v, capacity, fpr) is
-- probed and any filter that came back different is reported.
CREATE TABLE prop_copied (typ text, path text, f bloom);

CREATE FUNCTION prop_copy_round_trip(label text, file text, options text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	TRUNCATE prop_copied;
	EXECUTE format('COPY (SELECT typ, path, f FROM prop_built WHERE f IS NOT NULL) TO %L %s',
				   file, options);
	EXECUTE format('COPY prop_copied FROM %L %s', file, options);
	INSERT INTO prop_built
	SELECT c.typ, label, c.f, c.path, NULL,
		   (SELECT 'came back different: ' || string_agg(b.path, ', ' ORDER BY b.path)
			FROM prop_built b LEFT JOIN prop_copied d ON (d.typ, d.path) = (b.typ, b.path)
			WHERE b.typ = c.typ AND b.f IS NOT NULL AND d.f IS DISTINCT FROM b.f)
	FROM prop_copied c
	WHERE c.path = 'bloom_agg(v, capacity, fpr)';
	-- a type whose source filter failed to build still gets its line
	INSERT INTO prop_built
	SELECT t.typ, label, NULL, NULL, NULL, 'no filter to copy'
	FROM prop_type t
	WHERE NOT EXISTS (SELECT FROM prop_built b WHERE b.typ = t.typ AND b.path = label);
EXCEPTION WHEN OTHERS THEN
	INSERT INTO prop_built
	SELECT t.typ, label, NULL, NULL, NULL, format('COPY failed: %s %s', SQLSTATE, SQLERRM)
	FROM prop_type t;
END
$$;

SELECT prop_copy_round_trip('COPY binary out and in', :'dir' || '/filters.bin', 'WITH (FORMAT binary)');
SELECT prop_copy_round_trip('COPY text out and in', :'dir' || '/filters.txt', '');
