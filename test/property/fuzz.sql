-- fuzz.sql: pushes every mutant of mutants.sql through every input path a
-- user can reach, and prints one "ok"/"not ok" line per (path, class).
--
-- An input may end in exactly two ways: an ERROR with the path's SQLSTATE
-- (22P02 for text, 22P03 for binary and bytea), or a filter that then
-- behaves as a valid one.  Anything else (another SQLSTATE, a valid-looking
-- filter that fails later, a crash) is a failure.  Aggregate states
-- (bloom_agg_deserialize) take an internal argument and cannot be reached
-- from SQL, so they are not tested here.
--
-- psql variable dir: a directory the server may write, for the COPY files.

-- Mutants whose checksum rechecksum made right again, as new mutants.
INSERT INTO prop_mutant (class, note, bytes)
SELECT 'forged ' || m.class, m.note || ', re-signed', decode(r.hex, 'hex')
FROM prop_forged_raw r JOIN prop_mutant m USING (id)
WHERE decode(r.hex, 'hex') <> m.bytes;

-- Every binary mutant also arrives as text.
INSERT INTO prop_text_mutant (class, note, txt)
SELECT 'base64 of ' || class, note, prop_text_of(bytes) FROM prop_mutant;

-- NULL if f passes what every filter the server accepted must pass.
CREATE FUNCTION prop_valid_problem(f bloom) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	info record;
BEGIN
	IF NOT (f::bytea::bloom = f) THEN
		RETURN 'accepted, but its bytea round trip differs';
	END IF;
	IF NOT (f::text::bloom = f) THEN
		RETURN 'accepted, but its text round trip differs';
	END IF;
	SELECT * INTO STRICT info FROM bloom_info(f);
	IF info.bytes <> octet_length(f::bytea) OR info.bits <> (info.bytes - 56) * 8 THEN
		RETURN format('accepted, but bloom_info says %s bytes, %s bits for %s bytes',
					  info.bytes, info.bits, octet_length(f::bytea));
	END IF;
	PERFORM bloom_fpr(f), bloom_cardinality(f), f | f, f & f;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	RETURN 'accepted, then failed: ' || SQLSTATE || ' ' || SQLERRM;
END
$$;

-- NULL if an accepted filter can be used: what is added to it is found
-- (a filter of another kind refuses the value with 42804, which is fine).
-- Run on the bytea path only: the other paths accept the same bytes.
CREATE FUNCTION prop_use_problem(f bloom) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	probe text;
	answer boolean;
BEGIN
	FOREACH probe IN ARRAY ARRAY[
		'SELECT bloom_contains(bloom_add($1, 42::bigint), 42::bigint)',
		'SELECT bloom_contains(bloom_add($1, ''x''::text), ''x''::text)',
		'SELECT bloom_contains_all(bloom_add_all($1, ARRAY[1.5, -0.0]::float8[]), ARRAY[1.5, 0]::float8[])',
		'SELECT ''10.0.0.1''::inet <@ ($1 + ''10.0.0.1''::inet)',
		'SELECT bloom_contains($1, 42::bigint) IN (true, false)',
		-- like = ANY: true, or NULL for the NULL element, never false
		'SELECT bloom_contains_any($1, ARRAY[''x'', NULL]) IS DISTINCT FROM false',
		'SELECT bloom_union_agg(x) IS NOT NULL AND bloom_intersection_agg(x) IS NOT NULL
		 FROM (VALUES ($1), ($1)) AS v(x)']
	LOOP
		BEGIN
			EXECUTE probe INTO answer USING f;
			IF answer IS NOT TRUE THEN
				RETURN format('accepted, then %s gave %s', probe, coalesce(answer::text, 'NULL'));
			END IF;
		EXCEPTION WHEN datatype_mismatch THEN
			NULL;
		WHEN OTHERS THEN
			RETURN format('accepted, then %s failed: %s %s', probe, SQLSTATE, SQLERRM);
		END;
	END LOOP;
	RETURN NULL;
END
$$;

-- state is '00000' for an accepted input, else the error's SQLSTATE.
CREATE FUNCTION prop_try_text_literal(txt text, OUT state text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
	f bloom;
	error_detail text;
BEGIN
	BEGIN
		EXECUTE format('SELECT %L::bloom', txt) INTO f;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = MESSAGE_TEXT,
			error_detail = PG_EXCEPTION_DETAIL;
		detail := detail || coalesce(' (' || nullif(error_detail, '') || ')', '');
		RETURN;
	END;
	state := '00000';
	detail := prop_valid_problem(f);
END
$$;

CREATE FUNCTION prop_try_bytea_literal(b bytea, OUT state text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
	f bloom;
	error_detail text;
BEGIN
	BEGIN
		EXECUTE format('SELECT %L::bytea::bloom', '\x' || encode(b, 'hex')) INTO f;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = MESSAGE_TEXT,
			error_detail = PG_EXCEPTION_DETAIL;
		detail := detail || coalesce(' (' || nullif(error_detail, '') || ')', '');
		RETURN;
	END;
	state := '00000';
	detail := coalesce(prop_valid_problem(f), prop_use_problem(f));
END
$$;

CREATE TABLE prop_sink (f bloom);

-- Writes the source row to file with COPY TO (so its bytes arrive intact),
-- then reads it back into a bloom column with COPY FROM.  Each call gets a
-- new file: rewriting one file is 20 times slower on some file systems.
-- The row read is always rolled back (exception P0001 below): thousands of
-- committed subtransactions holding an XID each make every later one
-- slower, and an empty sink needs no cleanup.
CREATE FUNCTION prop_try_copy(source text, file text, options text,
							  OUT state text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
	f bloom;
	error_detail text;
BEGIN
	EXECUTE format('COPY (%s) TO %L %s', source, file, options);
	BEGIN
		BEGIN
			EXECUTE format('COPY prop_sink FROM %L %s', file, options);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = MESSAGE_TEXT,
				error_detail = PG_EXCEPTION_DETAIL;
			detail := detail || coalesce(' (' || nullif(error_detail, '') || ')', '');
			RETURN;
		END;
		SELECT s.f INTO STRICT f FROM prop_sink s;
		state := '00000';
		detail := prop_valid_problem(f);
		RAISE EXCEPTION 'undo the row';
	EXCEPTION WHEN raise_exception THEN
		RETURN;
	END;
END
$$;

CREATE TABLE prop_result (
	path text,
	id int,
	class text,
	note text,
	state text,
	detail text
);

INSERT INTO prop_result
SELECT 'text literal', m.id, m.class, m.note, r.*
FROM prop_text_mutant m, LATERAL prop_try_text_literal(m.txt) r;

INSERT INTO prop_result
SELECT 'text COPY', m.id, m.class, m.note, r.*
FROM prop_text_mutant m,
	LATERAL prop_try_copy('SELECT txt FROM prop_text_mutant WHERE id = ' || m.id,
						  format('%s/text-%s.txt', :'dir', m.id), '') r;

INSERT INTO prop_result
SELECT 'bytea cast', m.id, m.class, m.note, r.*
FROM prop_mutant m, LATERAL prop_try_bytea_literal(m.bytes) r;

INSERT INTO prop_result
SELECT 'binary COPY', m.id, m.class, m.note, r.*
FROM prop_mutant m,
	LATERAL prop_try_copy('SELECT bytes FROM prop_mutant WHERE id = ' || m.id,
						  format('%s/binary-%s.bin', :'dir', m.id), 'WITH (FORMAT binary)') r;

-- One line per (path, class), with the first offenders when it failed.
WITH judged AS (
	SELECT r.*,
		   CASE WHEN r.path IN ('text literal', 'text COPY') THEN '22P02' ELSE '22P03' END
			   AS expected
	FROM prop_result r
), summary AS (
	SELECT path, class, expected,
		   count(*) AS inputs,
		   count(*) FILTER (WHERE state = expected) AS rejected,
		   count(*) FILTER (WHERE state = '00000' AND detail IS NULL) AS valid,
		   array_agg(format('#   mutant %s (%s): %s', id, note,
							CASE WHEN state = '00000' THEN '' ELSE state || ' ' END
							|| left(detail, 200)) ORDER BY id)
			   FILTER (WHERE NOT (state = expected OR (state = '00000' AND detail IS NULL)))
			   AS offenders
	FROM judged
	GROUP BY path, class, expected
)
SELECT CASE WHEN offenders IS NULL THEN 'ok - ' ELSE 'not ok - ' END
	   || format('mutation, %s, %s: %s inputs, %s rejected with %s, %s valid',
				 path, class, inputs, rejected, expected, valid)
	   || coalesce(format(', %s ended otherwise', cardinality(offenders)) || E'\n'
					   || array_to_string(offenders[1:5], E'\n'), '')
FROM summary
ORDER BY path, class;
