/*-------------------------------------------------------------------------
 *
 * bloomfilter.c
 *	  SQL glue of the bloomfilter extension: the bloom type's I/O, the
 *	  canonical hashing of PostgreSQL values, functions, operators, the
 *	  aggregates, and the per-query caches that keep probes cheap.
 *
 * The bit-level work lives in bloom.c; this file decides which bytes of a
 * SQL value are hashed, turns the core's statuses into ereports, and owns
 * memory.  Functions appear in the order of bloomfilter--1.0.sql.
 *
 * Key kinds
 * ---------
 * Values equal in SQL must hash equal, or a filter built from one type would
 * answer "absent" for an equal value of another: a false negative.  So every
 * value is reduced to canonical bytes first: int2/int4/int8 and integral
 * numerics as one little-endian int64, other numerics as their normalised
 * text ("0.50" and "0.5" alike), floats with -0 = 0 and one NaN, bpchar
 * without trailing blanks.  Types with no such rule go through their own
 * extended hash function.  A filter remembers the kind of value it holds and
 * refuses values of another kind rather than answer "absent" for them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/base64.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "nodes/primnodes.h"
#include "port/pg_bswap.h"
#include "utils/array.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

#include "bloom_glue.h"

PG_MODULE_MAGIC;

#if PG_VERSION_NUM < 140000
#define VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer) ((toast_pointer).va_extsize)
#endif

/* Soft input errors (pg_input_is_valid) exist from PostgreSQL 16 on. */
#if PG_VERSION_NUM >= 160000
#define report_input_error(escontext, ...) errsave(escontext, __VA_ARGS__)
#else
#define report_input_error(escontext, ...) ereport(ERROR, __VA_ARGS__)
#endif

#define BLOOM_TEXT_PREFIX		"bloom:"
#define BLOOM_TEXT_PREFIX_LEN	(sizeof(BLOOM_TEXT_PREFIX) - 1)

/* A detoasted stored filter kept for the rest of the query. */
typedef struct FilterCache
{
	Oid			toastrelid;		/* identity of the stored value in filter */
	Oid			valueid;
	struct varlena *constant;	/* or the constant argument it came from */
	Bloom	   *filter;
	bool		owned;			/* filter is a copy in fn_mcxt */
	bool		kind_checked;	/* the key type fits filter's kind */
	BfHeader	header;			/* filter's, decoded */
	Oid			sliced_toastrelid;	/* the value last probed by slices */
	Oid			sliced_valueid;
} FilterCache;

/* Everything one call site of a function remembers between calls. */
typedef struct CallCache
{
	KeyType		key;
	FilterCache stored;

	/* The last header a probe decoded, with the bytes it came from. */
	bool		have_header;
	size_t		header_value_len;
	uint8		header_bytes[BF_HEADER_SIZE];
	BfHeader	header;
} CallCache;

static CallCache *
GetCallCache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallCache));
	return (CallCache *) fcinfo->flinfo->fn_extra;
}

/* ---------------------------------------------------------------------
 * Values: allocation, headers, the one input validation path
 * ---------------------------------------------------------------------
 */

/* A new, empty filter with the given header, in the current context. */
Bloom *
BloomAlloc(const BfHeader *header)
{
	size_t		len = bf_value_bytes(header->nblocks);
	Bloom	   *bloom = (Bloom *) palloc(VARHDRSZ + len);

	SET_VARSIZE(bloom, VARHDRSZ + len);
	bf_init(BloomData(bloom), header);
	return bloom;
}

/*
 * Decodes the header of a value already in the database.  Input paths
 * validated it in full, so a failure here means on-disk corruption.
 */
void
BloomReadHeader(Bloom *bloom, BfHeader *header)
{
	BfStatus	status = bf_read_header(BloomData(bloom), BloomDataLen(bloom),
										header);

	if (status == BF_OK && BloomDataLen(bloom) != bf_value_bytes(header->nblocks))
		status = BF_ERR_LENGTH;
	if (status != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bloom value is corrupted"),
				 errdetail("%s.", bf_status_message(status))));
}

/* Rewrites the header after the glue changed a field (kind, count). */
void
BloomWriteHeader(Bloom *bloom, const BfHeader *header)
{
	bf_write_header(BloomData(bloom), header);
}

/*
 * The glue's single entry to the core's validator, used by text input,
 * binary receive, the bytea cast and aggregate deserialisation.  message is
 * the primary error message, followed by the start of shown (the text input)
 * if given; the detail says what is wrong.  Formatted only on failure.  Returns NULL
 * after a soft error.
 */
Bloom *
BloomFromBytes(const uint8 *bytes, size_t len, int sqlstate,
			   Node *escontext, const char *message, const char *shown)
{
	BfHeader	header;
	BfStatus	status;
	Bloom	   *bloom;

	status = len > BF_MAX_VALUE_BYTES ? BF_ERR_TOO_LARGE
		: bf_validate(bytes, len, &header);
	if (status != BF_OK)
	{
		if (shown != NULL)
			report_input_error(escontext,
							   (errcode(sqlstate),
								errmsg_internal("%s: \"%.40s%s\"", message, shown,
												strlen(shown) > 40 ? "..." : ""),
								errdetail("%s.", bf_status_message(status))));
		else
			report_input_error(escontext,
							   (errcode(sqlstate),
								errmsg_internal("%s", message),
								errdetail("%s.", bf_status_message(status))));
		return NULL;
	}
	bloom = (Bloom *) palloc(VARHDRSZ + len);
	SET_VARSIZE(bloom, VARHDRSZ + len);
	memcpy(BloomData(bloom), bytes, len);
	return bloom;
}

/* Raises the error for a failed bf_size_for. */
static void
ReportSizingError(BfStatus status, int64 capacity, double fpr,
					const BfSizing *sizing)
{
	if (status == BF_ERR_CAPACITY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter capacity must be at least 1"),
				 errdetail("Capacity was " INT64_FORMAT ".", capacity)));
	if (status == BF_ERR_FPR)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter false-positive rate must be greater than 0 and at most 0.5"),
				 errdetail("The rate was %g.", fpr)));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bloom filter for " INT64_FORMAT " values at false-positive rate %g would exceed 1 GB",
					capacity, fpr),
			 errdetail("At that rate at most " UINT64_FORMAT " values fit.",
					   sizing->max_capacity),
			 errhint("Use a higher false-positive rate, or split the values over several filters.")));
}

/*
 * Sizes a filter for (capacity, fpr), raising the user-facing error on bad
 * parameters.  Every constructor goes through here.
 */
void
SizeFilter(int64 capacity, double fpr, BfHeader *header)
{
	BfSizing	sizing;
	BfStatus	status;

	status = capacity < 1 ? BF_ERR_CAPACITY
		: bf_size_for((uint64) capacity, fpr, &sizing);
	if (status != BF_OK)
		ReportSizingError(status, capacity, fpr, &sizing);

	memset(header, 0, sizeof(*header));
	header->version = BF_FORMAT_VERSION;
	header->layout = BF_LAYOUT_BLOCKED512;
	header->k = sizing.k;
	header->key_kind = BF_KIND_NONE;
	header->nblocks = sizing.nblocks;
	header->capacity = (uint64) capacity;
	header->fpr = fpr;
}

/* ---------------------------------------------------------------------
 * Key kinds and canonical hashing
 * ---------------------------------------------------------------------
 */

static const char *
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
 * Prepares hashing of values of type typid under collation.  Catalog
 * lookups happen here, once per call site, never per value.
 */
static void
KeyTypeSetup(KeyType *key, Oid typid, Oid collation, MemoryContext mcxt)
{
	Oid			basetype = getBaseType(typid);

	if (type_is_collatable(basetype) && OidIsValid(collation) &&
		!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters do not support nondeterministic collations"),
				 errdetail("Values equal under such a collation have different bytes, so a filter could not find them."),
				 errhint("Apply a deterministic collation to the value, for example COLLATE \"C\".")));

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

/* Looks up the setup for this call site, doing it on the first call. */
static KeyType *
KeyTypeFor(FunctionCallInfo fcinfo, Oid typid)
{
	KeyType    *key = &GetCallCache(fcinfo)->key;

	if (key->typid != typid || key->collation != PG_GET_COLLATION())
		KeyTypeSetup(key, typid, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return key;
}

KeyType *
KeyTypeOfArg(FunctionCallInfo fcinfo, int argno)
{
	KeyType    *key = &GetCallCache(fcinfo)->key;
	Oid			typid;

	/* An argument's type is fixed per call site: look it up once. */
	if (OidIsValid(key->typid) && key->collation == PG_GET_COLLATION())
		return key;
	typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of argument %d", argno + 1);
	return KeyTypeFor(fcinfo, typid);
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
static void
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

/* Adds one value to a filter the caller owns, updating kind and count. */
static void
BloomAddValue(Bloom *bloom, BfHeader *header, const KeyType *key, Datum value)
{
	uint64		hash = KeyHash(key, value, header->seed);

	bf_add_hashes(bf_bits(BloomData(bloom)), header->nblocks, header->k,
				  &hash, 1);
	header->key_kind = key->kind;
	header->key_tag = key->tag;
	header->inserted = bf_count_add(header->inserted, 1);
}

static bool
BloomTestValue(Bloom *bloom, const BfHeader *header, const KeyType *key,
				 Datum value)
{
	if (header->key_kind == BF_KIND_NONE)
		return false;			/* nothing was ever added */
	return bf_test_hash(bf_bits(BloomData(bloom)), header->nblocks, header->k,
						KeyHash(key, value, header->seed));
}

/* ---------------------------------------------------------------------
 * Filters arriving as arguments
 * ---------------------------------------------------------------------
 */

/* Whether a TOAST pointer names the same stored value as (relid, valueid). */
static bool
SameStoredValue(const struct varatt_external *pointer, Oid relid, Oid valueid)
{
	return pointer->va_toastrelid == relid && pointer->va_valueid == valueid;
}

/*
 * The decoded header of a probed filter.  A scan over a join can probe the
 * same filter on many rows; comparing its 56 header bytes with the last ones
 * decoded is cheaper than decoding and checksumming them again, and unlike a
 * pointer comparison it stays right when another filter lands at the same
 * address.
 */
static void
ProbeHeader(FunctionCallInfo fcinfo, Bloom *bloom, BfHeader *header)
{
	CallCache  *cache = GetCallCache(fcinfo);

	if (cache->have_header && BloomDataLen(bloom) == cache->header_value_len &&
		BloomDataLen(bloom) >= BF_HEADER_SIZE &&
		memcmp(BloomData(bloom), cache->header_bytes, BF_HEADER_SIZE) == 0)
	{
		*header = cache->header;
		return;
	}
	BloomReadHeader(bloom, header);
	memcpy(cache->header_bytes, BloomData(bloom), BF_HEADER_SIZE);
	cache->header_value_len = BloomDataLen(bloom);
	cache->header = *header;
	cache->have_header = true;
}

/*
 * Whether the argument is a Const of the expression: the same value at the
 * same address for as long as this call site lives.  (A PL/pgSQL variable is
 * an external Param, "stable" to the planner, but its memory is freed and
 * reused as it is reassigned, so only a Const may be recognised by address.)
 */
static bool
ArgIsConst(FmgrInfo *flinfo, int argno)
{
	Node	   *expr = flinfo->fn_expr;
	List	   *args;

	if (expr == NULL)
		return false;
	if (IsA(expr, FuncExpr))
		args = ((FuncExpr *) expr)->args;
	else if (IsA(expr, OpExpr))
		args = ((OpExpr *) expr)->args;
	else
		return false;
	return argno < list_length(args) && IsA(list_nth(args, argno), Const);
}

/*
 * The filter argument of a probe, with its decoded header.
 *
 * A filter read from a table arrives as a TOAST pointer on every row;
 * detoasting it per row would copy megabytes per row, so the detoasted copy
 * and its header are kept for the rest of the query, keyed by the TOAST
 * value's identity (which also keeps a join over many stored filters
 * correct).  A constant filter (a literal) is decoded once too.  Other
 * inline values are used in place, and their header is decoded unless its
 * bytes match the last one's.
 *
 * XXX: a cache can outlive a query (PL/pgSQL keeps expression state for the
 * transaction), but a TOAST value never changes, and its id could only name
 * another value after the OID counter wrapped around.
 */
static Bloom *
ProbeFilterArg(FunctionCallInfo fcinfo, int argno, BfHeader *header)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	FilterCache *stored = &GetCallCache(fcinfo)->stored;
	struct varatt_external pointer = {0};
	bool		is_stored = VARATT_IS_EXTERNAL_ONDISK(raw);
	Bloom	   *filter;
	BfHeader	decoded;
	MemoryContext old;

	if (is_stored)
	{
		VARATT_EXTERNAL_GET_POINTER(pointer, raw);
		if (stored->filter != NULL &&
			SameStoredValue(&pointer, stored->toastrelid, stored->valueid))
		{
			*header = stored->header;
			return stored->filter;
		}
	}
	else if (ArgIsConst(fcinfo->flinfo, argno))
	{
		if (stored->filter != NULL && stored->constant == raw)
		{
			*header = stored->header;
			return stored->filter;
		}
	}
	else
	{
		Bloom	   *bloom = DatumGetBloomP(PointerGetDatum(raw));

		ProbeHeader(fcinfo, bloom, header);
		return bloom;
	}

	/* Decode and validate first: a failure must leave no half-made cache. */
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	filter = DatumGetBloomP(PointerGetDatum(raw));
	MemoryContextSwitchTo(old);
	BloomReadHeader(filter, &decoded);

	if (stored->filter != NULL && stored->owned)
		pfree(stored->filter);
	stored->filter = filter;
	stored->owned = (Pointer) filter != (Pointer) raw;
	stored->header = decoded;
	stored->kind_checked = false;
	stored->toastrelid = is_stored ? pointer.va_toastrelid : InvalidOid;
	stored->valueid = is_stored ? pointer.va_valueid : InvalidOid;
	stored->constant = is_stored ? NULL : raw;
	*header = decoded;
	return filter;
}

/*
 * The filter this call site cached, if the argument is that same filter: the
 * same TOAST value, or the same constant.  Per row, so kept cheap.
 */
static Bloom *
CachedFilterFor(FunctionCallInfo fcinfo, int argno)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	FilterCache *stored = &GetCallCache(fcinfo)->stored;
	struct varatt_external pointer;

	if (stored->filter == NULL)
		return NULL;
	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return raw == stored->constant ? stored->filter : NULL;
	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	return SameStoredValue(&pointer, stored->toastrelid, stored->valueid) ?
		stored->filter : NULL;
}

/*
 * Probes a stored filter by fetching only its header and the one block the
 * value maps to: the cache-penetration guard probes a multi-megabyte filter
 * once per statement, and must not read all of it.  Applies to the first
 * probe of an uncompressed TOASTed value at this call site; a second probe of
 * the same value means a scan, which is cheaper with one full detoast, so
 * this returns false and leaves it to ProbeFilterArg.
 */
static bool
ProbeStoredSlices(FunctionCallInfo fcinfo, int filter_arg, KeyType *key,
				  Datum value, bool *result)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(filter_arg);
	struct varatt_external pointer;
	FilterCache *stored;
	struct varlena *slice;
	BfHeader	header;
	BfStatus	status;
	uint64		hash;
	uint32		block;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	if (VARATT_EXTERNAL_IS_COMPRESSED(pointer))
		return false;
	stored = &GetCallCache(fcinfo)->stored;
	if ((stored->filter != NULL &&
		 SameStoredValue(&pointer, stored->toastrelid, stored->valueid)) ||
		SameStoredValue(&pointer, stored->sliced_toastrelid, stored->sliced_valueid))
		return false;
	stored->sliced_toastrelid = pointer.va_toastrelid;
	stored->sliced_valueid = pointer.va_valueid;

	slice = detoast_attr_slice(raw, 0, BF_HEADER_SIZE);
	status = bf_read_header(BloomData(slice), BloomDataLen(slice), &header);
	pfree(slice);
	if (status == BF_OK &&
		VARATT_EXTERNAL_GET_EXTSIZE(pointer) != bf_value_bytes(header.nblocks))
		status = BF_ERR_LENGTH;
	if (status != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bloom value is corrupted"),
				 errdetail("%s.", bf_status_message(status))));

	CheckKeyKind(&header, key);
	if (header.key_kind == BF_KIND_NONE)
	{
		*result = false;
		return true;
	}
	hash = KeyHash(key, value, header.seed);
	block = bf_block_of(hash, header.nblocks);
	slice = detoast_attr_slice(raw, BF_HEADER_SIZE + (int32) block * BF_BLOCK_BYTES,
							   BF_BLOCK_BYTES);
	if (BloomDataLen(slice) != BF_BLOCK_BYTES)
		elog(ERROR, "short slice of a stored bloom value");
	*result = bf_block_test(BloomData(slice), hash, header.k);
	pfree(slice);
	return true;
}

/* ---------------------------------------------------------------------
 * Type I/O
 * ---------------------------------------------------------------------
 */

/*
 * Base64 sizes, computed in size_t: pg_b64_enc_len and pg_b64_dec_len work
 * in int and overflow for values over 512 MB.
 */
static size_t
Base64EncodedLength(size_t bytes)
{
	return (bytes + 2) / 3 * 4;
}

static size_t
Base64DecodedRoom(size_t encoded)
{
	return encoded / 4 * 3 + 3;
}

PG_FUNCTION_INFO_V1(bloom_in);
/* Text input: "bloom:" followed by the base64 of the serialised value. */
Datum
bloom_in(PG_FUNCTION_ARGS)
{
	char	   *input = PG_GETARG_CSTRING(0);
	size_t		input_len = strlen(input);
	const char *encoded = input + BLOOM_TEXT_PREFIX_LEN;
	int			encoded_len;
	char	   *decoded;
	int			decoded_len;
	Bloom	   *bloom;

	if (input_len < BLOOM_TEXT_PREFIX_LEN ||
		strncmp(input, BLOOM_TEXT_PREFIX, BLOOM_TEXT_PREFIX_LEN) != 0)
	{
		report_input_error(fcinfo->context,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type bloom: \"%.40s%s\"",
								   input, input_len > 40 ? "..." : ""),
							errdetail("A bloom value starts with \"%s\".",
									  BLOOM_TEXT_PREFIX)));
		PG_RETURN_NULL();
	}
	if (input_len - BLOOM_TEXT_PREFIX_LEN > Base64EncodedLength(BF_MAX_VALUE_BYTES))
	{
		report_input_error(fcinfo->context,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type bloom: \"%.40s...\"",
								   input),
							errdetail("The value is longer than any bloom filter.")));
		PG_RETURN_NULL();
	}

	encoded_len = (int) (input_len - BLOOM_TEXT_PREFIX_LEN);
	decoded = palloc(Base64DecodedRoom(encoded_len));
	decoded_len = pg_b64_decode(encoded, encoded_len, decoded,
								(int) Base64DecodedRoom(encoded_len));
	if (decoded_len < 0)
	{
		report_input_error(fcinfo->context,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type bloom: \"%.40s%s\"",
								   input, input_len > 40 ? "..." : ""),
							errdetail("The text after \"%s\" is not valid base64.",
									  BLOOM_TEXT_PREFIX)));
		PG_RETURN_NULL();
	}

	bloom = BloomFromBytes((uint8 *) decoded, decoded_len,
						   ERRCODE_INVALID_TEXT_REPRESENTATION, fcinfo->context,
						   "invalid input syntax for type bloom", input);
	pfree(decoded);
	if (bloom == NULL)
		PG_RETURN_NULL();
	PG_RETURN_BLOOM_P(bloom);
}

PG_FUNCTION_INFO_V1(bloom_out);
/* Text output: the exact inverse of bloom_in. */
Datum
bloom_out(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	size_t		len = BloomDataLen(bloom);
	size_t		encoded_max;
	char	   *text;
	int			encoded_len;

	encoded_max = BLOOM_TEXT_PREFIX_LEN + Base64EncodedLength(len) + 1;
	if (encoded_max > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloom value of %zu bytes is too large for text output", len),
				 errhint("Use binary COPY or a cast to bytea.")));

	text = palloc(encoded_max);
	memcpy(text, BLOOM_TEXT_PREFIX, BLOOM_TEXT_PREFIX_LEN);
	encoded_len = pg_b64_encode((const char *) BloomData(bloom), (int) len,
								text + BLOOM_TEXT_PREFIX_LEN,
								(int) (encoded_max - BLOOM_TEXT_PREFIX_LEN));
	if (encoded_len < 0)
		elog(ERROR, "could not encode bloom value as base64");
	text[BLOOM_TEXT_PREFIX_LEN + encoded_len] = '\0';
	PG_RETURN_CSTRING(text);
}

PG_FUNCTION_INFO_V1(bloom_recv);
/* Binary input: the serialised value as is, validated. */
Datum
bloom_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	Bloom	   *bloom;

	bloom = BloomFromBytes((const uint8 *) buf->data + buf->cursor, len,
						   ERRCODE_INVALID_BINARY_REPRESENTATION, NULL,
						   "invalid external binary representation for type bloom", NULL);
	buf->cursor = buf->len;
	PG_RETURN_BLOOM_P(bloom);
}

PG_FUNCTION_INFO_V1(bloom_send);
/* Binary output: the serialised value. */
Datum
bloom_send(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) BloomData(bloom), BloomDataLen(bloom));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

PG_FUNCTION_INFO_V1(bloom_from_bytea);
/* bytea::bloom, validated like every other input. */
Datum
bloom_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_BLOOM_P(BloomFromBytes((const uint8 *) VARDATA_ANY(raw),
									   VARSIZE_ANY_EXHDR(raw),
									   ERRCODE_INVALID_BINARY_REPRESENTATION,
									   NULL, "invalid bytea value for type bloom", NULL));
}

/* ---------------------------------------------------------------------
 * Comparison: equal means the same parameters, counters and bits
 * ---------------------------------------------------------------------
 */

static int
BloomCompare(Bloom *a, Bloom *b)
{
	size_t		len_a = BloomDataLen(a);
	size_t		len_b = BloomDataLen(b);
	int			order = memcmp(BloomData(a), BloomData(b), Min(len_a, len_b));

	if (order != 0)
		return order;
	return len_a < len_b ? -1 : (len_a > len_b ? 1 : 0);
}

PG_FUNCTION_INFO_V1(bloom_eq);
/* bloom = bloom */
Datum
bloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) == 0);
}

PG_FUNCTION_INFO_V1(bloom_ne);
/* bloom <> bloom */
Datum
bloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) != 0);
}

/* ---------------------------------------------------------------------
 * Construction, adding and probing
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(bloom_empty);
/* bloom_empty(capacity, fpr): an empty filter sized for capacity values. */
Datum
bloom_empty(PG_FUNCTION_ARGS)
{
	BfHeader	header;

	SizeFilter(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1), &header);
	PG_RETURN_BLOOM_P(BloomAlloc(&header));
}

PG_FUNCTION_INFO_V1(bloom_add);
/*
 * bloom_add(filter, value): a copy of filter with value added.  Not STRICT:
 * adding NULL returns the filter unchanged instead of losing it.
 */
Datum
bloom_add(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom;
	BfHeader	header;
	KeyType    *key;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	key = KeyTypeOfArg(fcinfo, 1);
	bloom = PG_GETARG_BLOOM_P_COPY(0);
	BloomReadHeader(bloom, &header);
	CheckKeyKind(&header, key);
	BloomAddValue(bloom, &header, key, PG_GETARG_DATUM(1));
	BloomWriteHeader(bloom, &header);
	PG_RETURN_BLOOM_P(bloom);
}

/* Shared by bloom_contains and the commuted form behind <@. */
static bool
ProbeOne(FunctionCallInfo fcinfo, int filter_arg, int value_arg)
{
	CallCache  *cache = GetCallCache(fcinfo);
	Datum		value = PG_GETARG_DATUM(value_arg);
	KeyType    *key;
	Bloom	   *bloom;
	BfHeader	header;
	bool		result;

	/* A scan's every row after the first: nothing to look up or check. */
	bloom = CachedFilterFor(fcinfo, filter_arg);
	if (bloom != NULL && cache->stored.kind_checked &&
		cache->key.collation == PG_GET_COLLATION())
		return BloomTestValue(bloom, &cache->stored.header, &cache->key, value);

	key = KeyTypeOfArg(fcinfo, value_arg);
	if (ProbeStoredSlices(fcinfo, filter_arg, key, value, &result))
		return result;
	bloom = ProbeFilterArg(fcinfo, filter_arg, &header);
	CheckKeyKind(&header, key);
	cache->stored.kind_checked = (bloom == cache->stored.filter);
	return BloomTestValue(bloom, &header, key, value);
}

PG_FUNCTION_INFO_V1(bloom_contains);
/* bloom_contains(filter, value), also filter @> value */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeOne(fcinfo, 0, 1));
}

PG_FUNCTION_INFO_V1(bloom_contained_by);
/* value <@ filter */
Datum
bloom_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeOne(fcinfo, 1, 0));
}

/* ---------------------------------------------------------------------
 * Batch forms over arrays
 * ---------------------------------------------------------------------
 */

static KeyType *
KeyTypeOfArray(FunctionCallInfo fcinfo, ArrayType *array)
{
	return KeyTypeFor(fcinfo, ARR_ELEMTYPE(array));
}

PG_FUNCTION_INFO_V1(bloom_add_all);
/*
 * bloom_add_all(filter, values[]): one copy of the filter for all values,
 * where a loop of bloom_add copies it once per value.  Not STRICT for the
 * same reason as bloom_add; NULL elements are skipped.
 */
Datum
bloom_add_all(PG_FUNCTION_ARGS)
{
	ArrayType  *array;
	KeyType    *key;
	Bloom	   *bloom;
	BfHeader	header;
	ArrayIterator iterator;
	Datum		value;
	bool		isnull;
	uint64		pending[256];
	int			npending = 0;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	array = PG_GETARG_ARRAYTYPE_P(1);
	key = KeyTypeOfArray(fcinfo, array);
	bloom = PG_GETARG_BLOOM_P_COPY(0);
	BloomReadHeader(bloom, &header);
	CheckKeyKind(&header, key);

	/* Hashes go in batches, so the core can prefetch their blocks. */
	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &value, &isnull))
	{
		if (isnull)
			continue;
		pending[npending++] = KeyHash(key, value, header.seed);
		header.inserted = bf_count_add(header.inserted, 1);
		if (npending == lengthof(pending))
		{
			bf_add_hashes(bf_bits(BloomData(bloom)), header.nblocks, header.k,
						  pending, npending);
			npending = 0;
		}
	}
	array_free_iterator(iterator);
	bf_add_hashes(bf_bits(BloomData(bloom)), header.nblocks, header.k,
				  pending, npending);
	if (header.inserted > 0)
	{
		header.key_kind = key->kind;
		header.key_tag = key->tag;
	}
	BloomWriteHeader(bloom, &header);
	PG_RETURN_BLOOM_P(bloom);
}

/*
 * Probes every non-NULL element; stops at the first answer equal to
 * stop_on.  Returns NULL when no element decided it and some were NULL, as
 * x = ALL/ANY (array) do.
 */
static Datum
ProbeArray(FunctionCallInfo fcinfo, bool stop_on)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(1);
	KeyType    *key = KeyTypeOfArray(fcinfo, array);
	BfHeader	header;
	Bloom	   *bloom = ProbeFilterArg(fcinfo, 0, &header);
	ArrayIterator iterator;
	Datum		value;
	bool		isnull;
	bool		saw_null = false;
	bool		decided = false;

	CheckKeyKind(&header, key);
	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &value, &isnull))
	{
		if (isnull)
			saw_null = true;
		else if (BloomTestValue(bloom, &header, key, value) == stop_on)
		{
			decided = true;
			break;
		}
	}
	array_free_iterator(iterator);
	if (!decided && saw_null)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(decided ? stop_on : !stop_on);
}

PG_FUNCTION_INFO_V1(bloom_contains_all);
/* bloom_contains_all(filter, values[]): every value may be present. */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	return ProbeArray(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bloom_contains_any);
/* bloom_contains_any(filter, values[]): some value may be present. */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	return ProbeArray(fcinfo, true);
}

/* ---------------------------------------------------------------------
 * Union and intersection
 * ---------------------------------------------------------------------
 */

static void
DescribeParameters(StringInfo out, const BfHeader *h)
{
	appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, bits " UINT64_FORMAT
					 ", k %d, seed " UINT64_FORMAT ", layout %d, key kind %s)",
					 h->capacity, h->fpr, (uint64) h->nblocks * BF_BLOCK_BITS,
					 h->k, h->seed, h->layout, KeyKindName(h->key_kind));
}

/* Raises the error for filters that cannot be combined. */
static void
CheckCompatible(const BfHeader *a, const BfHeader *b, const char *operation)
{
	StringInfoData detail;

	if (bf_compatible(a, b))
		return;
	initStringInfo(&detail);
	appendStringInfoString(&detail, "First filter ");
	DescribeParameters(&detail, a);
	appendStringInfoString(&detail, ", second filter ");
	DescribeParameters(&detail, b);
	appendStringInfoChar(&detail, '.');
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("cannot compute the %s of bloom filters with different parameters",
					operation),
			 errdetail_internal("%s", detail.data),
			 errhint("Build every filter that will be combined with the same capacity and false-positive rate.")));
}

/*
 * Combines src into dst (which the caller owns) in place; the one routine
 * behind the functions, operators and aggregates.
 */
void
BloomCombineInto(Bloom *dst, Bloom *src, bool is_union)
{
	BfHeader	d;
	BfHeader	s;
	size_t		nbytes;

	BloomReadHeader(dst, &d);
	BloomReadHeader(src, &s);
	CheckCompatible(&d, &s, is_union ? "union" : "intersection");
	nbytes = (size_t) d.nblocks * BF_BLOCK_BYTES;

	if (is_union)
	{
		bf_union_bits(bf_bits(BloomData(dst)), bf_bits(BloomData(src)), nbytes);
		d.inserted = bf_count_add(d.inserted, s.inserted);
		if (d.key_kind == BF_KIND_NONE)
		{
			d.key_kind = s.key_kind;
			d.key_tag = s.key_tag;
		}
	}
	else
	{
		bf_intersect_bits(bf_bits(BloomData(dst)), bf_bits(BloomData(src)), nbytes);
		d.inserted = Min(d.inserted, s.inserted);
		if (s.key_kind == BF_KIND_NONE)
		{
			/* intersecting with an empty filter leaves nothing */
			d.key_kind = BF_KIND_NONE;
			d.key_tag = 0;
		}
	}
	BloomWriteHeader(dst, &d);
}

/* Not STRICT: a NULL side is treated as absent, as the aggregates do. */
static Datum
CombineTwo(FunctionCallInfo fcinfo, bool is_union)
{
	Bloom	   *result;

	if (PG_ARGISNULL(0) && PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(0))
		PG_RETURN_DATUM(PG_GETARG_DATUM(1));

	result = PG_GETARG_BLOOM_P_COPY(0);
	BloomCombineInto(result, PG_GETARG_BLOOM_P(1), is_union);
	PG_RETURN_BLOOM_P(result);
}

PG_FUNCTION_INFO_V1(bloom_union);
/* bloom_union(a, b), also a | b */
Datum
bloom_union(PG_FUNCTION_ARGS)
{
	return CombineTwo(fcinfo, true);
}

PG_FUNCTION_INFO_V1(bloom_intersection);
/* bloom_intersection(a, b), also a & b */
Datum
bloom_intersection(PG_FUNCTION_ARGS)
{
	return CombineTwo(fcinfo, false);
}

/* ---------------------------------------------------------------------
 * Inspection
 * ---------------------------------------------------------------------
 */

static int64
ClampToInt64(uint64 value)
{
	return value > (uint64) PG_INT64_MAX ? PG_INT64_MAX : (int64) value;
}

PG_FUNCTION_INFO_V1(bloom_info);
/* bloom_info(filter): one row describing the filter. */
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;
	TupleDesc	tupdesc;
	Datum		values[14];
	bool		nulls[14] = {0};
	uint64		bits;
	uint64		bits_set;
	size_t		nbytes;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	BloomReadHeader(bloom, &h);
	nbytes = (size_t) h.nblocks * BF_BLOCK_BYTES;
	bits = (uint64) h.nblocks * BF_BLOCK_BITS;
	bits_set = bf_popcount(bf_bits(BloomData(bloom)), nbytes);

	values[0] = Int32GetDatum(h.version);
	values[1] = CStringGetTextDatum("blocked512");
	values[2] = Int64GetDatum((int64) bits);
	values[3] = Int64GetDatum((int64) BloomDataLen(bloom));
	values[4] = Int32GetDatum(h.k);
	values[5] = Int64GetDatum(ClampToInt64(h.capacity));
	values[6] = Float8GetDatum(h.fpr);
	values[7] = Int64GetDatum(ClampToInt64(h.inserted));
	values[8] = Int64GetDatum((int64) bits_set);
	values[9] = Float8GetDatum((double) bits_set / (double) bits);
	values[10] = Float8GetDatum(bf_estimate_cardinality(h.nblocks, h.k, bits_set));
	values[11] = Float8GetDatum(bf_estimate_fpr(bf_bits(BloomData(bloom)),
												h.nblocks, h.k));
	values[12] = CStringGetTextDatum(KeyKindName(h.key_kind));
	values[13] = Int64GetDatum((int64) h.seed);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(bloom_cardinality);
/* bloom_cardinality(filter): distinct values estimated from the fill. */
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;

	BloomReadHeader(bloom, &h);
	PG_RETURN_FLOAT8(bf_estimate_cardinality(h.nblocks, h.k,
											 bf_popcount(bf_bits(BloomData(bloom)),
														 (size_t) h.nblocks * BF_BLOCK_BYTES)));
}

PG_FUNCTION_INFO_V1(bloom_fpr);
/* bloom_fpr(filter): this filter's false-positive rate for absent values. */
Datum
bloom_fpr(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;

	BloomReadHeader(bloom, &h);
	PG_RETURN_FLOAT8(bf_estimate_fpr(bf_bits(BloomData(bloom)), h.nblocks, h.k));
}

PG_FUNCTION_INFO_V1(bloom_params);
/* bloom_params(capacity, fpr): what bloom_empty would build. */
Datum
bloom_params(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	BfHeader	h;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	SizeFilter(capacity, PG_GETARG_FLOAT8(1), &h);
	values[0] = Int64GetDatum((int64) h.nblocks * BF_BLOCK_BITS);
	values[1] = Int64GetDatum((int64) bf_value_bytes(h.nblocks));
	values[2] = Int32GetDatum(h.k);
	values[3] = Float8GetDatum((double) h.nblocks * BF_BLOCK_BITS / (double) capacity);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------------------------------------------------------------------
 * B-tree and hash support, for GROUP BY, DISTINCT and UNION over filters
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(bloom_cmp);
/* Byte order of the serialised values: arbitrary but total and stable. */
Datum
bloom_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)));
}

PG_FUNCTION_INFO_V1(bloom_lt);
/* bloom < bloom */
Datum
bloom_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) < 0);
}

PG_FUNCTION_INFO_V1(bloom_le);
/* bloom <= bloom */
Datum
bloom_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) <= 0);
}

PG_FUNCTION_INFO_V1(bloom_gt);
/* bloom > bloom */
Datum
bloom_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) > 0);
}

PG_FUNCTION_INFO_V1(bloom_ge);
/* bloom >= bloom */
Datum
bloom_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)) >= 0);
}

PG_FUNCTION_INFO_V1(bloom_hash);
/* Hash opclass support: equal values have equal bytes. */
Datum
bloom_hash(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);

	return hash_any(BloomData(bloom), (int) BloomDataLen(bloom));
}

PG_FUNCTION_INFO_V1(bloom_hash_extended);
/* Extended hash opclass support. */
Datum
bloom_hash_extended(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);

	return hash_any_extended(BloomData(bloom), (int) BloomDataLen(bloom),
							 PG_GETARG_INT64(1));
}
