-- Every bad input is a clear ERROR with the right SQLSTATE, never a crash.
\set VERBOSITY terse

CREATE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;

-- garbage text
SELECT ''::bloom;
SELECT 'hello'::bloom;
SELECT 'bloom:'::bloom;
SELECT 'bloom:!!!!'::bloom;
SELECT 'bloom:AAAA'::bloom;
SELECT 'BLOOM:QkYB'::bloom;

-- absurd sizes and rates
SELECT bloom_empty(0);
SELECT bloom_empty(-5);
SELECT bloom_empty(100, 0);
SELECT bloom_empty(100, -0.1);
SELECT bloom_empty(100, 'NaN');
SELECT bloom_empty(100, 1);
SELECT bloom_empty(100, 0.6);
SELECT bloom_empty(1e15::bigint, 1e-6);
SELECT * FROM bloom_params(1e15::bigint, 1e-6);
SELECT bloom_agg(i, 1e15::bigint, 1e-6) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 'NaN') FROM generate_series(1, 3) i;
SELECT sqlstate_of('SELECT bloom_empty(0)') AS capacity_state,
       sqlstate_of('SELECT bloom_empty(10, 2)') AS fpr_state,
       sqlstate_of('SELECT bloom_empty(1e15::bigint, 1e-6)') AS size_state;

-- a rate below what the layout supports is a bad parameter, not a size
\set VERBOSITY default
SELECT bloom_empty(1, 5e-324);
\set VERBOSITY terse
SELECT * FROM bloom_params(1, 1e-19);
SELECT bloom_agg(i, 1e-19) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 3, 1e-19) FROM generate_series(1, 3) i;
SELECT sqlstate_of('SELECT bloom_empty(1, 5e-324)') AS unreachable_state,
       sqlstate_of('SELECT bloom_empty(1, 1e-18)') AS lowest_rate_state;
-- near it the 64-bit hash limits how many values fit; the self-sizing
-- aggregate finds that out at its end
SELECT bloom_agg(i, 1e-17) FROM generate_series(1, 1000) i;
SELECT bloom_agg(i, 1e-17) IS NOT NULL AS fits FROM generate_series(1, 100) i;

-- the largest filter: its text form, on a COPY line of pg_dump, must stay
-- within PostgreSQL's 1 GB allocation limit; the errors say how many fit
\set VERBOSITY default
SELECT bloom_empty(604941109, 0.01);
SELECT bloom_empty(1000, 1e-17);
\set VERBOSITY terse
SELECT bits = 11718749::bigint * 512 AS largest_bits, bytes = 749999992 AS largest_bytes,
       6 + (bytes + 2) / 3 * 4 AS text_length
FROM bloom_params(604941108, 0.01);
SELECT * FROM bloom_params(604941109, 0.01);
SELECT bloom_agg(i, 604941109, 0.01) FROM generate_series(1, 3) i;
SELECT sqlstate_of('SELECT bloom_params(604941109, 0.01)') AS params_state,
       sqlstate_of('SELECT bloom_agg(i, 1e-17) FROM generate_series(1, 1000) i') AS agg_state;

-- truncated and bit-flipped text and bytea forms of a real filter
CREATE TABLE victim AS SELECT bloom_add_all(bloom_empty(1000), ARRAY[1, 2, 3]) AS f;
SELECT sqlstate_of(format('SELECT %L::bloom', left(f::text, length(f::text) - 4))) AS truncated_text,
       sqlstate_of(format('SELECT %L::bytea::bloom', substr(f::bytea, 1, 100))) AS truncated_bytea,
       sqlstate_of(format('SELECT %L::bytea::bloom', f::bytea || '\x00'::bytea)) AS extended_bytea,
       sqlstate_of('SELECT ''\x00''::bytea::bloom') AS one_byte
FROM victim;

-- every single-bit flip of the header is refused with 22P03, and so is
-- every flip in the bit array (version 3's body check)
SELECT count(*) AS header_flips,
       count(*) FILTER (WHERE state = '22P03') AS refused
FROM victim, generate_series(0, 56 * 8 - 1) bit,
     LATERAL (SELECT sqlstate_of(format('SELECT %L::bytea::bloom',
                                        set_bit(f::bytea, bit, 1 - get_bit(f::bytea, bit))))) s(state);
SELECT count(*) AS bit_array_flips, count(*) FILTER (WHERE state = '22P03') AS refused
FROM victim, generate_series(56 * 8, 56 * 8 + 4000, 97) bit,
     LATERAL (SELECT sqlstate_of(format('SELECT %L::bytea::bloom',
                                        set_bit(f::bytea, bit, 1 - get_bit(f::bytea, bit))))) s(state);
-- a flipped character of the text form is an error or a valid filter
SELECT count(*) AS text_flips,
       count(*) FILTER (WHERE state IN ('22P02', 'ok')) AS clean_outcomes
FROM victim, generate_series(7, 200, 3) pos,
     LATERAL (SELECT sqlstate_of(format('SELECT %L::bloom',
              overlay(f::text placing (CASE WHEN substr(f::text, pos, 1) = 'A' THEN 'B' ELSE 'A' END) from pos for 1)))) s(state);

-- messages for specific corruptions say what is wrong
\set VERBOSITY default
SELECT set_byte(f::bytea, 2, 9)::bloom FROM victim;
SELECT set_byte(f::bytea, 4, 40)::bloom FROM victim;
SELECT set_byte(f::bytea, 6, 1)::bloom FROM victim;
SELECT set_byte(f::bytea, 4, 5)::bloom FROM victim;
SELECT set_byte(f::bytea, 0, 0)::bloom FROM victim;
SELECT set_byte(f::bytea, 15, 127)::bloom FROM victim;
-- one block more than the largest filter (11718750 = 0x00b2d05e)
SELECT set_byte(set_byte(set_byte(set_byte(f::bytea, 12, 94), 13, 208), 14, 178), 15, 0)::bloom
FROM victim;

-- combining filters of different shapes names both
SELECT bloom_union(bloom_empty(100), bloom_empty(100000));
SELECT bloom_empty(100) & bloom_add(bloom_empty(100, 0.2), 1);
-- same geometry, different capacity: still refused, so that a | b = b | a
SELECT (bloom_params(300040, 0.01)).bits = (bloom_params(300000, 0.01)).bits AS same_bits;
SELECT bloom_empty(300040) | bloom_empty(300000);
SELECT sqlstate_of('SELECT bloom_empty(100) | bloom_empty(1000)') AS union_state,
       sqlstate_of('SELECT bloom_add(bloom_empty(10), 1) @> ''a''::text') AS kind_state;

-- a filter is never a key of another filter: combining is | or bloom_union_agg
SELECT bloom_empty(10) + bloom_empty(10);
SELECT bloom_add(bloom_empty(10), bloom_empty(10));
SELECT bloom_contains(bloom_empty(10), bloom_empty(10));
SELECT bloom_empty(10) <@ bloom_empty(10);
SELECT bloom_add_all(bloom_empty(10), ARRAY[bloom_empty(10)]);
SELECT bloom_contains_any(bloom_empty(10), ARRAY[bloom_empty(10)]);
SELECT bloom_agg(f) FROM (VALUES (bloom_empty(10))) v(f);
SELECT bloom_agg(f, 0.1) FROM (VALUES (bloom_empty(10))) v(f);
SELECT bloom_agg(f, 10, 0.1) FROM (VALUES (bloom_empty(10))) v(f);
CREATE DOMAIN filter_domain AS bloom;
SELECT bloom_empty(10) + bloom_empty(10)::filter_domain;
DROP DOMAIN filter_domain;
SELECT sqlstate_of('SELECT bloom_empty(10) + bloom_empty(10)') AS filter_key_state;
