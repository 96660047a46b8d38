-- answers.sql: everything the values of values.sql answer, one line each;
-- the same before and after ALTER EXTENSION UPDATE, and after a dump and
-- restore (test/upgrade/run.sh).
SELECT 'filter ' || id, md5(f::bytea),
       (SELECT count(*) FROM generate_series(1, 20000) g WHERE f @> g)
FROM up_filters WHERE id <= 3 ORDER BY id;
SELECT 'filter 4', md5(f::bytea),
       (SELECT count(*) FROM generate_series(1, 20000) g WHERE f @> md5(g::text))
FROM up_filters WHERE id = 4;
SELECT 'filter 5', md5(f::bytea), f @> 1.5, f @> 1.50::numeric(4, 2), f @> 2.5, f @> 3.5
FROM up_filters WHERE id = 5;
SELECT 'qfilter ' || id, md5(f::bytea),
       (SELECT sum(qfilter_count(f, g)) FROM generate_series(1, 20000) g)
FROM up_qfilters ORDER BY id;
SELECT 'index ' || i,
       (SELECT count(*) FROM generate_series(1, 40000) g WHERE bloom_index_contains(i, g)),
       md5(bloom_index_filter(i)::bytea)
FROM unnest(ARRAY['up_keys_guard', 'up_parts_guard']::regclass[]) i;
SELECT 'index up_keys_text_guard',
       (SELECT count(*) FROM generate_series(1, 40000) g
        WHERE bloom_index_contains('up_keys_text_guard', 'key ' || g)),
       md5(bloom_index_filter('up_keys_text_guard')::bytea);
SELECT 'verify ' || i, bloom_index_verify(i)
FROM unnest(ARRAY['up_keys_guard', 'up_keys_text_guard']::regclass[]) i;
SELECT 'probe view', * FROM up_probe_view ORDER BY id;
SELECT 'aggregate view', md5(f::bytea), md5(q::bytea), md5(u::bytea) FROM up_agg_view;
SELECT 'growing view', (bloom_info(g)).segments, bloom_contains_all(g, ARRAY(SELECT generate_series(1, 500)))
FROM up_growing_view;
