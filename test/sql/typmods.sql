-- Type modifiers: bloom(capacity, fpr[, growth]) and qfilter(capacity, fpr)
-- columns hold only filters of those parameters (22023 naming both, with
-- a hint), so that any two of their values can be united.  A column
-- without a modifier takes every filter.
\set VERBOSITY default
CREATE TABLE tm (id int, f bloom(1000000, 0.01), g bloom(1000, 0.025, 2),
                 q qfilter(1500, 0.001), any_filter bloom);
\d tm
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'tm'::regclass AND attnum > 0 ORDER BY attnum;

-- values of the column's parameters, however they were built
INSERT INTO tm (id, f, g, q) VALUES (1, bloom_empty(1000000, 0.01), bloom_empty(1000, 0.025, 2),
                                     qfilter_empty(1500, 0.001));
INSERT INTO tm (id, f, g, q)
SELECT 2, bloom_agg(i, 1000000, 0.01), bloom_agg(i, 1000, 0.025, 2), qfilter_agg(i, 1500, 0.001)
FROM generate_series(1, 5000) i;
INSERT INTO tm (id, f) VALUES (3, 1e6::bigint);   -- not a filter at all
SELECT id, f @> 77 AS f_has_77, g @> 77 AS g_has_77, q @> 77 AS q_has_77 FROM tm ORDER BY id;
-- every value of the column unites with every other, where they hold keys
-- of one kind: the type fixes the parameters, not the kind of key
SELECT (bloom_info(bloom_union_agg(f))).inserted FROM tm;
CREATE TEMP TABLE tm_kinds (f bloom(1000, 0.01));
INSERT INTO tm_kinds VALUES (bloom_add(bloom_empty(1000, 0.01), 'a'::text)),
	(bloom_add(bloom_empty(1000, 0.01), 1::bigint));
SELECT count(*) AS both_fit FROM tm_kinds;
SELECT bloom_union_agg(f) FROM tm_kinds;
DROP TABLE tm_kinds;

-- other parameters are refused, whatever the path: assignment, UPDATE,
-- a literal, COPY, an explicit cast
INSERT INTO tm (id, f) VALUES (4, bloom_empty(1000000, 0.02));
INSERT INTO tm (id, f) VALUES (4, bloom_empty(100000, 0.01));
INSERT INTO tm (id, g) VALUES (4, bloom_empty(1000, 0.025));     -- no growth
INSERT INTO tm (id, g) VALUES (4, bloom_empty(1000, 0.025, 3));
INSERT INTO tm (id, q) VALUES (4, qfilter_empty(1500, 0.01));
UPDATE tm SET f = bloom_empty(10) WHERE id = 1;
INSERT INTO tm (id, f) VALUES (4, (SELECT bloom_empty(10)::text));
INSERT INTO tm (id, f) SELECT 4, (bloom_empty(10)::text)::bloom;
INSERT INTO tm (id, any_filter) VALUES (4, bloom_empty(10));   -- no modifier: anything
SELECT bloom_agg(i, 1000000, 0.01)::bloom(1000000, 0.01) = bloom_agg(i, 1000000, 0.01) AS cast_keeps_value
FROM generate_series(1, 100) i;
-- a self-sized filter's capacity is its distinct count: only that matches
SELECT bloom_agg(i)::bloom(1000000, 0.01) FROM generate_series(1, 100) i;
SELECT (bloom_info(bloom_agg(i)::bloom(100, 0.01))).capacity FROM generate_series(1, 100) i;
-- a literal and text COPY go through the input function, binary COPY
-- through the receive function: each checks the column's modifier
SELECT bloom_empty(10)::text AS small_literal \gset
INSERT INTO tm (id, f) VALUES (4, :'small_literal');
CREATE TABLE tm_small (f bloom(10, 0.01));
INSERT INTO tm_small VALUES (:'small_literal');
-- in the cluster's own directory: a file under /tmp would outlive it, owned by
-- the server's user, and refuse the next build's server as another user
SELECT current_setting('data_directory') || '/bloomfilter_typmods.txt' AS typmods_txt \gset
COPY (SELECT f FROM tm WHERE id = 1) TO :'typmods_txt';
COPY tm_small FROM :'typmods_txt';
SELECT current_setting('data_directory') || '/bloomfilter_typmods.bin' AS typmods_bin \gset
COPY (SELECT f FROM tm WHERE id = 1) TO :'typmods_bin' (FORMAT binary);
COPY tm_small FROM :'typmods_bin' (FORMAT binary);
COPY (SELECT f FROM tm_small) TO :'typmods_bin' (FORMAT binary);
COPY tm_small FROM :'typmods_bin' (FORMAT binary);
SELECT count(*) AS small_filters FROM tm_small;

-- modifiers that cannot be kept, or that bloom_empty would refuse
SELECT NULL::bloom(1234567, 0.01);
SELECT NULL::bloom(1000, 0.0123);
SELECT NULL::bloom(0, 0.01);
SELECT NULL::bloom(1000, 0.7);
SELECT NULL::bloom(1000, 0.01, 1);
SELECT NULL::bloom(1000, 0.01, 17);
SELECT NULL::bloom(1000);
SELECT NULL::qfilter(1000, 0.01, 2);
SELECT NULL::bloom(1000, 'abc');
-- forms of the same parameters
SELECT NULL::bloom(1e6, 1e-2), NULL::bloom('1000000', '0.010'), NULL::qfilter(8191, 0.031);
SELECT pg_typeof(NULL::bloom(1e6, 1e-2));
SELECT format_type('bloom'::regtype, typmod)
FROM (SELECT atttypmod AS typmod FROM pg_attribute WHERE attrelid = 'tm'::regclass AND attname = 'g') s;

-- a table made from the column keeps its modifier
CREATE TABLE tm_copy AS SELECT f FROM tm;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'tm_copy'::regclass AND attname = 'f';

DROP TABLE tm, tm_small, tm_copy;
