/* bloomfilter--1.0--1.1.sql: from 1.0.0 to 1.1 (CHANGELOG.md). */

\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Type modifiers (1.1): bloom(capacity, fpr[, growth]), qfilter(capacity, fpr)
-- ---------------------------------------------------------------------

-- A column of bloom(1000000, 0.01) holds only filters of those parameters,
-- so that every value of it can be united with every other.  The casts are
-- the length coercions PostgreSQL applies on assignment and on ::bloom(...).
CREATE FUNCTION bloom_typmod_in(cstring[]) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_typmod_out(integer) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom(bloom, integer, boolean) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_typmod_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE bloom SET (TYPMOD_IN = bloom_typmod_in, TYPMOD_OUT = bloom_typmod_out);
CREATE CAST (bloom AS bloom) WITH FUNCTION bloom(bloom, integer, boolean) AS IMPLICIT;
COMMENT ON FUNCTION bloom_typmod_in(cstring[]) IS 'bloom type modifier input: (capacity, fpr[, growth])';
COMMENT ON FUNCTION bloom_typmod_out(integer) IS 'bloom type modifier output';
COMMENT ON FUNCTION bloom(bloom, integer, boolean) IS 'checks that a filter has the parameters of a bloom(capacity, fpr[, growth]) column';
COMMENT ON CAST (bloom AS bloom) IS 'a filter of the column''s parameters passes unchanged, any other is an error';

CREATE FUNCTION qfilter_typmod_in(cstring[]) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_typmod_out(integer) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter(qfilter, integer, boolean) RETURNS qfilter
	AS 'MODULE_PATHNAME', 'qfilter_typmod_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE qfilter SET (TYPMOD_IN = qfilter_typmod_in, TYPMOD_OUT = qfilter_typmod_out);
CREATE CAST (qfilter AS qfilter) WITH FUNCTION qfilter(qfilter, integer, boolean) AS IMPLICIT;
COMMENT ON FUNCTION qfilter_typmod_in(cstring[]) IS 'qfilter type modifier input: (capacity, fpr)';
COMMENT ON FUNCTION qfilter_typmod_out(integer) IS 'qfilter type modifier output';
COMMENT ON FUNCTION qfilter(qfilter, integer, boolean) IS 'checks that a filter has the parameters of a qfilter(capacity, fpr) column';
COMMENT ON CAST (qfilter AS qfilter) IS 'a filter of the column''s parameters passes unchanged, any other is an error';
