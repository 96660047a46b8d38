-- The multi-second cases of the aggregates, apart from aggregates.sql so
-- that the package build and autopkgtest (the Makefile's REGRESS) skip them:
-- only `make installcheck REGRESS_LARGE=large` runs them, as the full
-- scripts/test.sh does.  They follow security.sql, which drops the
-- extension, and may also run alone: the extension is created here.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
RESET client_min_messages;

-- sized for distinct values: duplicates do not inflate the filter
SELECT info.capacity, info.inserted, info.bits::float8 / 100000 <= 10.3 AS bits_per_distinct_ok
FROM (SELECT bloom_agg(i % 100000) AS f FROM generate_series(1, 3000000) i) s, bloom_info(s.f) info;
SELECT info.capacity, info.bits::float8 / 3000000 <= 10.3 AS bits_per_distinct_ok,
       info.bits::float8 / 3000000 <= 10.0 AS bits_per_distinct_under_10
FROM (SELECT bloom_agg(i) AS f FROM generate_series(1, 3000000) i) s, bloom_info(s.f) info;

-- the fixed form over many small groups: each group holds hashes, not a
-- 120 kB filter, until its final function builds one (20000 of them here)
SELECT count(*) AS groups,
       bool_and(bloom_contains_all(f, vals)) AS every_group_has_its_values,
       bool_and((bloom_info(f)).capacity = 100000) AS fixed_capacity
FROM (SELECT g, bloom_agg(v, 100000, 0.01) AS f, array_agg(v) AS vals
      FROM (SELECT i / 5 AS g, i AS v FROM generate_series(0, 99999) i) s GROUP BY g) t;

-- a union of two large qfilters answers a cancel at once: it merges in
-- slices, checking for interrupts between them.  Both sides hold 20M keys,
-- stored uncompressed, and the function reads them into variables first,
-- so that the statement's timeout of 500 ms falls inside the union, which
-- takes longer whole.
CREATE TABLE large_qf (a qfilter, b qfilter);
ALTER TABLE large_qf ALTER COLUMN a SET STORAGE EXTERNAL, ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO large_qf
SELECT (SELECT qfilter_agg(g, 20000000, 0.01) FROM generate_series(1, 20000000) g),
       (SELECT qfilter_agg(g, 20000000, 0.01) FROM generate_series(20000001, 40000000) g);
CREATE FUNCTION large_union(OUT loaded_ms float8, OUT ended_ms float8, OUT cancelled boolean)
LANGUAGE plpgsql AS $$
DECLARE
	started timestamptz := clock_timestamp();
	qa qfilter;
	qb qfilter;
BEGIN
	SELECT a, b INTO qa, qb FROM large_qf;
	loaded_ms := extract(epoch FROM clock_timestamp() - started) * 1000;
	cancelled := false;
	BEGIN
		PERFORM qfilter_info(qa | qb);
	EXCEPTION WHEN query_canceled THEN
		cancelled := true;
	END;
	ended_ms := extract(epoch FROM clock_timestamp() - started) * 1000;
END
$$;
SELECT ended_ms - loaded_ms > 500 + 300 AS union_outlasts_timeout_and_margin, cancelled
FROM large_union();
-- the timeout is armed for the statement that calls the function
SET statement_timeout = '500ms';
SELECT loaded_ms < 500 AS timeout_fell_in_the_union, cancelled,
       ended_ms < 500 + 300 AS ended_within_300ms_of_the_timeout
FROM large_union();
RESET statement_timeout;
DROP TABLE large_qf;
DROP FUNCTION large_union();

-- the largest constructors answer a cancel within a second: a new filter's
-- memory is cleared slice by slice, between cancels (each first touch of
-- its pages is a page fault, seconds for 750 MB)
CREATE FUNCTION large_cancel_ms(construct text, OUT cancelled boolean, OUT ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	started timestamptz := clock_timestamp();
BEGIN
	cancelled := false;
	BEGIN
		EXECUTE construct;
	EXCEPTION WHEN query_canceled THEN
		cancelled := true;
	END;
	ms := extract(epoch FROM clock_timestamp() - started) * 1000;
END
$$;
SET statement_timeout = '100ms';
SELECT cancelled, ms < 1000 AS within_1s
FROM large_cancel_ms('SELECT bloom_empty(600000000, 0.01) IS NULL');
SELECT cancelled, ms < 1000 AS within_1s
FROM large_cancel_ms('SELECT bloom_empty(300000000, 0.01, growth => 2) IS NULL');
SELECT cancelled, ms < 1000 AS within_1s
FROM large_cancel_ms('SELECT qfilter_empty(300000000, 0.01) IS NULL');
RESET statement_timeout;
DROP FUNCTION large_cancel_ms(text, OUT boolean, OUT float8);
