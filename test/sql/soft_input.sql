-- Bad text input is a soft error from PostgreSQL 16 on: pg_input_is_valid
-- says false and pg_input_error_info gives the error that a cast would
-- raise, on every way bloom_in can fail (the prefix, base64, and each check
-- of the validator).  The Makefile runs this file only on 16 and later,
-- where those functions exist; it comes after security.sql, which drops the
-- extension, and may also run alone: the extension is created here.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
RESET client_min_messages;

-- a real filter is valid, whatever it holds
SELECT pg_input_is_valid(bloom_empty(100)::text, 'bloom') AS empty_valid,
       pg_input_is_valid(bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3])::text, 'bloom') AS full_valid;

-- the same inputs as errors.sql's casts, reported instead of raised
SELECT input, pg_input_is_valid(input, 'bloom') AS valid, e.*
FROM (VALUES (''), ('hello'), ('bloom:'), ('bloom:!!!!'), ('bloom:AAAA'), ('BLOOM:QkYB')) v(input),
     LATERAL pg_input_error_info(input, 'bloom') e;

-- the text form of given bytes, to reach the validator's every check
CREATE FUNCTION bloom_text_of(bytes bytea) RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT 'bloom:' || translate(encode(bytes, 'base64'), E'\n', '') $$;
CREATE TABLE soft_victim AS SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3]) AS f;
SELECT bloom_text_of(f::bytea) = f::text AS text_of_is_the_text_form FROM soft_victim;

-- each check of the validator, by the corruption that fails it
SELECT what, e.sql_error_code, e.detail
FROM soft_victim,
     LATERAL (VALUES ('short of a header', substr(f::bytea, 1, 20)),
                     ('magic', set_byte(f::bytea, 0, 0)),
                     ('version', set_byte(f::bytea, 2, 9)),
                     ('layout', set_byte(f::bytea, 3, 3)),
                     ('k', set_byte(f::bytea, 4, 40)),
                     ('key kind', set_byte(f::bytea, 5, 200)),
                     ('reserved byte', set_byte(f::bytea, 7, 1)),
                     ('block count', set_byte(f::bytea, 15, 127)),
                     ('checksum', set_byte(f::bytea, 48, 255 - get_byte(f::bytea, 48))),
                     ('bits cut short', substr(f::bytea, 1, 100)),
                     ('one byte longer', f::bytea || '\x00'::bytea),
                     ('empty with a bit set', set_bit(bloom_empty(1000)::bytea, 56 * 8, 1))) c(what, bytes),
     LATERAL pg_input_error_info(bloom_text_of(bytes), 'bloom') e;

-- every single-bit flip of the header is refused softly, with 22P02
SELECT count(*) AS header_flips,
       count(*) FILTER (WHERE NOT pg_input_is_valid(input, 'bloom')) AS invalid,
       count(*) FILTER (WHERE (pg_input_error_info(input, 'bloom')).sql_error_code = '22P02') AS reported
FROM soft_victim, generate_series(0, 56 * 8 - 1) bit,
     LATERAL bloom_text_of(set_bit(f::bytea, bit, 1 - get_bit(f::bytea, bit))) input;

-- a domain over bloom is soft too: its input calls bloom_in softly
CREATE DOMAIN small_filter AS bloom CHECK (bloom_cardinality(VALUE) < 10);
SELECT pg_input_is_valid('garbage', 'small_filter') AS garbage_valid,
       pg_input_is_valid((SELECT f::text FROM soft_victim), 'small_filter') AS victim_valid,
       (pg_input_error_info('garbage', 'small_filter')).sql_error_code;

-- a type modifier is checked softly too: other parameters are 22023
SELECT pg_input_is_valid(bloom_empty(10)::text, 'bloom(1000, 0.01)') AS other_parameters_valid,
       pg_input_is_valid(bloom_empty(1000, 0.01)::text, 'bloom(1000, 0.01)') AS same_parameters_valid,
       pg_input_is_valid(qfilter_empty(10)::text, 'qfilter(1000, 0.01)') AS other_qfilter_valid,
       (pg_input_error_info(bloom_empty(10)::text, 'bloom(1000, 0.01)')).sql_error_code;

DROP DOMAIN small_filter;
DROP TABLE soft_victim;
DROP FUNCTION bloom_text_of(bytea);
