-- Every hashable type of the server, with the decision taken for it: the
-- key kind its values become and what their hash depends on, or why it is
-- refused.  A new hashable type (a new PostgreSQL major) shows up in the
-- first query until a sample of it is added here and its decision reviewed.
CREATE TYPE kk_mood AS ENUM ('ok');
CREATE TYPE kk_pair AS (a int, b text);
CREATE TYPE kk_numbers AS (a int, b float8);
CREATE TABLE kk_sample (typ text, literal text, stands_for text);
INSERT INTO kk_sample VALUES
  ('"char"', 'x', '"char"'), ('aclitem', '=r/' || quote_ident(current_user), 'aclitem'),
  ('bloom', bloom_empty(10)::text, 'bloom'), ('qfilter', qfilter_empty(10)::text, 'qfilter'),
  ('integer[]', '{1,2}', 'anyarray'), ('text[]', '{a,b}', 'anyarray'),
  ('kk_mood[]', '{ok}', 'anyarray'), ('kk_mood', 'ok', 'anyenum'),
  ('int4multirange', '{[1,3)}', 'anymultirange'), ('int4range', '[1,3)', 'anyrange'),
  ('tstzrange', '[2024-01-01,2024-02-01)', 'anyrange'), ('textrange_kk', '[a,b)', 'anyrange'),
  ('bigint', '1', 'bigint'), ('boolean', 't', 'boolean'), ('bytea', '\x01', 'bytea'),
  ('character(3)', 'ab', 'character'), ('cid', '1', 'cid'), ('date', '2024-01-01', 'date'),
  ('double precision', '1.5', 'double precision'), ('inet', '10.0.0.1', 'inet'),
  ('cidr', '10.0.0.0/8', 'inet'), ('integer', '1', 'integer'),
  ('interval', '1 day', 'interval'), ('jsonb', '{"a": 1}', 'jsonb'),
  ('macaddr', '08:00:2b:01:02:03', 'macaddr'), ('macaddr8', '08:00:2b:01:02:03:04:05', 'macaddr8'),
  ('name', 'abc', 'name'), ('numeric', '1.5', 'numeric'), ('oid', '1', 'oid'),
  ('regclass', 'pg_class', 'oid'), ('oidvector', '1 2', 'oidvector'), ('pg_lsn', '0/16B3748', 'pg_lsn'),
  ('real', '1.5', 'real'), ('kk_pair', '(1,x)', 'record'), ('kk_numbers', '(1,1.5)', 'record'),
  ('smallint', '1', 'smallint'), ('text', 'abc', 'text'), ('character varying', 'abc', 'text'),
  ('tid', '(0,1)', 'tid'), ('time with time zone', '10:00+02', 'time with time zone'),
  ('time without time zone', '10:00', 'time without time zone'),
  ('timestamp with time zone', '2024-01-01 10:00+00', 'timestamp with time zone'),
  ('timestamp without time zone', '2024-01-01 10:00', 'timestamp without time zone'),
  ('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'), ('xid', '1', 'xid'),
  ('xid8', '1', 'xid8');
CREATE TYPE textrange_kk AS RANGE (subtype = text, collation = "C");

-- hashable types with no sample above: none may be left undecided
SELECT format_type(oc.opcintype, NULL) AS undecided_type
FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'hash'
WHERE oc.opcdefault
  AND EXISTS (SELECT 1 FROM pg_amproc p WHERE p.amprocfamily = oc.opcfamily AND p.amprocnum = 2)
  AND format_type(oc.opcintype, NULL) NOT IN (SELECT stands_for FROM kk_sample)
ORDER BY 1;

CREATE FUNCTION kk_decision(typ text, literal text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	kind text;
	environment text;
BEGIN
	EXECUTE format('SELECT key_kind, key_environment FROM bloom_info(bloom_add(bloom_empty(10), %L::%s))',
				   literal, typ)
		INTO kind, environment;
	RETURN kind || coalesce(', hash follows ' ||
							regexp_replace(environment, 'fingerprint [0-9A-F]+', 'recorded'), '');
EXCEPTION WHEN feature_not_supported OR undefined_function OR datatype_mismatch THEN
	RETURN 'refused: ' || SQLERRM;
END
$$;
SELECT stands_for, typ, kk_decision(typ, literal) AS decision
FROM kk_sample ORDER BY stands_for, typ;
DROP TABLE kk_sample;
DROP FUNCTION kk_decision(text, text);
DROP TYPE kk_pair, kk_numbers, textrange_kk, kk_mood;
