-- test/client/keys.sql: the keys of the client exactness tests, as the text
-- a user would give the CLI, for every kind the client hashes.  Half of
-- each kind's keys are "present" (the filters are built from them), half
-- absent.  Deterministic: everything derives from md5 and hashint8 of the
-- row number.  :n is the number of keys per kind (present and absent).
--
-- Edge values are included on purpose: extreme and out-of-int64 integers,
-- numerics with trailing zeros, exponents and hundreds of digits, NaN and
-- infinities, -0.0 and denormals, strings with trailing and leading blanks
-- and non-ASCII characters up to 4 UTF-8 bytes, empty strings and bytea,
-- uuids in every spelling uuid_in accepts, booleans in every spelling
-- boolin accepts, and dates and timestamps at both ends of the ISO range.
CREATE TABLE keys (kind text, id int, present bool, s text, PRIMARY KEY (kind, id));

-- a deterministic 64-bit value and a digit string per row
CREATE FUNCTION h(i int, salt int DEFAULT 0) RETURNS bigint
	LANGUAGE sql IMMUTABLE AS $$ SELECT hashint8(i::bigint * 7919 + salt) # (hashint8(i::bigint + salt * 31)::bigint << 32) $$;
CREATE FUNCTION digits(i int, len int) RETURNS text
	LANGUAGE sql IMMUTABLE AS $$
	SELECT substr(string_agg(translate(md5((i * 1000 + j)::text), 'abcdef', '314159'), ''), 1, len)
	FROM generate_series(0, len / 32) j $$;

-- numbers
INSERT INTO keys
SELECT 'number', i, i % 2 = 0,
	CASE (i / 2) % 16
		WHEN 0 THEN h(i)::text
		WHEN 1 THEN (h(i) % 100000)::text
		WHEN 2 THEN ((h(i) % 1000000)::numeric / 1000)::text || '000'
		WHEN 3 THEN (h(i) % 1000)::text || CASE WHEN i % 4 = 0 THEN 'e' ELSE 'E' END || ((i % 13) - 6)::text
		WHEN 4 THEN '-' || (abs(h(i)) % 100000)::text || '.' || lpad((i % 100)::text, 4, '0')
		WHEN 5 THEN ltrim(digits(i, 40), '0')
		WHEN 6 THEN '0.' || repeat('0', i % 25) || (abs(h(i)) % 997 + 1)::text
		WHEN 7 THEN ((h(i) % 100000)::numeric * 1e20)::text
		WHEN 8 THEN (abs(h(i)) % 50)::text || '.5e+' || (i % 30)::text
		WHEN 9 THEN digits(i, 330) || '.' || digits(i + 1, 7)
		WHEN 10 THEN '-0.' || digits(i, 60)
		WHEN 11 THEN ((h(i) % 1000)::numeric / 8)::text
		WHEN 12 THEN (h(i) % 100)::text || '.' || repeat('0', i % 9)
		WHEN 13 THEN ' ' || (h(i) % 1000)::text || ' '
		WHEN 14 THEN '1e' || (i % 400 - 200)::text
		ELSE (h(i) % 9223372036854)::text || '000000'
	END
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'number', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['-9223372036854775808', '9223372036854775807', '9223372036854775808',
				  '-9223372036854775809', '0', '-0', '0.000', '+7', '.5', '5.', '-.5',
				  'NaN', 'nan', 'Infinity', '-Infinity', 'inf', '-inf', '+inf',
				  '1e131071', '1e-16383', '18446744073709551616', '-1e-5', '1000',
				  '1e3', '1.000e3', '10000', '0.0001', '123456789.987654321000']) WITH ORDINALITY AS u(s, ordinality);

-- floats
INSERT INTO keys
SELECT 'float', i, i % 2 = 0,
	CASE (i / 2) % 6
		WHEN 0 THEN (h(i)::float8 / 7919)::text
		WHEN 1 THEN (h(i)::float8 * 1e-300)::text
		WHEN 2 THEN ((h(i) % 1000)::float8 / 8)::text
		WHEN 3 THEN (h(i)::float8 * 1e289)::text
		WHEN 4 THEN (h(i) % 1000)::text || 'E-' || (i % 20)::text
		ELSE ' ' || (h(i) % 100000)::text || '.25 '
	END
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'float', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['0', '-0', '0.0', '-0.0', 'NaN', 'nan', 'Infinity', '-Infinity', 'inf',
				  '-inf', '1e308', '-1e308', '4.9e-324', '5e-324', '2.2250738585072014e-308',
				  '1.7976931348623157e308', '0.1', '0.30000000000000004', '+1.5']) WITH ORDINALITY AS u(s, ordinality);

-- text
INSERT INTO keys
SELECT 'text', i, i % 2 = 0,
	CASE (i / 2) % 6
		WHEN 0 THEN md5(i::text)
		WHEN 1 THEN md5(i::text) || repeat(' ', i % 4)
		WHEN 2 THEN repeat(' ', i % 3) || substr(md5(i::text), 1, i % 17)
		WHEN 3 THEN (SELECT string_agg(chr(160 + (abs(h(i, j)) % 12000)::int), '')
					 FROM generate_series(1, 1 + i % 9) j)
		WHEN 4 THEN 'user ' || (i % 5000)::text || chr(128512 + (i % 80)) || E'\t' || 'é' || repeat(' ', i % 2)
		ELSE (SELECT string_agg(chr(33 + (abs(h(i, j)) % 94)::int), '')
			  FROM generate_series(1, i % 30) j)
	END
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'text', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['', ' ', '   ', 'a', 'a ', ' a', 'café', 'cafe' || chr(769), '日本語', '🙂',
				  'x  ', 'x', E'back\\slash', '-5', '--', 'NULL']) WITH ORDINALITY AS u(s, ordinality);

-- bytea, as \x and hex digits
INSERT INTO keys
SELECT 'bytea', i, i % 2 = 0,
	'\x' || substr(md5(i::text) || md5((i + 7)::text), 1, 2 * (i % 33))
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'bytea', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['\x', '\x00', '\x0000', '\xff', '\xDEADBEEF', '\x20', '\x2020']) WITH ORDINALITY AS u(s, ordinality);

-- uuids, in every spelling uuid_in takes
INSERT INTO keys
SELECT 'uuid', i, i % 2 = 0,
	CASE (i / 2) % 5
		WHEN 0 THEN u
		WHEN 1 THEN upper(u)
		WHEN 2 THEN '{' || u || '}'
		WHEN 3 THEN replace(u, '-', '')
		ELSE regexp_replace(replace(upper(u), '-', ''), '(....)', '\1-', 'g')
	END
FROM (SELECT i, md5(i::text)::uuid::text AS u FROM generate_series(1, :n) i) s;
-- the last spelling leaves a trailing hyphen: uuid_in refuses it, so trim it
UPDATE keys SET s = rtrim(s, '-') WHERE kind = 'uuid';

-- booleans, in every spelling boolin takes
INSERT INTO keys SELECT 'boolean', ordinality, s IN ('t', 'TRUE', 'yes', 'on', '1', ' y ', 'Tr'), s
FROM unnest(ARRAY['t', 'TRUE', 'yes', 'on', '1', ' y ', 'Tr', 'f', 'false', 'NO', 'off',
				  '0', 'n', 'OF']) WITH ORDINALITY AS u(s, ordinality);

-- dates, timestamps and timestamptz in ISO 8601
INSERT INTO keys
SELECT 'date', i, i % 2 = 0, to_char(date '0001-01-01' + (abs(h(i)) % 3652058)::int, 'YYYY-MM-DD')
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'date', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['infinity', '-infinity', 'epoch', '2000-01-01', '1999-12-31', '0001-01-01',
				  '9999-12-31', '2024-02-29', ' 2020-05-05 ']) WITH ORDINALITY AS u(s, ordinality);
INSERT INTO keys
SELECT 'timestamp', i, i % 2 = 0,
	to_char(timestamp '0001-01-01' + (abs(h(i)) % 315537897600000000) * interval '1 microsecond',
			CASE (i / 2) % 4
				WHEN 0 THEN 'YYYY-MM-DD HH24:MI:SS.US'
				WHEN 1 THEN 'YYYY-MM-DD"T"HH24:MI:SS'
				WHEN 2 THEN 'YYYY-MM-DD HH24:MI'
				ELSE 'YYYY-MM-DD HH24:MI:SS.MS'
			END)
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'timestamp', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['infinity', '-infinity', 'epoch', '2000-01-01', '2000-01-01 00:00',
				  '1970-01-01 00:00:00.000001', '9999-12-31 23:59:59.999999']) WITH ORDINALITY AS u(s, ordinality);
INSERT INTO keys
SELECT 'timestamptz', i, i % 2 = 0,
	to_char(timestamp '0002-01-01' + (abs(h(i)) % 315500000000000000) * interval '1 microsecond',
			'YYYY-MM-DD HH24:MI:SS.US')
	|| (ARRAY['Z', '+00', '+05:30', '-08', '+0530', ' +01:00', '-11:45', '+14'])[1 + i % 8]
FROM generate_series(1, :n) i;
INSERT INTO keys SELECT 'timestamptz', :n + ordinality, ordinality % 2 = 0, s
FROM unnest(ARRAY['infinity', '-infinity', 'epoch', '2000-01-01 00:00Z',
				  '2000-01-01 05:30:00+05:30', '1999-12-31 23:00-01']) WITH ORDINALITY AS u(s, ordinality);
