-- test/client/golden.sql: filters of fixed values of every kind the client
-- hashes, printed as md5 of their bytes.  The expected output was taken
-- from the server before its canonical forms moved into the core
-- (canonical.c), so it pins the persisted hashing: a change to any
-- canonical form changes a line here.  Since 1.1 the filters are format
-- version 3 (a body check): the expected md5s were taken again then, after
-- checking that each value rewritten as version 2 (the version byte and
-- the header checksum) had the md5 pinned before, byte for byte.
SET extra_float_digits = 0;
SELECT 'number', md5(bloom_add_all(bloom_empty(1000),
	ARRAY[-9223372036854775808, 9223372036854775807, 9223372036854775808, -9223372036854775809,
		0, 1, -1, 100, 1.10, 0.0001, 1e20, 1e-20, 123456789.987654321, -0.5,
		'NaN', 'Infinity', '-Infinity', 1e131071,
		('0.' || repeat('1234567', 200))::numeric,
		(repeat('9876543', 300) || '.5')::numeric]::numeric[])::bytea)
UNION ALL
SELECT 'float', md5(bloom_add_all(bloom_empty(1000),
	ARRAY[0, '-0', 'NaN', 'Infinity', '-Infinity', 1e308, 5e-324, 0.1, -2.5]::float8[])::bytea)
UNION ALL
SELECT 'float4', md5(bloom_add_all(bloom_empty(1000), ARRAY[0.1, '-0', 'NaN']::float4[])::bytea)
UNION ALL
SELECT 'text', md5(bloom_add_all(bloom_empty(1000),
	ARRAY['', ' ', 'abc', 'abc  ', ' abc', 'café', '日本語', E'tab\there', '🙂 ']::text[])::bytea)
UNION ALL
SELECT 'bpchar', md5(bloom_add_all(bloom_empty(1000), ARRAY['ab', 'cd  ']::char(5)[])::bytea)
UNION ALL
SELECT 'bytea', md5(bloom_add_all(bloom_empty(1000), ARRAY['', '\x00', '\xdeadbeef']::bytea[])::bytea)
UNION ALL
SELECT 'uuid', md5(bloom_add_all(bloom_empty(1000),
	ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000']::uuid[])::bytea)
UNION ALL
SELECT 'bool', md5(bloom_add_all(bloom_empty(1000), ARRAY[true, false])::bytea)
UNION ALL
SELECT 'date', md5(bloom_add_all(bloom_empty(1000),
	ARRAY['2000-01-01', '1999-12-31', '0001-01-01', '9999-12-31', 'infinity', '-infinity']::date[])::bytea)
UNION ALL
SELECT 'timestamp', md5(bloom_add_all(bloom_empty(1000),
	ARRAY['2000-01-01 00:00', '1970-01-01 00:00:00.000001', 'infinity', '-infinity']::timestamp[])::bytea)
UNION ALL
SELECT 'timestamptz', md5(bloom_add_all(bloom_empty(1000),
	ARRAY['2000-01-01 00:00+00', '2024-02-29 12:34:56.789+05:30']::timestamptz[])::bytea)
UNION ALL
-- version 1: an empty version 1 filter of the same size, values added by the server
SELECT 'v1 number', md5(bloom_add_all(
	'bloom:QkYBAQYAAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwAAAAAAAAAA5zwnwQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'::bloom,
	ARRAY[1, 1.5, 1e20, -0.25, 'NaN']::numeric[])::bytea)
UNION ALL
SELECT 'v1 text', md5(bloom_add_all(
	'bloom:QkYBAQYAAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwAAAAAAAAAA5zwnwQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'::bloom,
	ARRAY['abc  ', 'café']::text[])::bytea);
