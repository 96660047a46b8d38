-- values.sql: what a 1.0 database holds before it is updated: stored
-- filters of every form, qfilters, bloomfilter indexes (plain, growing,
-- over an expression, partitioned), and views that depend on the
-- extension's functions, operators and aggregates, so that an upgrade
-- script cannot drop and re-create them (test/upgrade/run.sh).
CREATE TABLE up_filters (id int PRIMARY KEY, f bloom NOT NULL);
INSERT INTO up_filters
SELECT 1, bloom_agg(g) FROM generate_series(1, 10000) g
UNION ALL SELECT 2, bloom_agg(g, 20000, 0.001) FROM generate_series(1, 10000) g
UNION ALL SELECT 3, bloom_agg(g, 1000, 0.01, 2) FROM generate_series(1, 10000) g
UNION ALL SELECT 4, bloom_agg(md5(g::text)) FROM generate_series(1, 10000) g
UNION ALL SELECT 5, bloom_add_all(bloom_empty(100), ARRAY[1.5, 2.5]::numeric[]);

CREATE TABLE up_qfilters (id int PRIMARY KEY, f qfilter NOT NULL);
INSERT INTO up_qfilters
SELECT 1, qfilter_agg(g % 4000) FROM generate_series(1, 10000) g
UNION ALL SELECT 2, qfilter_remove(qfilter_agg(g, 20000, 0.01), 7) FROM generate_series(1, 10000) g;

CREATE TABLE up_keys (k int, t text);
INSERT INTO up_keys SELECT g, 'key ' || g FROM generate_series(1, 20000) g;
CREATE INDEX up_keys_guard ON up_keys USING bloomfilter (k);
CREATE INDEX up_keys_text_guard ON up_keys USING bloomfilter (lower(t)) WITH (capacity = 2000, growth = 2);

CREATE TABLE up_parts (k int) PARTITION BY RANGE (k);
CREATE TABLE up_parts_1 PARTITION OF up_parts FOR VALUES FROM (0) TO (10000);
CREATE TABLE up_parts_2 PARTITION OF up_parts FOR VALUES FROM (10000) TO (30000);
INSERT INTO up_parts SELECT generate_series(1, 20000);
CREATE INDEX up_parts_guard ON up_parts USING bloomfilter (k);

CREATE VIEW up_probe_view AS
SELECT id, f @> 77 AS has_77, bloom_contains(f, 20001) AS has_20001, (bloom_info(f)).inserted
FROM up_filters WHERE id <> 4 AND id <> 5;
CREATE VIEW up_agg_view AS
SELECT bloom_agg(k) AS f, qfilter_agg(k) AS q,
       (SELECT bloom_union_agg(b) FROM (SELECT bloom_agg(g, 100, 0.01) AS b
                                       FROM generate_series(1, 50) g GROUP BY g % 3) s) AS u
FROM up_keys WHERE k <= 50;
-- the growing form, which the update replaces with CREATE OR REPLACE
-- AGGREGATE: the view must survive it
CREATE VIEW up_growing_view AS
SELECT bloom_agg(k, 100, 0.01, 2) AS g FROM up_keys WHERE k <= 500;
