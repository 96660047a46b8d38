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
