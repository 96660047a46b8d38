-- values.sql: one table of values per supported key type, for the
-- no-false-negative property tests.
--
-- Each table prop_v_<type>(rn, v) holds a few thousand values spread over
-- the type's range, plus the edge values where hashing could go wrong
-- (zero, -0 and NaN, empty and blank-padded strings, infinities, the
-- extremes) and NULLs, which every path must skip.  fillfactor 10 spreads
-- the rows over enough pages for two parallel workers to share the scan.
-- prop_type lists the tables; prop_cross the probes by equal values of
-- another type of the same kind.

CREATE TABLE prop_type (typ text PRIMARY KEY, tbl text NOT NULL, coltype text NOT NULL);
INSERT INTO prop_type VALUES
	('int2', 'prop_v_int2', 'int2'), ('int4', 'prop_v_int4', 'int4'),
	('int8', 'prop_v_int8', 'int8'), ('numeric', 'prop_v_numeric', 'numeric'),
	('float4', 'prop_v_float4', 'float4'), ('float8', 'prop_v_float8', 'float8'),
	('text', 'prop_v_text', 'text'), ('varchar', 'prop_v_varchar', 'varchar'),
	('bpchar', 'prop_v_bpchar', 'char(24)'), ('bytea', 'prop_v_bytea', 'bytea'),
	('uuid', 'prop_v_uuid', 'uuid'), ('bool', 'prop_v_bool', 'bool'),
	('date', 'prop_v_date', 'date'), ('timestamp', 'prop_v_timestamp', 'timestamp'),
	('timestamptz', 'prop_v_timestamptz', 'timestamptz'),
	('inet', 'prop_v_inet', 'inet'), ('enum label', 'prop_v_enum', 'text');

-- An enum of 1530 labels; the 30 added later (ALTER TYPE ... BEFORE) get
-- out-of-order OIDs and fractional sort positions.  Filters refuse enum
-- values (no identity of one survives RENAME VALUE, ADD VALUE and a dump),
-- so the documented way is tested: the labels, cast to text.
SELECT format('CREATE TYPE prop_mood AS ENUM (%s)',
			  string_agg(quote_literal('mood' || i), ', ' ORDER BY i))
FROM generate_series(1, 1500) AS i
\gexec
SELECT format('ALTER TYPE prop_mood ADD VALUE %L BEFORE %L', 'mood' || i || '.5', 'mood' || (i + 1))
FROM generate_series(1, 1500, 50) AS i
\gexec

SELECT format('CREATE TABLE %I (rn serial, v %s) WITH (fillfactor = 10)', tbl, coltype)
FROM prop_type
\gexec

-- Values go in through v's text form, so one generator serves a type
-- family; NULLs are added to every table at the end.
INSERT INTO prop_v_int2 (v)
SELECT i FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT unnest(ARRAY[-32768, -32767, 32766, 32767])::int2;

INSERT INTO prop_v_int4 (v)
SELECT i * 1431655 FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT i FROM generate_series(-400, 400) AS i WHERE i <> 0
UNION ALL SELECT unnest(ARRAY[-2147483648, -2147483647, -1, 1, 7, 2147483646, 2147483647]);

INSERT INTO prop_v_int8 (v)
SELECT i * 6148914691236517 FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT i FROM generate_series(-400, 400) AS i WHERE i <> 0
UNION ALL SELECT i * 65537 FROM generate_series(-400, 400) AS i WHERE i <> 0
UNION ALL SELECT unnest(ARRAY[-9223372036854775808, -9223372036854775807, -1, 1, 7,
							  2147483648, -2147483649, 9223372036854775806,
							  9223372036854775807]);

-- Integral values inside and outside int64, fractions with trailing zeros,
-- tiny and huge scales, NaN and the infinities.
INSERT INTO prop_v_numeric (v)
SELECT i FROM generate_series(-500, 500) AS i
UNION ALL SELECT (i::text || '.' || repeat('0', i % 5))::numeric FROM generate_series(501, 700) AS i
UNION ALL SELECT round(i / 7.0, 12) FROM generate_series(-500, 500) AS i WHERE i % 7 <> 0
UNION ALL SELECT (i || '.50')::numeric FROM generate_series(1, 200) AS i
UNION ALL SELECT i * 1000000000000000 + i FROM generate_series(1, 100) AS i
UNION ALL SELECT 10000000000000000000 * i + i FROM generate_series(-100, 100) AS i WHERE i <> 0
UNION ALL SELECT ('1e-' || (i * 3))::numeric FROM generate_series(1, 100) AS i
UNION ALL SELECT ('-123456789012345678901234567890.' || i)::numeric FROM generate_series(1, 50) AS i
UNION ALL SELECT unnest(ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0.000',
							  '9223372036854775807', '9223372036854775808',
							  '-9223372036854775808', '-9223372036854775809',
							  '18446744073709551616', '1e100', '-1e-100']::numeric[]);

-- Floats: an exponential spread, exact binary fractions, the special
-- values and the extremes of each type.
INSERT INTO prop_v_float4 (v)
SELECT (sign(i) * power(1.013::float8, i) / 3)::float4 FROM generate_series(-1400, 1400) AS i
	WHERE i <> 0
UNION ALL SELECT (i / 8.0)::float4 FROM generate_series(-200, 200) AS i WHERE i <> 0
UNION ALL SELECT unnest(ARRAY['0', '-0', 'NaN', 'Infinity', '-Infinity', '1.1754944e-38',
							  '-1.1754944e-38', '1e-45', '-1e-45', '3.4028235e38',
							  '-3.4028235e38', '16777216', '16777217']::float4[]);

INSERT INTO prop_v_float8 (v)
SELECT sign(i) * power(1.5::float8, i) / 3 FROM generate_series(-1400, 1400) AS i WHERE i <> 0
UNION ALL SELECT i / 8.0::float8 FROM generate_series(-200, 200) AS i WHERE i <> 0
UNION ALL SELECT (i / 3.0)::float4::float8 FROM generate_series(1, 200) AS i
UNION ALL SELECT unnest(ARRAY['0', '-0', 'NaN', 'Infinity', '-Infinity',
							  '2.2250738585072014e-308', '-2.2250738585072014e-308',
							  '4.9e-324', '-4.9e-324', '1.7976931348623157e308',
							  '-1.7976931348623157e308', '9007199254740993',
							  '3.4028234663852886e38', '1.401298464324817e-45']::float8[]);

-- Strings: short keys, blanks in every position, non-ASCII, and values
-- long enough to be compressed or stored out of line.
CREATE TABLE prop_strings (s text);
INSERT INTO prop_strings
SELECT 'key' || i FROM generate_series(1, 2500) AS i
UNION ALL SELECT 'ключ ' || i || ' 🔑' FROM generate_series(1, 200) AS i
UNION ALL SELECT repeat('x', i) || ' ' FROM generate_series(1, 20) AS i
UNION ALL SELECT ' ' || i FROM generate_series(1, 20) AS i
UNION ALL SELECT repeat('long', 500 + i) FROM generate_series(1, 5) AS i
UNION ALL SELECT string_agg(md5(i::text || j::text), '' ORDER BY j)
	FROM generate_series(1, 5) AS i, generate_series(1, 400) AS j GROUP BY i
UNION ALL SELECT unnest(ARRAY['', ' ', '  ', 'a', 'a ', 'a  ', ' a', E'\t', E'a\n',
							  'NULL', '\N', E'\\', '"', '''', ',', '{}']);

INSERT INTO prop_v_text (v) SELECT s FROM prop_strings;
INSERT INTO prop_v_varchar (v) SELECT s FROM prop_strings;
INSERT INTO prop_v_bpchar (v) SELECT left(s, 24) FROM prop_strings;

INSERT INTO prop_v_bytea (v)
SELECT substr(sha256(i::text::bytea), 1, i % 33) FROM generate_series(1, 2800) AS i
UNION ALL SELECT sha256(i::text::bytea) || sha256(i::text::bytea) FROM generate_series(1, 100) AS i
UNION ALL SELECT decode(string_agg(md5(i::text || j::text), '' ORDER BY j), 'hex')
	FROM generate_series(1, 5) AS i, generate_series(1, 400) AS j GROUP BY i
UNION ALL SELECT unnest(ARRAY['\x', '\x00', '\x0000', '\x20', '\xff', '\x00ff00']::bytea[]);

INSERT INTO prop_v_uuid (v)
SELECT md5(i::text)::uuid FROM generate_series(1, 3000) AS i
UNION ALL SELECT unnest(ARRAY['00000000-0000-0000-0000-000000000000',
							  'ffffffff-ffff-ffff-ffff-ffffffffffff']::uuid[]);

INSERT INTO prop_v_bool (v)
SELECT i % 2 = 0 FROM generate_series(1, 3000) AS i;

INSERT INTO prop_v_date (v)
SELECT '2000-01-01'::date + i * 37 FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT unnest(ARRAY['4713-01-01 BC', '4713-01-02 BC', '5874897-12-31',
							  '1970-01-01', 'infinity', '-infinity']::date[]);

INSERT INTO prop_v_timestamp (v)
SELECT '2000-01-01'::timestamp + i * interval '1 day 1 hour 1 minute 1.000001 second'
FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT unnest(ARRAY['4713-01-01 00:00:00 BC', '294276-12-31 23:59:59.999999',
							  '1970-01-01', 'infinity', '-infinity']::timestamp[]);

INSERT INTO prop_v_timestamptz (v)
SELECT '2000-01-01 00:00:00+00'::timestamptz
	   + i * interval '1 day 1 hour 1 minute 1.000001 second'
FROM generate_series(-1500, 1500) AS i
UNION ALL SELECT unnest(ARRAY['4713-01-01 00:00:00+00 BC', '294276-12-31 23:59:59.999999+00',
							  '1970-01-01 00:00:00+00', 'infinity', '-infinity']::timestamptz[]);

-- Addresses of both families, and the same address under several masks
-- (different values in SQL).
INSERT INTO prop_v_inet (v)
SELECT ('10.' || (i / 65536) % 256 || '.' || (i / 256) % 256 || '.' || i % 256)::inet
FROM generate_series(1, 1500) AS i
UNION ALL SELECT ('2001:db8::' || to_hex(i) || ':' || to_hex(i * 7919 % 65536))::inet FROM generate_series(1, 1400) AS i
UNION ALL SELECT ('192.168.1.1/' || m)::inet FROM generate_series(8, 32, 4) AS m
UNION ALL SELECT unnest(ARRAY['0.0.0.0', '0.0.0.0/0', '255.255.255.255', '::', '::/0',
							  '::ffff:10.0.0.1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']::inet[]);

INSERT INTO prop_v_enum (v)
SELECT e::text FROM unnest(enum_range(NULL::prop_mood)) AS e;

SELECT format('INSERT INTO %I (v) VALUES (NULL), (NULL), (NULL)', tbl) FROM prop_type
\gexec

SELECT format('ANALYZE %I', tbl) FROM prop_type
\gexec

-- Probes of each filter by an equal value of another type of the same
-- kind; guard keeps out values the cast would reject.  Only rows where SQL
-- itself says the probe equals the value are required to be found.
CREATE TABLE prop_cross (typ text, probe_as text, probe text, guard text);
INSERT INTO prop_cross VALUES
	('int2', 'int4', 'v::int4', 'true'),
	('int2', 'int8', 'v::int8', 'true'),
	('int2', 'numeric', 'v::numeric', 'true'),
	('int4', 'int2', 'v::int2', 'v BETWEEN -32768 AND 32767'),
	('int4', 'int8', 'v::int8', 'true'),
	('int4', 'numeric', 'v::numeric', 'true'),
	('int8', 'int2', 'v::int2', 'v BETWEEN -32768 AND 32767'),
	('int8', 'int4', 'v::int4', 'v BETWEEN -2147483648 AND 2147483647'),
	('int8', 'numeric', 'v::numeric', 'true'),
	('numeric', 'int2', 'v::int2', 'v = trunc(v) AND v BETWEEN -32768 AND 32767'),
	('numeric', 'int4', 'v::int4', 'v = trunc(v) AND v BETWEEN -2147483648 AND 2147483647'),
	('numeric', 'int8', 'v::int8',
	 'v = trunc(v) AND v BETWEEN -9223372036854775808 AND 9223372036854775807'),
	('numeric', 'numeric of larger scale', 'v * 1.00000', 'true'),
	('float4', 'float8', 'v::float8', 'true'),
	('float8', 'float4', 'v::float4',
	 'v = 0 OR v = ''NaN'' OR abs(v) = ''Infinity'' OR abs(v) BETWEEN 1.401298464324817e-45 AND 3.4028234663852886e38'),
	('text', 'varchar', 'v::varchar', 'true'),
	('text', 'bpchar', 'v::bpchar', 'true'),
	('text', 'name', 'v::name', 'true'),
	('varchar', 'text', 'v::text', 'true'),
	('varchar', 'bpchar', 'v::bpchar', 'true'),
	('bpchar', 'text', 'v::text', 'true'),
	('bpchar', 'varchar', 'v::varchar', 'true'),
	('bpchar', 'bpchar with more blanks', '(v::text || ''   '')::bpchar', 'true');
