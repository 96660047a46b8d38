/*-------------------------------------------------------------------------
 *
 * probecache.c
 *	  The probe cache of both filter types: per call site, the key type of
 *	  the value argument, a stored or constant filter detoasted once per
 *	  query, the last decoded header, and the first probe of a stored
 *	  filter by slices; and the probes that use it, of one value and of an
 *	  array.  What differs between bloom and qfilter (reading a header,
 *	  checking a key, testing it, slices) each type supplies in its
 *	  FilterReader.
 *
 * Everything lives in the call site's fn_extra (a CallCache), so it lasts
 * as long as the expression does and is never shared between call sites.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "largevalue.h"
#include "probecache.h"

#if PG_VERSION_NUM < 140000
#define VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer) ((toast_pointer).va_extsize)
#endif

/* Everything one call site of a function remembers between calls. */
typedef struct CallCache
{
	KeyType		key;

	/*
	 * The filter type this call site probes, set with the header buffers
	 * below at its first probe (a call site that only needs the key type
	 * has none).
	 */
	const FilterReader *reader;

	/* A detoasted stored or constant filter kept for the rest of the query. */
	Oid			toastrelid;		/* identity of the stored value in filter */
	Oid			valueid;
	struct varlena *constant;	/* or the constant argument it came from */
	struct varlena *filter;
	bool		owned;			/* filter is a copy in fn_mcxt */
	bool		kind_checked;	/* the key type fits filter's kind */
	void	   *header;			/* filter's, decoded */
	Oid			sliced_toastrelid;	/* the value last probed by slices */
	Oid			sliced_valueid;

	/* The last header a probe decoded, with the bytes it came from. */
	bool		have_last;
	size_t		last_value_len;
	uint8	   *last_bytes;
	void	   *last_header;
} CallCache;

static CallCache *
GetCallCache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallCache));
	return (CallCache *) fcinfo->flinfo->fn_extra;
}

/* The call site's cache, with room for the headers of reader's filters. */
static CallCache *
GetProbeCache(FunctionCallInfo fcinfo, const FilterReader *reader)
{
	CallCache  *cache = GetCallCache(fcinfo);
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;

	if (cache->reader == reader)
		return cache;
	if (cache->reader != NULL)
		elog(ERROR, "one call site probes filters of two types");
	cache->header = MemoryContextAllocZero(mcxt, reader->header_size);
	cache->last_header = MemoryContextAllocZero(mcxt, reader->header_size);
	cache->last_bytes = MemoryContextAllocZero(mcxt, reader->raw_header_size);
	cache->reader = reader;
	return cache;
}

KeyType *
CallSiteKeyOfArg(FunctionCallInfo fcinfo, int argno)
{
	return KeyTypeForArg(&GetCallCache(fcinfo)->key, fcinfo, argno);
}

KeyType *
CallSiteKeyOfType(FunctionCallInfo fcinfo, Oid typid)
{
	return KeyTypeFor(&GetCallCache(fcinfo)->key, fcinfo, typid);
}

/* Whether a TOAST pointer names the same stored value as (relid, valueid). */
static inline bool
SameStoredValue(const struct varatt_external *pointer, Oid relid, Oid valueid)
{
	return pointer->va_toastrelid == relid && pointer->va_valueid == valueid;
}

/*
 * Decodes filter's header into the last-decoded slot and remembers the
 * bytes it came from.  The slot is marked empty first: a corrupt value
 * leaves no half-made entry.
 */
static const void *
DecodeHeader(CallCache *cache, struct varlena *filter)
{
	const FilterReader *reader = cache->reader;
	size_t		len = VARSIZE(filter) - VARHDRSZ;

	cache->have_last = false;
	reader->read_header(filter, cache->last_header);
	if (len >= reader->raw_header_size)
	{
		memcpy(cache->last_bytes, VARDATA(filter), reader->raw_header_size);
		cache->last_value_len = len;
		cache->have_last = true;
	}
	return cache->last_header;
}

/*
 * The decoded header of a probed filter.  A scan over a join can probe the
 * same filter on many rows; comparing its header bytes with the last ones
 * decoded is cheaper than decoding and checksumming them again, and unlike a
 * pointer comparison it stays right when another filter lands at the same
 * address.
 */
static const void *
ProbeHeader(CallCache *cache, struct varlena *filter)
{
	if (cache->have_last && VARSIZE(filter) - VARHDRSZ == cache->last_value_len &&
		memcmp(VARDATA(filter), cache->last_bytes, cache->reader->raw_header_size) == 0)
		return cache->last_header;
	return DecodeHeader(cache, filter);
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
const void *
CachedFilterArg(FunctionCallInfo fcinfo, const FilterReader *reader, int argno,
			   struct varlena **filter)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	CallCache  *cache = GetProbeCache(fcinfo, reader);
	struct varatt_external pointer = {0};
	bool		is_stored = VARATT_IS_EXTERNAL_ONDISK(raw);
	struct varlena *detoasted;
	const void *decoded;
	MemoryContext old;

	if (is_stored)
	{
		VARATT_EXTERNAL_GET_POINTER(pointer, raw);
		if (cache->filter != NULL &&
			SameStoredValue(&pointer, cache->toastrelid, cache->valueid))
		{
			*filter = cache->filter;
			return cache->header;
		}
	}
	else if (ArgIsConst(fcinfo->flinfo, argno))
	{
		if (cache->filter != NULL && cache->constant == raw)
		{
			*filter = cache->filter;
			return cache->header;
		}
	}
	else
	{
		/* an expanded value (a PL/pgSQL variable) is read where it is */
		*filter = reader->in_place != NULL ? reader->in_place(PointerGetDatum(raw)) : NULL;
		if (*filter == NULL)
			*filter = PG_DETOAST_DATUM(PointerGetDatum(raw));
		return ProbeHeader(cache, *filter);
	}

	/* Decode and validate first: a failure must leave no half-made cache. */
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	detoasted = DetoastLarge(PointerGetDatum(raw), false);
	MemoryContextSwitchTo(old);
	decoded = DecodeHeader(cache, detoasted);

	if (cache->filter != NULL && cache->owned)
		pfree(cache->filter);
	cache->filter = detoasted;
	cache->owned = (Pointer) detoasted != (Pointer) raw;
	memcpy(cache->header, decoded, reader->header_size);
	cache->kind_checked = false;
	cache->toastrelid = is_stored ? pointer.va_toastrelid : InvalidOid;
	cache->valueid = is_stored ? pointer.va_valueid : InvalidOid;
	cache->constant = is_stored ? NULL : raw;
	*filter = detoasted;
	return cache->header;
}

/*
 * The filter this call site cached, if the argument is that same filter: the
 * same TOAST value, or the same constant.  Per row, so kept cheap.
 */
static inline struct varlena *
CachedFilterFor(FunctionCallInfo fcinfo, const CallCache *cache, int argno)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	struct varatt_external pointer;

	if (cache->filter == NULL)
		return NULL;
	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return raw == cache->constant ? cache->filter : NULL;
	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	return SameStoredValue(&pointer, cache->toastrelid, cache->valueid) ?
		cache->filter : NULL;
}

/*
 * A stored filter probed by fetching only the slices the probe needs (the
 * reader's probe_slices): the cache-penetration guard probes a
 * multi-megabyte filter once per statement, and must not read all of it.
 * Applies to the first probe of an uncompressed TOASTed value at this call
 * site; a second probe of the same value means a scan, which is cheaper
 * with one full detoast, so this returns false and leaves it to
 * CachedFilterArg.
 */
static bool
ProbeFirstBySlices(FunctionCallInfo fcinfo, CallCache *cache, int filter_arg, KeyType *key,
				   Datum value, bool *result)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(filter_arg);
	struct varatt_external pointer;

	if (cache->reader->probe_slices == NULL || !VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	if (VARATT_EXTERNAL_IS_COMPRESSED(pointer))
		return false;
	if ((cache->filter != NULL &&
		 SameStoredValue(&pointer, cache->toastrelid, cache->valueid)) ||
		SameStoredValue(&pointer, cache->sliced_toastrelid, cache->sliced_valueid))
		return false;
	cache->sliced_toastrelid = pointer.va_toastrelid;
	cache->sliced_valueid = pointer.va_valueid;
	return cache->reader->probe_slices(raw, VARATT_EXTERNAL_GET_EXTSIZE(pointer), key, value,
									 result);
}

/*
 * The first probe of a stored filter may read only slices of it
 * (ProbeFirstBySlices); later ones find it detoasted in the cache.
 */
bool
ProbeValueArg(FunctionCallInfo fcinfo, const FilterReader *reader, int filter_arg,
			  int value_arg)
{
	CallCache  *cache = GetProbeCache(fcinfo, reader);
	Datum		value = PG_GETARG_DATUM(value_arg);
	struct varlena *filter;
	const void *header;
	KeyType    *key;
	bool		result;

	/* A scan's every row after the first: nothing to look up or check. */
	filter = CachedFilterFor(fcinfo, cache, filter_arg);
	if (filter != NULL && cache->kind_checked &&
		cache->key.collation == PG_GET_COLLATION() && KeyTypeIsCurrent(&cache->key))
		return reader->test(filter, cache->header, &cache->key, value);

	key = CallSiteKeyOfArg(fcinfo, value_arg);
	if (ProbeFirstBySlices(fcinfo, cache, filter_arg, key, value, &result))
		return result;
	header = CachedFilterArg(fcinfo, reader, filter_arg, &filter);
	reader->check_key(header, key);
	cache->kind_checked = (filter == cache->filter);
	return reader->test(filter, header, key, value);
}

/*
 * Probes every non-NULL element of the array (argument 1) in the filter
 * (argument 0); stops at the first answer equal to stop_on.  NULL when no
 * element decided it and some were NULL.
 */
Datum
ProbeArrayArg(FunctionCallInfo fcinfo, const FilterReader *reader, bool stop_on)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(1);
	KeyType    *key;
	struct varlena *filter;
	const void *header;
	ArrayIterator iterator;
	Datum		value;
	bool		isnull;
	bool		saw_null = false;
	bool		decided = false;

	key = CallSiteKeyOfType(fcinfo, ARR_ELEMTYPE(array));
	header = CachedFilterArg(fcinfo, reader, 0, &filter);
	reader->check_key(header, key);
	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &value, &isnull))
	{
		CHECK_FOR_INTERRUPTS();
		if (isnull)
			saw_null = true;
		else if (reader->test(filter, header, key, value) == stop_on)
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
