-- Text, binary and bytea forms: exact round trips, compact text.

-- A fixed literal written by format version 1 must always parse and answer
-- the same: stored filters outlive releases.
SELECT 'bloom:QkYBAQYBAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwMAAAAAAAAArKLQhAAAAAAAAAAAEAAAAAAAAAIAAAAgCAAABAEAAAAAABAAAAAAAAAAAhAAAgCAAAAAAAAAAAAAAAAAAAAADAAFAAEAAAAC'::bloom @> 2 AS v1_literal_has_2,
       'bloom:QkYBAQYBAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwMAAAAAAAAArKLQhAAAAAAAAAAAEAAAAAAAAAIAAAAgCAAABAEAAAAAABAAAAAAAAAAAhAAAgCAAAAAAAAAAAAAAAAAAAAADAAFAAEAAAAC'::bloom = bloom_add_all(bloom_empty(10), ARRAY[1, 2, 3]) AS v1_literal_is_stable;

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
COPY io_filters TO '/tmp/bloomfilter_regress_io.bin' WITH (FORMAT binary);
CREATE TABLE io_copy (LIKE io_filters);
COPY io_copy FROM '/tmp/bloomfilter_regress_io.bin' WITH (FORMAT binary);
SELECT a.name, a.f = b.f AS binary_round_trip
FROM io_filters a JOIN io_copy b USING (name) ORDER BY name;

-- text COPY round trip
COPY io_filters TO '/tmp/bloomfilter_regress_io.txt';
TRUNCATE io_copy;
COPY io_copy FROM '/tmp/bloomfilter_regress_io.txt';
SELECT a.name, a.f = b.f AS text_copy_round_trip
FROM io_filters a JOIN io_copy b USING (name) ORDER BY name;

-- values read back still answer for what was added
SELECT count(*) FILTER (WHERE NOT f @> i) AS false_negatives
FROM io_copy, generate_series(1, 20000) i WHERE name = 'ints';

-- filters are stored uncompressed, out of line when large
SELECT attstorage FROM pg_attribute
WHERE attrelid = 'io_filters'::regclass AND attname = 'f';
