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
	AS 'MODULE_PATHNAME', 'bloom_typmod_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter(qfilter, integer, boolean) RETURNS qfilter
	AS 'MODULE_PATHNAME', 'qfilter_typmod_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE qfilter SET (TYPMOD_IN = qfilter_typmod_in, TYPMOD_OUT = qfilter_typmod_out);
CREATE CAST (qfilter AS qfilter) WITH FUNCTION qfilter(qfilter, integer, boolean) AS IMPLICIT;
COMMENT ON FUNCTION qfilter_typmod_in(cstring[]) IS 'qfilter type modifier input: (capacity, fpr)';
COMMENT ON FUNCTION qfilter_typmod_out(integer) IS 'qfilter type modifier output';
COMMENT ON FUNCTION qfilter(qfilter, integer, boolean) IS 'checks that a filter has the parameters of a qfilter(capacity, fpr) column';
COMMENT ON CAST (qfilter AS qfilter) IS 'a filter of the column''s parameters passes unchanged, any other is an error';

-- ---------------------------------------------------------------------
-- The growing bloom_agg combines (1.1)
-- ---------------------------------------------------------------------

-- bloom_agg(value, capacity, fpr, growth) now collects hashes as the
-- self-sizing forms do, so it takes their combine, serialize and deserialize
-- functions and runs in parallel plans.  CREATE OR REPLACE keeps the
-- aggregate's OID, so views that use it survive, and records the new
-- functions' dependencies itself.
CREATE OR REPLACE AGGREGATE bloom_agg(anycompatible, bigint, double precision, integer) (
	SFUNC = bloom_agg_add_growing, STYPE = internal,
	FINALFUNC = bloom_agg_final_growing,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);

-- ---------------------------------------------------------------------
-- Copies that follow a bloomfilter index (1.1)
-- ---------------------------------------------------------------------

-- Copies that follow the index (1.1): a copy and the WAL position it is
-- consistent with, what a copy made at a position lacks, and a delta
-- applied server side as the clients apply it.  A copy made on another
-- timeline (before a failover) or of another build of the index (REINDEX
-- CONCURRENTLY) is made anew when since_timeline and since_build are given.
CREATE FUNCTION bloom_index_snapshot(index regclass,
	OUT lsn pg_lsn,
	OUT filter bloom,
	OUT timeline bigint,
	OUT build pg_lsn)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_snapshot(regclass) IS 'the index as a bloom value, with the WAL position and timeline it is consistent with, and its build';
-- Not STRICT: a NULL since, timeline or build asks for a reload, since a
-- copy's position alone cannot tell whether its bits are this build's.
CREATE FUNCTION bloom_index_changes(index regclass, since pg_lsn,
	since_timeline bigint, since_build pg_lsn,
	OUT upto pg_lsn,
	OUT reload boolean,
	OUT delta bytea,
	OUT timeline bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_changes(regclass, pg_lsn, bigint, pg_lsn) IS 'the keys a copy made at since lacks, or reload: take a new snapshot';
CREATE FUNCTION bloom_apply_changes(filter bloom, delta bytea) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_apply_changes(bloom, bytea) IS 'a copy of an index brought up to date by bloom_index_changes''s delta';
