/*
 * bloomfilter.sql: the install script of the current version, which make
 * copies to bloomfilter--<default_version>.sql.  Every change here ships in
 * the next version's upgrade script too (bloomfilter--<old>--<new>.sql);
 * test/upgrade checks that an upgraded database has exactly these objects.
 */

\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit

-- Value arguments are anycompatible rather than anyelement so that an
-- untyped literal (f @> 'abc') resolves to text instead of failing.

-- ---------------------------------------------------------------------
-- Type
-- ---------------------------------------------------------------------

CREATE TYPE bloom;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_out(bloom) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_recv(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_send(bloom) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The bits look random, so compression would only cost time; "external"
-- also lets a probe fetch a slice of a stored filter.
CREATE TYPE bloom (
	INPUT = bloom_in,
	OUTPUT = bloom_out,
	RECEIVE = bloom_recv,
	SEND = bloom_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = external
);

COMMENT ON TYPE bloom IS 'Bloom filter: answers "definitely absent" or "maybe present"';
COMMENT ON FUNCTION bloom_in(cstring) IS 'bloom text input: "bloom:" and base64, validated';
COMMENT ON FUNCTION bloom_out(bloom) IS 'bloom text output: "bloom:" and base64';
COMMENT ON FUNCTION bloom_recv(internal) IS 'bloom binary input, validated';
COMMENT ON FUNCTION bloom_send(bloom) IS 'bloom binary output: the serialised value';

-- ---------------------------------------------------------------------
-- Casts
-- ---------------------------------------------------------------------

CREATE FUNCTION bloom_from_bytea(bytea) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_from_bytea(bytea) IS 'validated cast from the binary form';

-- The bytea form is the value's own bytes, so that direction needs no function.
CREATE CAST (bloom AS bytea) WITHOUT FUNCTION;
CREATE CAST (bytea AS bloom) WITH FUNCTION bloom_from_bytea(bytea);
COMMENT ON CAST (bloom AS bytea) IS 'the serialised value, for clients and raw storage';
COMMENT ON CAST (bytea AS bloom) IS 'validated: a bad value is an error, never a wrong filter';

-- ---------------------------------------------------------------------
-- Comparison (equal = same parameters, counters and bits)
-- ---------------------------------------------------------------------

CREATE FUNCTION bloom_eq(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_eq(bloom, bloom) IS 'filters are identical';
CREATE FUNCTION bloom_ne(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_ne(bloom, bloom) IS 'filters differ';
CREATE FUNCTION bloom_lt(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_lt(bloom, bloom) IS 'byte order, for sorting';
CREATE FUNCTION bloom_le(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_le(bloom, bloom) IS 'byte order, for sorting';
CREATE FUNCTION bloom_gt(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_gt(bloom, bloom) IS 'byte order, for sorting';
CREATE FUNCTION bloom_ge(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_ge(bloom, bloom) IS 'byte order, for sorting';
CREATE FUNCTION bloom_cmp(bloom, bloom) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_cmp(bloom, bloom) IS 'btree support: byte order';
CREATE FUNCTION bloom_hash(bloom) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_hash(bloom) IS 'hash support';
CREATE FUNCTION bloom_hash_extended(bloom, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_hash_extended(bloom, bigint) IS 'extended hash support';

-- ---------------------------------------------------------------------
-- Planner support: selectivity and cost of a probe
-- ---------------------------------------------------------------------

CREATE FUNCTION bloom_contains_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_support(internal) IS 'planner support of bloom_contains: selectivity and cost';
CREATE FUNCTION bloom_contains_sel(internal, oid, internal, integer) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_sel(internal, oid, internal, integer) IS 'restriction selectivity of @> and <@';
CREATE FUNCTION bloom_add_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add_support(internal) IS 'planner support of bloom_add and bloom_add_all: in-place updates of PL/pgSQL variables (PostgreSQL 18)';

-- ---------------------------------------------------------------------
-- Construction, adding and probing
-- ---------------------------------------------------------------------

-- growth 0 is a filter of fixed size; 2..16 a chain that adds a segment
-- growth times larger whenever its last is full (a scalable Bloom filter).
CREATE FUNCTION bloom_empty(capacity bigint, fpr double precision DEFAULT 0.01,
	growth integer DEFAULT 0) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, double precision, integer) IS 'empty filter sized for capacity values at false-positive rate fpr; with growth 2..16, one that grows by segments and stays within fpr';

-- Not STRICT: adding NULL must return the filter, not lose it.
CREATE FUNCTION bloom_add(bloom, anycompatible) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT bloom_add_support;
COMMENT ON FUNCTION bloom_add(bloom, anycompatible) IS 'filter with the value added';

CREATE FUNCTION bloom_contains(bloom, anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT bloom_contains_support;
COMMENT ON FUNCTION bloom_contains(bloom, anycompatible) IS 'false if the value was never added; true if it may have been';

CREATE FUNCTION bloom_contained_by(anycompatible, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT bloom_contains_support;
COMMENT ON FUNCTION bloom_contained_by(anycompatible, bloom) IS 'bloom_contains with the arguments swapped';

-- Not STRICT, like bloom_add; NULL elements are skipped.
CREATE FUNCTION bloom_add_all(bloom, anycompatiblearray) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT bloom_add_support;
COMMENT ON FUNCTION bloom_add_all(bloom, anycompatiblearray) IS 'filter with every array element added, in one pass';

CREATE FUNCTION bloom_contains_all(bloom, anycompatiblearray) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_all(bloom, anycompatiblearray) IS 'true if every element may have been added';

CREATE FUNCTION bloom_contains_any(bloom, anycompatiblearray) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_any(bloom, anycompatiblearray) IS 'true if some element may have been added';

-- ---------------------------------------------------------------------
-- Union and intersection
-- ---------------------------------------------------------------------

-- Not STRICT: a NULL side counts as absent, as in the aggregates.
CREATE FUNCTION bloom_union(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union(bloom, bloom) IS 'filter of the values of either filter';

CREATE FUNCTION bloom_intersection(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_intersection(bloom, bloom) IS 'filter that may contain the values of both filters';

-- ---------------------------------------------------------------------
-- Inspection
-- ---------------------------------------------------------------------

CREATE FUNCTION bloom_info(bloom,
	OUT format_version integer,
	OUT layout text,
	OUT bits bigint,
	OUT bytes bigint,
	OUT hashes integer,
	OUT capacity bigint,
	OUT target_fpr double precision,
	OUT inserted bigint,
	OUT bits_set bigint,
	OUT fill_ratio double precision,
	OUT estimated_distinct double precision,
	OUT estimated_fpr double precision,
	OUT key_kind text,
	OUT seed bigint,
	OUT key_environment text,
	OUT over_capacity boolean,
	OUT segments integer,
	OUT growth integer)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_info(bloom) IS 'parameters, fill and estimates of a filter';

CREATE FUNCTION bloom_cardinality(bloom) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_cardinality(bloom) IS 'distinct values estimated from the fill';

CREATE FUNCTION bloom_fpr(bloom) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_fpr(bloom) IS 'current false-positive rate of this filter';

CREATE FUNCTION bloom_params(capacity bigint, fpr double precision DEFAULT 0.01,
	OUT bits bigint,
	OUT bytes bigint,
	OUT hashes integer,
	OUT bits_per_element double precision)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_params(bigint, double precision) IS 'size bloom_empty would choose for capacity values at rate fpr';

-- ---------------------------------------------------------------------
-- Operators
-- ---------------------------------------------------------------------

CREATE OPERATOR @> (
	LEFTARG = bloom, RIGHTARG = anycompatible, FUNCTION = bloom_contains,
	COMMUTATOR = <@, RESTRICT = bloom_contains_sel
);
CREATE OPERATOR <@ (
	LEFTARG = anycompatible, RIGHTARG = bloom, FUNCTION = bloom_contained_by,
	COMMUTATOR = @>, RESTRICT = bloom_contains_sel
);
CREATE OPERATOR + (
	LEFTARG = bloom, RIGHTARG = anycompatible, FUNCTION = bloom_add
);
CREATE OPERATOR | (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_union,
	COMMUTATOR = |
);
CREATE OPERATOR & (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_intersection,
	COMMUTATOR = &
);
CREATE OPERATOR = (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = bloom, RIGHTARG = bloom, FUNCTION = bloom_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR @> (bloom, anycompatible) IS 'filter may contain the value (bloom_contains)';
COMMENT ON OPERATOR <@ (anycompatible, bloom) IS 'value may be in the filter (bloom_contains)';
COMMENT ON OPERATOR + (bloom, anycompatible) IS 'filter with the value added (bloom_add)';
COMMENT ON OPERATOR | (bloom, bloom) IS 'union of two filters (bloom_union)';
COMMENT ON OPERATOR & (bloom, bloom) IS 'intersection of two filters (bloom_intersection)';
COMMENT ON OPERATOR = (bloom, bloom) IS 'filters are identical';
COMMENT ON OPERATOR <> (bloom, bloom) IS 'filters differ';
COMMENT ON OPERATOR < (bloom, bloom) IS 'byte order, for sorting';
COMMENT ON OPERATOR <= (bloom, bloom) IS 'byte order, for sorting';
COMMENT ON OPERATOR > (bloom, bloom) IS 'byte order, for sorting';
COMMENT ON OPERATOR >= (bloom, bloom) IS 'byte order, for sorting';

-- ---------------------------------------------------------------------
-- Operator classes: GROUP BY, DISTINCT and UNION over filters
-- ---------------------------------------------------------------------

CREATE OPERATOR CLASS bloom_ops DEFAULT FOR TYPE bloom USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 bloom_cmp(bloom, bloom);

CREATE OPERATOR CLASS bloom_ops DEFAULT FOR TYPE bloom USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 bloom_hash(bloom),
	FUNCTION 2 bloom_hash_extended(bloom, bigint);

COMMENT ON OPERATOR CLASS bloom_ops USING btree IS 'byte order of filters, for sorting and grouping';
COMMENT ON OPERATOR FAMILY bloom_ops USING btree IS 'byte order of filters, for sorting and grouping';
COMMENT ON OPERATOR CLASS bloom_ops USING hash IS 'hashing of filters, for hashed grouping and joins';
COMMENT ON OPERATOR FAMILY bloom_ops USING hash IS 'hashing of filters, for hashed grouping and joins';

-- ---------------------------------------------------------------------
-- Aggregates
-- ---------------------------------------------------------------------

-- Transition and combine functions are not STRICT: the state starts as
-- NULL and NULL inputs are skipped inside.
CREATE FUNCTION bloom_agg_add(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_add_fpr(internal, anycompatible, double precision) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_add_fixed(internal, anycompatible, bigint, double precision) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_agg_add(internal, anycompatible) IS 'bloom_agg transition';
COMMENT ON FUNCTION bloom_agg_add_fpr(internal, anycompatible, double precision) IS 'bloom_agg transition';
COMMENT ON FUNCTION bloom_agg_add_fixed(internal, anycompatible, bigint, double precision) IS 'bloom_agg transition';
COMMENT ON FUNCTION bloom_agg_final(internal) IS 'bloom_agg final function';
COMMENT ON FUNCTION bloom_agg_combine(internal, internal) IS 'bloom_agg combine function';
COMMENT ON FUNCTION bloom_agg_serialize(internal) IS 'bloom_agg serialize function';
COMMENT ON FUNCTION bloom_agg_deserialize(bytea, internal) IS 'bloom_agg deserialize function';

-- SSPACE: a state holds 8 bytes per distinct value until the end (or, for
-- the fixed form, until its bits are smaller); a few hundred values per
-- group is a fair guess for the planner.
CREATE AGGREGATE bloom_agg(anycompatible) (
	SFUNC = bloom_agg_add, STYPE = internal, SSPACE = 2048,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anycompatible) IS 'filter sized for the distinct values seen, at false-positive rate 0.01';

CREATE AGGREGATE bloom_agg(anycompatible, double precision) (
	SFUNC = bloom_agg_add_fpr, STYPE = internal, SSPACE = 2048,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anycompatible, double precision) IS 'filter sized for the distinct values seen, at the given false-positive rate';

CREATE AGGREGATE bloom_agg(anycompatible, bigint, double precision) (
	SFUNC = bloom_agg_add_fixed, STYPE = internal, SSPACE = 2048,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anycompatible, bigint, double precision) IS 'filter of fixed capacity and false-positive rate, built in one pass';

-- The growing form collects hashes as the self-sizing forms do and builds its
-- chain at the end, so it combines like them (bloom_agg.c).
CREATE FUNCTION bloom_agg_add_growing(internal, anycompatible, bigint, double precision, integer)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_add_growing(internal, anycompatible, bigint, double precision, integer) IS 'bloom_agg transition';
CREATE FUNCTION bloom_agg_final_growing(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_final_growing(internal) IS 'bloom_agg final function';
CREATE AGGREGATE bloom_agg(anycompatible, bigint, double precision, integer) (
	SFUNC = bloom_agg_add_growing, STYPE = internal,
	FINALFUNC = bloom_agg_final_growing,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anycompatible, bigint, double precision, integer) IS 'filter that starts at capacity and grows by segments (growth 2..16) within false-positive rate fpr';

CREATE FUNCTION bloom_union_agg_add(internal, bloom) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_intersection_agg_add(internal, bloom) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_intersection_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_set_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_set_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_set_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_union_agg_add(internal, bloom) IS 'bloom_union_agg transition';
COMMENT ON FUNCTION bloom_intersection_agg_add(internal, bloom) IS 'bloom_intersection_agg transition';
COMMENT ON FUNCTION bloom_union_agg_combine(internal, internal) IS 'bloom_union_agg combine function';
COMMENT ON FUNCTION bloom_intersection_agg_combine(internal, internal) IS 'bloom_intersection_agg combine function';
COMMENT ON FUNCTION bloom_set_agg_final(internal) IS 'final function of the filter set aggregates';
COMMENT ON FUNCTION bloom_set_agg_serialize(internal) IS 'serialize function of the filter set aggregates';
COMMENT ON FUNCTION bloom_set_agg_deserialize(bytea, internal) IS 'deserialize function of the filter set aggregates';

-- SSPACE: the state is a copy of one filter; 64 kB is a filter of about
-- 50,000 values at 1%.
CREATE AGGREGATE bloom_union_agg(bloom) (
	SFUNC = bloom_union_agg_add, STYPE = internal, SSPACE = 65536,
	FINALFUNC = bloom_set_agg_final,
	COMBINEFUNC = bloom_union_agg_combine,
	SERIALFUNC = bloom_set_agg_serialize, DESERIALFUNC = bloom_set_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_union_agg(bloom) IS 'union of filters with the same parameters';

CREATE AGGREGATE bloom_intersection_agg(bloom) (
	SFUNC = bloom_intersection_agg_add, STYPE = internal, SSPACE = 65536,
	FINALFUNC = bloom_set_agg_final,
	COMBINEFUNC = bloom_intersection_agg_combine,
	SERIALFUNC = bloom_set_agg_serialize, DESERIALFUNC = bloom_set_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_intersection_agg(bloom) IS 'intersection of filters with the same parameters';

-- =====================================================================
-- qfilter: a counting quotient filter, whose keys can be removed
-- =====================================================================

CREATE TYPE qfilter;

CREATE FUNCTION qfilter_in(cstring) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_out(qfilter) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_recv(internal) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- Sending, comparing and hashing look at the bytes only: bloom's functions.
CREATE FUNCTION qfilter_send(qfilter) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bloom_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Filled slots and remainders compress a little; "extended" lets TOAST try.
CREATE TYPE qfilter (
	INPUT = qfilter_in,
	OUTPUT = qfilter_out,
	RECEIVE = qfilter_recv,
	SEND = qfilter_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);

COMMENT ON TYPE qfilter IS 'counting quotient filter: "definitely absent" or "maybe present", with counts and removal';
COMMENT ON FUNCTION qfilter_in(cstring) IS 'qfilter text input: "qfilter:" and base64, validated';
COMMENT ON FUNCTION qfilter_out(qfilter) IS 'qfilter text output: "qfilter:" and base64';
COMMENT ON FUNCTION qfilter_recv(internal) IS 'qfilter binary input, validated';
COMMENT ON FUNCTION qfilter_send(qfilter) IS 'qfilter binary output: the serialised value';

CREATE FUNCTION qfilter_from_bytea(bytea) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_from_bytea(bytea) IS 'bytea to qfilter, validated';
CREATE CAST (qfilter AS bytea) WITHOUT FUNCTION;
CREATE CAST (bytea AS qfilter) WITH FUNCTION qfilter_from_bytea(bytea);
COMMENT ON CAST (qfilter AS bytea) IS 'the serialised value, for clients and raw storage';
COMMENT ON CAST (bytea AS qfilter) IS 'validated: a bad value is an error, never a wrong filter';

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

CREATE FUNCTION qfilter_eq(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_ne(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_lt(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_le(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_gt(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_ge(qfilter, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_cmp(qfilter, qfilter) RETURNS integer
	AS 'MODULE_PATHNAME', 'bloom_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_hash(qfilter) RETURNS integer
	AS 'MODULE_PATHNAME', 'bloom_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_hash_extended(qfilter, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bloom_hash_extended' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_eq(qfilter, qfilter) IS 'filters are identical: same parameters, size and slots';
COMMENT ON FUNCTION qfilter_ne(qfilter, qfilter) IS 'filters differ';
COMMENT ON FUNCTION qfilter_lt(qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON FUNCTION qfilter_le(qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON FUNCTION qfilter_gt(qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON FUNCTION qfilter_ge(qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON FUNCTION qfilter_cmp(qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON FUNCTION qfilter_hash(qfilter) IS 'hash of the bytes';
COMMENT ON FUNCTION qfilter_hash_extended(qfilter, bigint) IS 'seeded hash of the bytes';

CREATE FUNCTION qfilter_empty(capacity bigint, fpr double precision DEFAULT 0.01) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_empty(bigint, double precision) IS 'empty filter sized for capacity keys at false-positive rate fpr';

-- Not STRICT: adding or removing NULL must return the filter, not lose it.
CREATE FUNCTION qfilter_add(qfilter, anycompatible) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_add(qfilter, anycompatible) IS 'filter with one more copy of the value';
CREATE FUNCTION qfilter_remove(qfilter, anycompatible) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_remove(qfilter, anycompatible) IS 'filter with one copy of the value fewer; a NOTICE and no change if it is not there';
CREATE FUNCTION qfilter_count(qfilter, anycompatible) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_count(qfilter, anycompatible) IS 'copies of the value: never fewer than were added and not removed';
CREATE FUNCTION qfilter_contains(qfilter, anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_contains(qfilter, anycompatible) IS 'false if the value is not in the filter; true if it may be';
CREATE FUNCTION qfilter_contained_by(anycompatible, qfilter) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_contained_by(anycompatible, qfilter) IS 'qfilter_contains with the arguments swapped';

CREATE FUNCTION qfilter_add_all(qfilter, anycompatiblearray) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_add_all(qfilter, anycompatiblearray) IS 'filter with a copy of every array element added';
CREATE FUNCTION qfilter_remove_all(qfilter, anycompatiblearray) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_remove_all(qfilter, anycompatiblearray) IS 'filter with a copy of every array element removed; one NOTICE for those not there';
CREATE FUNCTION qfilter_contains_all(qfilter, anycompatiblearray) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_contains_all(qfilter, anycompatiblearray) IS 'true if every element may be in the filter';
CREATE FUNCTION qfilter_contains_any(qfilter, anycompatiblearray) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_contains_any(qfilter, anycompatiblearray) IS 'true if some element may be in the filter';

CREATE FUNCTION qfilter_union(qfilter, qfilter) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_union(qfilter, qfilter) IS 'multiset sum: counts add up';

CREATE FUNCTION qfilter_info(qfilter,
	OUT format_version integer,
	OUT bytes bigint,
	OUT slots bigint,
	OUT remainder_bits integer,
	OUT capacity bigint,
	OUT target_fpr double precision,
	OUT count bigint,
	OUT distinct_fingerprints bigint,
	OUT load double precision,
	OUT estimated_fpr double precision,
	OUT key_kind text,
	OUT key_environment text)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_info(qfilter) IS 'parameters, fill and estimates of a filter';

CREATE OPERATOR @> (
	LEFTARG = qfilter, RIGHTARG = anycompatible, FUNCTION = qfilter_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = anycompatible, RIGHTARG = qfilter, FUNCTION = qfilter_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR | (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_union,
	COMMUTATOR = |
);
CREATE OPERATOR = (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = qfilter, RIGHTARG = qfilter, FUNCTION = qfilter_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);
COMMENT ON OPERATOR @> (qfilter, anycompatible) IS 'filter may contain the value (qfilter_contains)';
COMMENT ON OPERATOR <@ (anycompatible, qfilter) IS 'value may be in the filter (qfilter_contains)';
COMMENT ON OPERATOR | (qfilter, qfilter) IS 'multiset sum of two filters (qfilter_union)';
COMMENT ON OPERATOR = (qfilter, qfilter) IS 'filters are identical';
COMMENT ON OPERATOR <> (qfilter, qfilter) IS 'filters differ';
COMMENT ON OPERATOR < (qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON OPERATOR <= (qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON OPERATOR > (qfilter, qfilter) IS 'byte order, for sorting';
COMMENT ON OPERATOR >= (qfilter, qfilter) IS 'byte order, for sorting';

CREATE OPERATOR CLASS qfilter_ops DEFAULT FOR TYPE qfilter USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 qfilter_cmp(qfilter, qfilter);
CREATE OPERATOR CLASS qfilter_ops DEFAULT FOR TYPE qfilter USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 qfilter_hash(qfilter),
	FUNCTION 2 qfilter_hash_extended(qfilter, bigint);
COMMENT ON OPERATOR CLASS qfilter_ops USING btree IS 'byte order of filters, for sorting and grouping';
COMMENT ON OPERATOR FAMILY qfilter_ops USING btree IS 'byte order of filters, for sorting and grouping';
COMMENT ON OPERATOR CLASS qfilter_ops USING hash IS 'hashing of filters, for hashed grouping and joins';
COMMENT ON OPERATOR FAMILY qfilter_ops USING hash IS 'hashing of filters, for hashed grouping and joins';

-- Aggregates.  The state is the list of the values' hashes; the final
-- function sorts it and builds the filter, so the result depends only on
-- the multiset of values.  The inverse transition (moving window frames)
-- takes one hash out.
CREATE FUNCTION qfilter_agg_add(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_add_fpr(internal, anycompatible, double precision) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_add_fixed(internal, anycompatible, bigint, double precision) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_remove(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_remove_fpr(internal, anycompatible, double precision) RETURNS internal
	AS 'MODULE_PATHNAME', 'qfilter_agg_remove' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_remove_fixed(internal, anycompatible, bigint, double precision) RETURNS internal
	AS 'MODULE_PATHNAME', 'qfilter_agg_remove' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_final(internal) RETURNS qfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION qfilter_union_agg_add(internal, qfilter) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION qfilter_agg_add(internal, anycompatible) IS 'qfilter_agg transition';
COMMENT ON FUNCTION qfilter_agg_add_fpr(internal, anycompatible, double precision) IS 'qfilter_agg transition';
COMMENT ON FUNCTION qfilter_agg_add_fixed(internal, anycompatible, bigint, double precision) IS 'qfilter_agg transition';
COMMENT ON FUNCTION qfilter_agg_remove(internal, anycompatible) IS 'qfilter_agg inverse transition (moving window frames)';
COMMENT ON FUNCTION qfilter_agg_remove_fpr(internal, anycompatible, double precision) IS 'qfilter_agg inverse transition (moving window frames)';
COMMENT ON FUNCTION qfilter_agg_remove_fixed(internal, anycompatible, bigint, double precision) IS 'qfilter_agg inverse transition (moving window frames)';
COMMENT ON FUNCTION qfilter_agg_final(internal) IS 'final function of the qfilter aggregates';
COMMENT ON FUNCTION qfilter_agg_combine(internal, internal) IS 'combine function of the qfilter aggregates';
COMMENT ON FUNCTION qfilter_agg_serialize(internal) IS 'serialize function of the qfilter aggregates';
COMMENT ON FUNCTION qfilter_agg_deserialize(bytea, internal) IS 'deserialize function of the qfilter aggregates';
COMMENT ON FUNCTION qfilter_union_agg_add(internal, qfilter) IS 'qfilter_union_agg transition';

CREATE AGGREGATE qfilter_agg(anycompatible) (
	SFUNC = qfilter_agg_add, STYPE = internal, SSPACE = 8192,
	FINALFUNC = qfilter_agg_final,
	COMBINEFUNC = qfilter_agg_combine,
	SERIALFUNC = qfilter_agg_serialize, DESERIALFUNC = qfilter_agg_deserialize,
	MSFUNC = qfilter_agg_add, MINVFUNC = qfilter_agg_remove, MSTYPE = internal,
	MFINALFUNC = qfilter_agg_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE qfilter_agg(anycompatible) IS 'filter sized for the values seen (with repeats), at false-positive rate 0.01';

CREATE AGGREGATE qfilter_agg(anycompatible, double precision) (
	SFUNC = qfilter_agg_add_fpr, STYPE = internal, SSPACE = 8192,
	FINALFUNC = qfilter_agg_final,
	COMBINEFUNC = qfilter_agg_combine,
	SERIALFUNC = qfilter_agg_serialize, DESERIALFUNC = qfilter_agg_deserialize,
	MSFUNC = qfilter_agg_add_fpr, MINVFUNC = qfilter_agg_remove_fpr, MSTYPE = internal,
	MFINALFUNC = qfilter_agg_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE qfilter_agg(anycompatible, double precision) IS 'filter sized for the values seen (with repeats), at the given false-positive rate';

CREATE AGGREGATE qfilter_agg(anycompatible, bigint, double precision) (
	SFUNC = qfilter_agg_add_fixed, STYPE = internal, SSPACE = 8192,
	FINALFUNC = qfilter_agg_final,
	COMBINEFUNC = qfilter_agg_combine,
	SERIALFUNC = qfilter_agg_serialize, DESERIALFUNC = qfilter_agg_deserialize,
	MSFUNC = qfilter_agg_add_fixed, MINVFUNC = qfilter_agg_remove_fixed, MSTYPE = internal,
	MFINALFUNC = qfilter_agg_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE qfilter_agg(anycompatible, bigint, double precision) IS 'filter of fixed capacity and false-positive rate, mergeable with others of its parameters';

CREATE AGGREGATE qfilter_union_agg(qfilter) (
	SFUNC = qfilter_union_agg_add, STYPE = internal, SSPACE = 65536,
	FINALFUNC = qfilter_agg_final,
	COMBINEFUNC = qfilter_agg_combine,
	SERIALFUNC = qfilter_agg_serialize, DESERIALFUNC = qfilter_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE qfilter_union_agg(qfilter) IS 'multiset sum of filters with the same parameters';

-- =====================================================================
-- The bloomfilter index: a filter PostgreSQL keeps current on every write
-- =====================================================================

CREATE FUNCTION bloomfilter_index_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION bloomfilter_index_handler(internal) IS 'handler of the bloomfilter index access method';
CREATE ACCESS METHOD bloomfilter TYPE INDEX HANDLER bloomfilter_index_handler;
COMMENT ON ACCESS METHOD bloomfilter IS 'Bloom filter of one key column, kept current on every insert; probed with bloom_index_contains';

-- One operator class for every non-array type: the index is never scanned,
-- so it needs no operators; keys are hashed by the extension's own rules.
CREATE OPERATOR CLASS bloomfilter_ops DEFAULT FOR TYPE anynonarray USING bloomfilter AS
	STORAGE anynonarray;
COMMENT ON OPERATOR CLASS bloomfilter_ops USING bloomfilter IS 'keys of every non-array type, hashed as bloom hashes them';
COMMENT ON OPERATOR FAMILY bloomfilter_ops USING bloomfilter IS 'keys of every non-array type, hashed as bloom hashes them';

-- Volatile: they read the index as it is now, not as of a snapshot.
-- Parallel restricted: the leader runs them, so that an index on a
-- temporary table answers under a parallel plan (workers cannot read the
-- leader's temporary buffers) and one copy of the index serves a query.
CREATE FUNCTION bloom_index_contains(index regclass, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_contains(regclass, anycompatible) IS 'false if no row of the indexed table has the key; true if one may';
CREATE FUNCTION bloom_index_filter(index regclass) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_filter(regclass) IS 'the index as a bloom value, with the same answers';
CREATE FUNCTION bloom_index_info(index regclass,
	OUT capacity bigint,
	OUT target_fpr double precision,
	OUT inserted bigint,
	OUT fill_ratio double precision,
	OUT estimated_fpr double precision,
	OUT segments integer,
	OUT bytes bigint,
	OUT deleted_since_build bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_info(regclass) IS 'size, fill and estimates of a bloomfilter index, and rows deleted since its build';
CREATE FUNCTION bloom_index_verify(index regclass) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_index_verify(regclass) IS 'checks that every live row''s key is in the index; returns the keys checked';

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
