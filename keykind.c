/*-------------------------------------------------------------------------
 *
 * keykind.c
 *	  Key kinds and canonical hashing: which SQL values a filter accepts,
 *	  and the one routine that turns a value into the hash a filter stores.
 *
 * Values equal in SQL must hash equal, or a filter built from one type would
 * answer "absent" for an equal value of another: a false negative.  So every
 * value is reduced to canonical bytes first: int2/int4/int8 and integral
 * numerics as one little-endian int64, other numerics as their normalised
 * text ("0.50" and "0.5" alike), floats with -0 = 0 and one NaN, bpchar
 * without trailing blanks.  Types with no such rule go through their own
 * extended hash function.  A filter remembers the kind of value it holds
 * (BfKeyKind, with a tag naming the type for kind "other") and refuses
 * values of another kind rather than answer "absent" for them.
 *
 * Refused outright: values whose hash follows object identifiers that a
 * dump and restore renumber, strings under nondeterministic collations, and
 * bloom values themselves (a filter is never a key; combining filters is
 * what | and bloom_union_agg are for).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

#include "keykind.h"

/* The kind's name, as bloom_info and error messages show it. */
const char *
KeyKindName(uint8 kind)
{
	switch ((BfKeyKind) kind)
	{
		case BF_KIND_NONE:
			return "none";
		case BF_KIND_NUMBER:
			return "number";
		case BF_KIND_FLOAT:
			return "float";
		case BF_KIND_TEXT:
			return "text";
		case BF_KIND_BYTEA:
			return "bytea";
		case BF_KIND_UUID:
			return "uuid";
		case BF_KIND_BOOL:
			return "boolean";
		case BF_KIND_DATE:
			return "date";
		case BF_KIND_TIMESTAMP:
			return "timestamp";
		case BF_KIND_TIMESTAMPTZ:
			return "timestamptz";
		case BF_KIND_OTHER:
			return "other";
	}
	return "unknown";
}

/* The SQL type to cast to when a value does not match a filter's kind. */
static const char *
KeyKindCastHint(uint8 kind)
{
	switch ((BfKeyKind) kind)
	{
		case BF_KIND_NUMBER:
			return "bigint or numeric";
		case BF_KIND_FLOAT:
			return "double precision";
		case BF_KIND_BOOL:
			return "boolean";
		case BF_KIND_OTHER:
			return "the type the filter was built from";
		default:
			return KeyKindName(kind);
	}
}

static BfKeyKind
BuiltinKeyKind(Oid basetype)
{
	switch (basetype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
			return BF_KIND_NUMBER;
		case FLOAT4OID:
		case FLOAT8OID:
			return BF_KIND_FLOAT;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
			return BF_KIND_TEXT;
		case BYTEAOID:
			return BF_KIND_BYTEA;
		case UUIDOID:
			return BF_KIND_UUID;
		case BOOLOID:
			return BF_KIND_BOOL;
		case DATEOID:
			return BF_KIND_DATE;
		case TIMESTAMPOID:
			return BF_KIND_TIMESTAMP;
		case TIMESTAMPTZOID:
			return BF_KIND_TIMESTAMPTZ;
		default:
			return BF_KIND_OTHER;
	}
}

/*
 * The type's schema-qualified name: stable across a dump and restore, unlike
 * its OID, and different for same-named types of different schemas.
 */
static char *
TypeNameOf(Oid typid)
{
	HeapTuple	tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type type;
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for type %u", typid);
	type = (Form_pg_type) GETSTRUCT(tuple);
	name = psprintf("%s.%s", get_namespace_name(type->typnamespace),
					NameStr(type->typname));
	ReleaseSysCache(tuple);
	return name;
}

/*
 * Whether a type's extended hash depends on OIDs that a dump and restore
 * renumber: enums (hashed by label OID) inside arrays, ranges and composites,
 * and the reg* types.
 */
static bool
HashDependsOnOids(Oid typid)
{
	Oid			inner;

	typid = getBaseType(typid);
	if (type_is_enum(typid))
		return true;
	switch (typid)
	{
		case OIDOID:
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCOLLATIONOID:
			return true;
	}
	if (OidIsValid(inner = get_element_type(typid)))
		return HashDependsOnOids(inner);
	if (type_is_range(typid))
		return HashDependsOnOids(get_range_subtype(typid));
#if PG_VERSION_NUM >= 140000
	if (type_is_multirange(typid))
		return HashDependsOnOids(get_multirange_range(typid));
#endif
	if (type_is_rowtype(typid) && typid != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(typid, -1);
		bool		depends = false;

		for (int i = 0; i < desc->natts && !depends; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				depends = HashDependsOnOids(TupleDescAttr(desc, i)->atttypid);
		ReleaseTupleDesc(desc);
		return depends;
	}
	return false;
}

/*
 * Whether typid is the bloom type: the type named "bloom" in the schema of
 * the extension's function being called (all of its objects share one).
 */
static bool
IsBloomType(Oid typid, FunctionCallInfo fcinfo)
{
	Oid			namespace = get_func_namespace(fcinfo->flinfo->fn_oid);

	return OidIsValid(namespace) &&
		typid == GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								 CStringGetDatum("bloom"),
								 ObjectIdGetDatum(namespace));
}

/*
 * Prepares hashing of values of type typid under collation.  Catalog
 * lookups happen here, once per call site, never per value.
 */
static void
KeyTypeSetup(KeyType *key, FunctionCallInfo fcinfo, Oid typid, Oid collation,
			 MemoryContext mcxt)
{
	Oid			basetype = getBaseType(typid);

	if (type_is_collatable(basetype) && OidIsValid(collation) &&
		!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters do not support nondeterministic collations"),
				 errdetail("Values equal under such a collation have different bytes, so a filter could not find them."),
				 errhint("Apply a deterministic collation to the value, for example COLLATE \"C\".")));

	if (IsBloomType(basetype, fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("a bloom filter cannot be a key of another bloom filter"),
				 errhint("To combine filters, use the | operator or bloom_union_agg.")));

	key->kind = BuiltinKeyKind(basetype);
	key->tag = 0;
	key->enum_label = type_is_enum(basetype);
	if (key->kind == BF_KIND_OTHER && !key->enum_label &&
		HashDependsOnOids(basetype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters cannot hold values of type %s",
						format_type_be(typid)),
				 errdetail("The type's hash depends on object identifiers, which change in a dump and restore, so a stored filter would miss its values."),
				 errhint("Cast the value to text.")));
	if (key->kind == BF_KIND_OTHER)
	{
		TypeCacheEntry *entry = lookup_type_cache(basetype,
												  TYPECACHE_HASH_EXTENDED_PROC);
		char	   *name = TypeNameOf(basetype);

		if (!OidIsValid(entry->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("bloom filters cannot hash values of type %s",
							format_type_be(typid)),
					 errdetail("The type has no extended hash function."),
					 errhint("Cast the value to text or another hashable type.")));
		fmgr_info_cxt(entry->hash_extended_proc, &key->extended_hash, mcxt);

		/* By name, so that the tag survives dump and restore. */
		key->tag = (uint32) bf_hash(name, strlen(name), 0) | 1;
	}
	key->basetype = basetype;
	key->collation = collation;
	key->typid = typid;
}

KeyType *
KeyTypeFor(KeyType *key, FunctionCallInfo fcinfo, Oid typid)
{
	if (key->typid != typid || key->collation != PG_GET_COLLATION())
		KeyTypeSetup(key, fcinfo, typid, PG_GET_COLLATION(),
					 fcinfo->flinfo->fn_mcxt);
	return key;
}

KeyType *
KeyTypeForArg(KeyType *key, FunctionCallInfo fcinfo, int argno)
{
	Oid			typid;

	/* An argument's type is fixed per call site: look it up once. */
	if (OidIsValid(key->typid) && key->collation == PG_GET_COLLATION())
		return key;
	typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of argument %d", argno + 1);
	return KeyTypeFor(key, fcinfo, typid);
}

/*
 * Integral numerics hash as the int64 they equal, so 42::numeric finds
 * 42::bigint; others hash as their normalised text ("0.5" for 0.50).
 */
static uint64
HashNumeric(Datum value, uint64 seed)
{
	char	   *text = numeric_normalize(DatumGetNumeric(value));
	uint64		hash;

	if (strchr(text, '.') == NULL && strspn(text, "-0123456789") == strlen(text))
	{
		char	   *end;
		long long	integer;

		errno = 0;
		integer = strtoll(text, &end, 10);
		if (errno == 0 && *end == '\0')
		{
			pfree(text);
			return HashInt64((int64) integer, seed);
		}
	}
	hash = bf_hash(text, strlen(text), seed);
	pfree(text);
	return hash;
}

/* -0 and 0 are equal in SQL, and so are all NaNs. */
static uint64
HashFloat(double value, uint64 seed)
{
	uint64		bits;

	if (value == 0.0)
		value = 0.0;
	if (isnan(value))
		bits = UINT64CONST(0x7FF8000000000000);
	else
		memcpy(&bits, &value, sizeof(bits));
	return HashInt64((int64) bits, seed);
}

/*
 * A string's bytes without trailing blanks.  bpchar compares ignoring them,
 * and varchar = bpchar compares as bpchar, so a string filter cannot keep
 * them: 'x '::varchar must find 'x'::char(3).  Strings that differ only in
 * trailing blanks thus share a key, which costs a false positive, never a
 * false negative.
 */
static uint64
HashString(const char *bytes, size_t len, uint64 seed)
{
	while (len > 0 && bytes[len - 1] == ' ')
		len--;
	return bf_hash(bytes, len, seed);
}

/* A varlena's bytes, without detoasting a short inline value. */
static uint64
HashVarlena(Datum value, uint64 seed, bool is_string)
{
	struct varlena *data = PG_DETOAST_DATUM_PACKED(value);
	const char *bytes = VARDATA_ANY(data);
	size_t		len = VARSIZE_ANY_EXHDR(data);
	uint64		hash;

	hash = is_string ? HashString(bytes, len, seed) : bf_hash(bytes, len, seed);
	if ((Pointer) data != DatumGetPointer(value))
		pfree(data);
	return hash;
}

/*
 * An enum's own hash is of its label's OID, which dump and restore change;
 * its label is what stays equal.
 */
static uint64
HashEnumLabel(Datum value, uint64 seed)
{
	char	   *label = DatumGetCString(DirectFunctionCall1(enum_out, value));
	uint64		hash = bf_hash(label, strlen(label), seed);

	pfree(label);
	return hash;
}

/* The one hashing routine: a SQL value's canonical bytes, hashed. */
uint64
KeyHash(const KeyType *key, Datum value, uint64 seed)
{
	switch (key->basetype)
	{
		case INT2OID:
			return HashInt64(DatumGetInt16(value), seed);
		case INT4OID:
			return HashInt64(DatumGetInt32(value), seed);
		case INT8OID:
			return HashInt64(DatumGetInt64(value), seed);
		case NUMERICOID:
			return HashNumeric(value, seed);
		case FLOAT4OID:
			return HashFloat(DatumGetFloat4(value), seed);
		case FLOAT8OID:
			return HashFloat(DatumGetFloat8(value), seed);
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return HashVarlena(value, seed, true);
		case BYTEAOID:
			return HashVarlena(value, seed, false);
		case NAMEOID:
			{
				const char *name = NameStr(*DatumGetName(value));

				return HashString(name, strlen(name), seed);
			}
		case UUIDOID:
			return bf_hash(DatumGetUUIDP(value)->data, UUID_LEN, seed);
		case BOOLOID:
			return HashInt64(DatumGetBool(value) ? 1 : 0, seed);
		case DATEOID:
			return HashInt64(DatumGetInt32(value), seed);
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return HashInt64(DatumGetInt64(value), seed);
		default:
			if (key->enum_label)
				return HashEnumLabel(value, seed);
			{
				Datum		h = FunctionCall2Coll((FmgrInfo *) &key->extended_hash,
												  key->collation, value,
												  Int64GetDatum(0));

				return HashInt64(DatumGetInt64(h), seed);
			}
	}
}

/*
 * Refuses a value whose kind differs from the filter's: answering "absent"
 * for it would be a false negative.  A filter with no values takes any kind.
 */
void
CheckKeyKind(const BfHeader *header, const KeyType *key)
{
	if (header->key_kind == BF_KIND_NONE ||
		(header->key_kind == key->kind && header->key_tag == key->tag))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("bloom filter holds values of kind %s, not %s",
					KeyKindName(header->key_kind), format_type_be(key->typid)),
			 errhint("Cast the value to %s.", KeyKindCastHint(header->key_kind))));
}
