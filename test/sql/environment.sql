-- A filter answers the same wherever it is used: built in one database and
-- probed in another of a different encoding or locale, it either finds what
-- it holds or says why it cannot; it never answers a silent "absent".
SELECT current_database() AS regress_db \gset
CREATE DATABASE bloom_latin1 TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE bloom_ctype_c TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE bloom_ctype_utf8 TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8';

-- strings hash as UTF-8 whatever the server encoding
\c bloom_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION bloomfilter;
SELECT bloom_add_all(bloom_empty(100), ARRAY['café', 'naïve', 'plain'])::text AS latin1_texts,
       bloom_agg(w)::text AS latin1_agg
FROM unnest(ARRAY['café', 'naïve', 'plain']) w \gset
-- a type whose own hash reads the server encoding's bytes records it
SELECT bloom_add(bloom_empty(100), '{"word": "café"}'::jsonb)::text AS latin1_jsonb,
       bloom_add(bloom_empty(100), ARRAY['café'])::text AS latin1_text_array \gset
\c :regress_db
SELECT f @> 'café'::text AS cafe, f @> 'naïve'::varchar AS naive, f @> 'plain'::name AS plain,
       f @> 'cafe'::text AS cafe_unaccented
FROM (VALUES (:'latin1_texts'::bloom), (:'latin1_agg'::bloom)) v(f);
SELECT :'latin1_texts'::bloom = bloom_add_all(bloom_empty(100), ARRAY['café', 'naïve', 'plain'])
       AS same_filter_as_utf8;
SELECT (bloom_info(:'latin1_jsonb')).key_kind;
SELECT :'latin1_jsonb'::bloom @> '{"word": "café"}'::jsonb;
SELECT :'latin1_text_array'::bloom @> ARRAY['café'];
-- and a union with a filter built here is refused the same way
SELECT :'latin1_jsonb'::bloom | bloom_add(bloom_empty(100), '{"word": "x"}'::jsonb);

-- a type whose hash may follow the locale (citext lowercases under
-- LC_CTYPE) records it
\c bloom_ctype_c
CREATE EXTENSION citext;
CREATE EXTENSION bloomfilter;
SELECT bloom_add_all(bloom_empty(100), ARRAY['Élan', 'Zoë']::citext[])::text AS c_citext \gset
SELECT :'c_citext'::bloom @> 'ÉLAN'::citext AS same_database_finds_it;
\c bloom_ctype_utf8
CREATE EXTENSION citext;
CREATE EXTENSION bloomfilter;
SELECT :'c_citext'::bloom @> 'Élan'::citext;
SELECT bloom_add(:'c_citext'::bloom, 'x'::citext);
-- text filters do not depend on the locale
SELECT bloom_add_all(bloom_empty(100), ARRAY['Élan', 'Zoë'])::text AS utf8_texts \gset
\c bloom_ctype_c
SELECT :'utf8_texts'::bloom @> 'Élan'::text AS elan, :'utf8_texts'::bloom @> 'Zoë'::text AS zoe;

-- a renamed or moved type: the error says so, never "absent"
\c :regress_db
CREATE TYPE pair AS (a int, b text);
CREATE TABLE pair_filter AS SELECT bloom_add(bloom_empty(10), ROW(1, 'x')::pair) AS f;
SELECT f @> ROW(1, 'x')::pair AS found FROM pair_filter;
ALTER TYPE pair RENAME TO pair_renamed;
SELECT f @> ROW(1, 'x')::pair_renamed FROM pair_filter;
ALTER TYPE pair_renamed RENAME TO pair;
SELECT f @> ROW(1, 'x')::pair AS found_again FROM pair_filter;
CREATE SCHEMA elsewhere;
ALTER TYPE pair SET SCHEMA elsewhere;
SELECT f @> ROW(1, 'x')::elsewhere.pair FROM pair_filter;
CREATE TYPE pair AS (a int, b int);
SELECT f @> ROW(1, 2)::pair FROM pair_filter;
DROP TABLE pair_filter;
DROP TYPE pair;
DROP SCHEMA elsewhere CASCADE;

DROP DATABASE bloom_latin1;
DROP DATABASE bloom_ctype_c;
DROP DATABASE bloom_ctype_utf8;
