-- mutants.sql: builds the hostile inputs of the mutation tests.
--
-- A few real filters (bases) are damaged in every way a disk, a network or a
-- hostile client could damage them.  prop_mutant holds the binary mutants
-- (pushed through the bytea cast and binary COPY), prop_text_mutant the text
-- ones (through bloom_in and text COPY): the base64 form of every binary
-- mutant plus damage that only text can carry.  Offsets follow the format
-- description in bloom.h.  Deterministic: the generator is seeded.

SELECT setseed(0.4242);

-- Unsigned little-endian bytes of v in width bytes; negative v wraps as
-- two's complement, so -1 gives all ones.
CREATE FUNCTION prop_le(v numeric, width int) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT decode(string_agg(lpad(to_hex(
		div(mod(CASE WHEN v < 0 THEN v + 256::numeric ^ width ELSE v END,
				256::numeric ^ (i + 1)), 256::numeric ^ i)::int), 2, '0'),
		'' ORDER BY i), 'hex')
	FROM generate_series(0, width - 1) AS i
$$;

-- The IEEE 754 bytes of a double, little-endian as the format stores them.
CREATE FUNCTION prop_double(v float8) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT decode(string_agg(substr(encode(float8send(v), 'hex'), 15 - 2 * i, 2),
							 '' ORDER BY i), 'hex')
	FROM generate_series(0, 7) AS i
$$;

CREATE FUNCTION prop_put(b bytea, off int, v bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN octet_length(b) >= off + octet_length(v)
		THEN overlay(b PLACING v FROM off + 1 FOR octet_length(v)) ELSE b END
$$;

CREATE FUNCTION prop_random_bytes(n int) RETURNS bytea
LANGUAGE sql VOLATILE AS $$
	SELECT coalesce(decode(string_agg(lpad(to_hex(floor(random() * 256)::int), 2, '0'), ''),
						   'hex'), '\x'::bytea)
	FROM generate_series(1, n)
$$;

CREATE TABLE prop_base (name text PRIMARY KEY, bytes bytea NOT NULL);
INSERT INTO prop_base
SELECT 'empty', bloom_empty(10)::bytea
UNION ALL SELECT 'empty-big', bloom_empty(2000, 0.001)::bytea
UNION ALL SELECT 'int', bloom_agg(i)::bytea FROM generate_series(1, 100) AS i
UNION ALL SELECT 'text', bloom_agg('key' || i)::bytea FROM generate_series(1, 300) AS i
UNION ALL SELECT 'float-low-k', bloom_agg(i / 7.0::float8, 0.3)::bytea
	FROM generate_series(1, 50) AS i
UNION ALL SELECT 'inet-tagged', bloom_agg(('10.0.' || i / 256 || '.' || i % 256)::inet, 1000, 0.001)::bytea
	FROM generate_series(1, 500) AS i;

CREATE TABLE prop_mutant (
	id serial PRIMARY KEY,
	class text NOT NULL,
	note text NOT NULL,
	bytes bytea NOT NULL
);

-- Truncations: every length through the header and the first block, then
-- a spread over the rest.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'truncation', b.name || ' to ' || l, substr(b.bytes, 1, l)
FROM prop_base b,
	LATERAL (SELECT generate_series(0, least(octet_length(b.bytes) - 1, 130))
			 UNION
			 SELECT generate_series(0, octet_length(b.bytes) - 1,
									greatest(1, octet_length(b.bytes) / 40))) AS t(l);

-- Extensions: bytes after the last block, up to exactly one block more.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'extension', b.name || ' + ' || e.note, b.bytes || e.tail
FROM prop_base b,
	(VALUES ('1 zero', '\x00'::bytea), ('1 ones', '\xff'),
			('63 zeros', decode(repeat('00', 63), 'hex')),
			('64 zeros', decode(repeat('00', 64), 'hex')),
			('65 ones', decode(repeat('ff', 65), 'hex'))) AS e(note, tail)
UNION ALL
SELECT 'extension', b.name || ' + 1000 random', b.bytes || prop_random_bytes(1000)
FROM prop_base b;

-- Single byte flips at every header offset.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'header-flip', b.name || ' byte ' || o || ' xor ' || m,
	   set_byte(b.bytes, o, get_byte(b.bytes, o) # m)
FROM prop_base b, generate_series(0, 55) AS o, unnest(ARRAY[1, 16, 128, 255]) AS m;

-- Byte flips spread over the bit array, and whole arrays set or cleared.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'bits-flip', b.name || ' byte ' || o || ' xor ' || m,
	   set_byte(b.bytes, o, get_byte(b.bytes, o) # m)
FROM prop_base b,
	LATERAL generate_series(56, octet_length(b.bytes) - 1,
							greatest(1, (octet_length(b.bytes) - 56) / 48)) AS o,
	unnest(ARRAY[1, 255]) AS m
UNION ALL
SELECT 'bits-flip', b.name || ' bits all ' || v,
	   substr(b.bytes, 1, 56) || decode(repeat(v, octet_length(b.bytes) - 56), 'hex')
FROM prop_base b, unnest(ARRAY['00', 'ff']) AS v;

-- Header fields set to boundary and absurd values (checksum left stale;
-- prop_forge re-signs them later).
CREATE TABLE prop_field (field text, off int, value bytea);
INSERT INTO prop_field
SELECT 'magic', 0, v FROM unnest(ARRAY['\x4247', '\x6266', '\x0000', '\x4642']::bytea[]) AS v
UNION ALL SELECT 'version', 2, prop_le(v, 1) FROM unnest(ARRAY[0, 1, 3, 255]) AS v
UNION ALL SELECT 'layout', 3, prop_le(v, 1) FROM unnest(ARRAY[0, 2, 255]) AS v
UNION ALL SELECT 'k', 4, prop_le(v, 1) FROM unnest(ARRAY[0, 1, 2, 31, 32, 33, 64, 255]) AS v
UNION ALL SELECT 'kind', 5, prop_le(v, 1) FROM generate_series(0, 11) AS v
UNION ALL SELECT 'kind', 5, prop_le(v, 1) FROM unnest(ARRAY[127, 255]) AS v
UNION ALL SELECT 'reserved', 6, prop_le(v, 2) FROM unnest(ARRAY[1, 256, 65535]) AS v
UNION ALL SELECT 'tag', 8, prop_le(v, 4) FROM unnest(ARRAY[0, 1, 4294967295]) AS v
UNION ALL SELECT 'nblocks', 12, prop_le(v, 4)
	FROM unnest(ARRAY[0, 1, 2, 3, 5, 64, 65535, 16777215, 16777216, 16777217,
					  2147483647, 2147483648, 4294967295]) AS v
UNION ALL SELECT 'seed', 16, prop_le(v, 8) FROM unnest(ARRAY[1, -1, 9223372036854775807]) AS v
UNION ALL SELECT 'capacity', 24, prop_le(v, 8)
	FROM unnest(ARRAY[0, 1, 9223372036854775807, 9223372036854775808, -1]) AS v
UNION ALL SELECT 'fpr', 32, prop_double(v)
	FROM unnest(ARRAY[0, '-0', 0.5, 0.5000000000000001, 0.51, 1, -0.01, 'NaN',
					  'Infinity', '-Infinity', 1e-300, 4.9e-324]::float8[]) AS v
UNION ALL SELECT 'fpr', 32, v
	FROM unnest(ARRAY['\x000000000000f8ff', '\x010000000000f07f',
					  '\xffffffffffffffff']::bytea[]) AS v
UNION ALL SELECT 'inserted', 40, prop_le(v, 8) FROM unnest(ARRAY[0, 1, 9223372036854775808, -1]) AS v
UNION ALL SELECT 'checksum', 48, prop_le(v, 4) FROM unnest(ARRAY[0, 4294967295]) AS v
UNION ALL SELECT 'reserved2', 52, prop_le(v, 4) FROM unnest(ARRAY[1, 4294967295]) AS v;

-- The nblocks of the two largest supported sizes, computed from bloom.h.
INSERT INTO prop_field
SELECT 'nblocks', 12, prop_le(v, 4)
FROM (SELECT (750000000 - 56) / 64 AS max_blocks) AS m,
	unnest(ARRAY[max_blocks, max_blocks + 1]) AS v;

INSERT INTO prop_mutant (class, note, bytes)
SELECT 'field', b.name || ' ' || f.field || ' = \x' || encode(f.value, 'hex'),
	   prop_put(b.bytes, f.off, f.value)
FROM prop_base b, prop_field f
WHERE prop_put(b.bytes, f.off, f.value) <> b.bytes;

-- Splices: the header of one filter on the bits of another, as is and
-- trimmed or padded to the length the header declares.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'splice', h.name || ' header on ' || d.name || ' bits',
	   substr(h.bytes, 1, 56) || substr(d.bytes, 57)
FROM prop_base h, prop_base d WHERE h.name <> d.name
UNION ALL
SELECT 'splice', h.name || ' header on ' || d.name || ' bits, fitted',
	   substr(h.bytes, 1, 56)
	   || substr(substr(d.bytes, 57) || decode(repeat('a5', octet_length(h.bytes)), 'hex'),
				 1, octet_length(h.bytes) - 56)
FROM prop_base h, prop_base d WHERE h.name <> d.name
UNION ALL
SELECT 'splice', h.name || ' header twice', substr(h.bytes, 1, 56) || h.bytes
FROM prop_base h;

-- Garbage: random bytes of random lengths, some behind a plausible start,
-- and random bits behind every real header.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'garbage', 'random ' || i, prop_random_bytes(floor(random() * 400)::int)
FROM generate_series(1, 150) AS i
UNION ALL
SELECT 'garbage', 'magic + random ' || i,
	   '\x42460101'::bytea || prop_random_bytes(floor(random() * 300)::int)
FROM generate_series(1, 100) AS i
UNION ALL
SELECT 'garbage', b.name || ' header + random bits ' || i,
	   substr(b.bytes, 1, 56) || prop_random_bytes(octet_length(b.bytes) - 56)
FROM prop_base b, generate_series(1, 5) AS i;

-- Huge values: far more bytes than any header declares.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'huge', '4 MB of zeros', decode(repeat('00', 4 * 1024 * 1024), 'hex')
UNION ALL
SELECT 'huge', b.name || ' + 4 MB of ones', b.bytes || decode(repeat('ff', 4 * 1024 * 1024), 'hex')
FROM prop_base b WHERE b.name = 'int'
UNION ALL
-- becomes a valid 1 MB filter once re-signed
SELECT 'huge', b.name || ' declaring and holding 16384 blocks',
	   prop_put(substr(b.bytes, 1, 56), 12, prop_le(16384, 4))
	   || decode(repeat('00', 16384 * 64), 'hex')
FROM prop_base b WHERE b.name = 'int';

-- Filled in by run.sh through rechecksum: mutants whose header checksum
-- was made right again.
CREATE TABLE prop_forged_raw (id int, hex text);

-- The text-only damage, starting from each base's text form.
CREATE TABLE prop_text_mutant (
	id serial PRIMARY KEY,
	class text NOT NULL,
	note text NOT NULL,
	txt text NOT NULL
);

CREATE FUNCTION prop_text_of(b bytea) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT 'bloom:' || translate(encode(b, 'base64'), E'\n', '')
$$;

INSERT INTO prop_text_mutant (class, note, txt)
SELECT 'text-truncation', b.name || ' to ' || l, left(prop_text_of(b.bytes), l)
FROM prop_base b,
	LATERAL (SELECT generate_series(0, least(length(prop_text_of(b.bytes)) - 1, 100))
			 UNION
			 SELECT generate_series(0, length(prop_text_of(b.bytes)) - 1,
									greatest(1, length(prop_text_of(b.bytes)) / 40))) AS t(l);

INSERT INTO prop_text_mutant (class, note, txt)
SELECT 'prefix', b.name || ' ' || p.note, p.head || substr(prop_text_of(b.bytes), 7)
FROM prop_base b,
	(VALUES ('no prefix', ''), ('Bloom:', 'Bloom:'), ('BLOOM:', 'BLOOM:'),
			('bloom;', 'bloom;'), ('bloom', 'bloom'), ('leading blank', ' bloom:'),
			('blank after colon', 'bloom: '), ('double prefix', 'bloom:bloom:'),
			('bloomfilter:', 'bloomfilter:'), ('hex', 'bloom:\x'),
			('non-ASCII', 'blööm:')) AS p(note, head)
UNION ALL
SELECT 'prefix', 'bare ' || v, v
FROM unnest(ARRAY['', 'bloom:', 'bloom', 'b', ':', 'bloom:=', 'bloom:==', 'bloom:====',
				  'bloom:A', 'bloom:AA', 'bloom:AAA', 'bloom:AAAA', 'NULL',
				  'bloom:QkY=', 'bloom:QkYB']) AS v;

-- Invalid base64: a foreign character, whitespace or padding at spread
-- positions, and missing or surplus padding at the end.
INSERT INTO prop_text_mutant (class, note, txt)
SELECT 'base64', b.name || ' ' || quote_literal(c) || ' at ' || p,
	   overlay(prop_text_of(b.bytes) PLACING c FROM p FOR 1)
FROM prop_base b,
	LATERAL generate_series(7, length(prop_text_of(b.bytes)),
							greatest(1, length(prop_text_of(b.bytes)) / 12)) AS p,
	unnest(ARRAY['!', '*', '-', '_', '.', ' ', E'\n', E'\t', '=', 'é', '\', '"', ',', '{']) AS c
UNION ALL
SELECT 'base64', b.name || ' ' || quote_literal(c) || ' inserted at ' || p,
	   overlay(prop_text_of(b.bytes) PLACING c FROM p FOR 0)
FROM prop_base b,
	LATERAL generate_series(7, length(prop_text_of(b.bytes)),
							greatest(1, length(prop_text_of(b.bytes)) / 6)) AS p,
	unnest(ARRAY['A', 'AA', 'AAA', 'AAAA', '=', '==', ' ', E'\r\n']) AS c
UNION ALL
SELECT 'base64', b.name || ' ' || e.note,
	   CASE e.n
		   WHEN 1 THEN rtrim(t.txt, '=')
		   WHEN 2 THEN t.txt || '=='
		   WHEN 3 THEN t.txt || ' '
		   WHEN 4 THEN t.txt || E'\n'
		   WHEN 5 THEN 'bloom:' || upper(substr(t.txt, 7))
		   ELSE 'bloom:' || lower(substr(t.txt, 7)) END
FROM prop_base b,
	LATERAL (SELECT prop_text_of(b.bytes) AS txt) AS t,
	(VALUES ('padding removed', 1), ('padding doubled', 2), ('trailing blank', 3),
			('trailing newline', 4), ('upper-cased', 5), ('lower-cased', 6)) AS e(note, n);

-- Huge text: far longer than any header declares, valid base64 and not.
INSERT INTO prop_text_mutant (class, note, txt)
SELECT 'huge', '4 MB of A', 'bloom:' || repeat('A', 4 * 1024 * 1024)
UNION ALL
SELECT 'huge', '4 MB of !', 'bloom:' || repeat('!', 4 * 1024 * 1024)
UNION ALL
SELECT 'huge', '4 MB without prefix', repeat('QkYB', 1024 * 1024);
