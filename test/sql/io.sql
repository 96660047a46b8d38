-- Text, binary and bytea forms: exact round trips, compact text.

-- Fixed literals must always parse and answer the same: stored filters
-- outlive releases.  Format version 1 and version 2 (written since) set the
-- same bits for integers, and for strings in a UTF8 database.
CREATE TABLE old_filters (name text, f bloom);
INSERT INTO old_filters VALUES
  ('v1 numbers 1..3', 'bloom:QkYBAQYBAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwMAAAAAAAAArKLQhAAAAAAAAAAAEAAAAAAAAAIAAAAgCAAABAEAAAAAABAAAAAAAAAAAhAAAgCAAAAAAAAAAAAAAAAAAAAADAAFAAEAAAAC'),
  ('v2 numbers 1..3', 'bloom:QkYCAQYBAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwMAAAAAAAAANrNAAAAAAAAAAAAAEAAAAAAAAAIAAAAgCAAABAEAAAAAABAAAAAAAAAAAhAAAgCAAAAAAAAAAAAAAAAAAAAADAAFAAEAAAAC'),
  ('v1 texts', '\x4246010106030000000000000100000000000000000000000a000000000000007b14ae47e17a843f0300000000000000ccd205f50000000000000000000000020000000000000801000002801000003800000000000000220000000010400000001000000000000001000022000000000000000000008000'::bytea::bloom);
SELECT f @> 2 AS v1_has_2, f @> 4 AS v1_has_4, (bloom_info(f)).format_version,
       substr(f::bytea, 57) = substr(bloom_add_all(bloom_empty(10), ARRAY[1, 2, 3])::bytea, 57) AS v1_bits_as_v2
FROM old_filters WHERE name = 'v1 numbers 1..3';
-- version 3 (since 1.1) is version 2 with a body check: the same bits; a
-- version 2 value is read as it is and becomes version 3 once changed
SELECT substr(f::bytea, 57) = substr(bloom_add_all(bloom_empty(10), ARRAY[1, 2, 3])::bytea, 57)
         AS v2_literal_is_stable,
       (bloom_info(f)).format_version,
       (bloom_info(bloom_add(f, 4))).format_version AS after_add,
       bloom_add(f, 4) = bloom_add_all(bloom_empty(10), ARRAY[1, 2, 3, 4]) AS same_as_new
FROM old_filters WHERE name = 'v2 numbers 1..3';
-- a version 1 filter keeps its version, and its hashing, as values are added
SELECT f @> 'café'::text AS v1_has_cafe, f @> 'naïve'::text AS v1_has_naive,
       f @> 'cafe'::text AS v1_has_cafe_unaccented,
       (bloom_info(bloom_add(f, 'more'::text))).format_version AS after_add
FROM old_filters WHERE name = 'v1 texts';
-- filters of different versions are not combined
SELECT a.f | b.f FROM old_filters a, old_filters b
WHERE a.name = 'v1 numbers 1..3' AND b.name = 'v2 numbers 1..3';

SELECT bloom_empty(10);
SELECT left(bloom_add(bloom_empty(1000), 42)::text, 6) AS prefix;

CREATE TABLE io_filters (name text, f bloom);
INSERT INTO io_filters
SELECT 'ints', bloom_agg(i) FROM generate_series(1, 20000) i
UNION ALL
SELECT 'texts', bloom_agg('key' || i) FROM generate_series(1, 20000) i
UNION ALL
SELECT 'empty', bloom_empty(100, 0.001);

-- text and bytea round trips are exact
SELECT name, f::text::bloom = f AS text_round_trip,
       (f::bytea)::bloom = f AS bytea_round_trip,
       length(f::bytea) = (bloom_info(f)).bytes AS bytea_is_the_value
FROM io_filters ORDER BY name;

-- the text form is base64, well under 1.5x the binary size
SELECT name, length(f::text)::float8 / length(f::bytea) < 1.5 AS compact
FROM io_filters ORDER BY name;

-- binary COPY round trip (send/recv)
-- in the cluster's own directory: a file under /tmp would outlive it, owned by
-- the server's user, and refuse the next build's server as another user
SELECT current_setting('data_directory') || '/bloomfilter_regress_io.bin' AS regress_io_bin \gset
COPY io_filters TO :'regress_io_bin' WITH (FORMAT binary);
CREATE TABLE io_copy (LIKE io_filters);
COPY io_copy FROM :'regress_io_bin' WITH (FORMAT binary);
SELECT a.name, a.f = b.f AS binary_round_trip
FROM io_filters a JOIN io_copy b USING (name) ORDER BY name;

-- text COPY round trip
SELECT current_setting('data_directory') || '/bloomfilter_regress_io.txt' AS regress_io_txt \gset
COPY io_filters TO :'regress_io_txt';
TRUNCATE io_copy;
COPY io_copy FROM :'regress_io_txt';
SELECT a.name, a.f = b.f AS text_copy_round_trip
FROM io_filters a JOIN io_copy b USING (name) ORDER BY name;

-- values read back still answer for what was added
SELECT count(*) FILTER (WHERE NOT f @> i) AS false_negatives
FROM io_copy, generate_series(1, 20000) i WHERE name = 'ints';

-- filters are stored uncompressed, out of line when large
SELECT attstorage FROM pg_attribute
WHERE attrelid = 'io_filters'::regclass AND attname = 'f';
