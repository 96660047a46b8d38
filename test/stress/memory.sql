-- memory.sql: filters and a PL/pgSQL loop for the memory part of the stress
-- tests.

CREATE TABLE mem_filters (
	id int PRIMARY KEY,
	f bloom NOT NULL
);

-- 1: about 5 MB, stored out of line, holding 1..1,000,000; probing it row by
-- row would copy 5 MB per row without the per-query detoast cache.
INSERT INTO mem_filters
SELECT 1, bloom_agg(g, 4000000, 0.01) FROM generate_series(1, 1000000) g;

-- 2: about 1.3 kB, stored inline; every bloom_add copies it.
INSERT INTO mem_filters VALUES (2, bloom_empty(1000, 0.01));

-- Before PostgreSQL 18 every assignment copies the filter; the old copy must
-- be freed, so memory stays flat however long the loop runs.  The filter
-- stays small on purpose, so it overfills: its warning is not a result.
CREATE FUNCTION stress_plpgsql_adds(n int) RETURNS bigint
LANGUAGE plpgsql SET client_min_messages = error AS $$
DECLARE
	f bloom := bloom_empty(1000, 0.01);
BEGIN
	FOR i IN 1..n LOOP
		f := bloom_add(f, i);
	END LOOP;
	RETURN (bloom_info(f)).inserted;
END
$$;
