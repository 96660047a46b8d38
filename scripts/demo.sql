-- The cache-penetration guard: most requests ask for ids that do not exist,
-- and each would cost a lookup.  A filter of the ids that do exist answers
-- "definitely not there" for nearly all of them without the lookup.
\pset footer off
CREATE EXTENSION bloomfilter;

\echo '== 1,000,000 users with sparse ids'
CREATE TABLE users AS SELECT (i * 3)::bigint AS id, 'user' || i AS name
FROM generate_series(1, 1000000) i;
ALTER TABLE users ADD PRIMARY KEY (id);

\echo '== one filter of every id, stored in a table'
CREATE TABLE filters AS SELECT 'users'::text AS name, bloom_agg(id) AS f FROM users;
SELECT bits, bytes, hashes, capacity, target_fpr, inserted,
       round(fill_ratio::numeric, 3) AS fill_ratio,
       round(estimated_distinct) AS estimated_distinct,
       round(estimated_fpr::numeric, 5) AS estimated_fpr, key_kind
FROM filters, bloom_info(f) WHERE name = 'users';

\echo '== 200,000 requests, 90% for ids that do not exist'
CREATE TABLE requests AS
SELECT CASE WHEN i % 10 = 0 THEN (i / 10 * 3)::bigint ELSE (i * 3 + 1)::bigint END AS user_id
FROM generate_series(1, 200000) i;

\echo '== the guard: look up only what the filter may contain'
SELECT count(*) AS requests_reaching_the_table,
       count(u.id) AS users_found
FROM requests r LEFT JOIN users u ON u.id = r.user_id
WHERE bloom_contains((SELECT f FROM filters WHERE name = 'users'), r.user_id);

\echo '== measured false-positive rate over the absent ids (target 0.01)'
SELECT round(count(*) FILTER (WHERE f @> r.user_id)::numeric / count(*), 5) AS measured_fpr
FROM requests r, filters WHERE name = 'users' AND r.user_id % 3 <> 0;

\echo '== and never a false negative'
SELECT count(*) FILTER (WHERE NOT f @> u.id) AS false_negatives FROM users u, filters WHERE filters.name = 'users';
