/*-------------------------------------------------------------------------
 *
 * probecache.c
 *	  Per-call-site caches that keep probes cheap: the key type of the
 *	  value argument, a stored or constant filter detoasted once per query,
 *	  the last decoded header, and the slice probe of a stored filter that
 *	  reads only its header and one block.
 *
 * Everything lives in the call site's fn_extra (a CallCache), so it lasts
 * as long as the expression does and is never shared between call sites.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "nodes/primnodes.h"
#include "nodes/pg_list.h"

#include "bloomexpanded.h"
#include "probecache.h"

#if PG_VERSION_NUM < 140000
#define VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer) ((toast_pointer).va_extsize)
#endif

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
bool
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
bool
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
Bloom *
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
		/* an expanded value (a PL/pgSQL variable) is read where it is */
		Bloom	   *bloom = ExpandedBloomFlat(PointerGetDatum(raw));

		if (bloom == NULL)
			bloom = DatumGetBloomP(PointerGetDatum(raw));
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
	if (status == BF_OK && bf_is_chain(&header))
		return false;			/* its segments' places need the whole value */
	if (status == BF_OK &&
		VARATT_EXTERNAL_GET_EXTSIZE(pointer) != bf_value_bytes(header.nblocks))
		status = BF_ERR_LENGTH;
	if (status != BF_OK)
		ReportCorruptValue(status);

	CheckKeyKind(&header, key);
	if (header.key_kind == BF_KIND_NONE)
	{
		*result = false;
		return true;
	}
	hash = KeyHash(key, value, header.seed, header.version);
	block = bf_block_of(hash, header.nblocks);
	slice = detoast_attr_slice(raw, BF_HEADER_SIZE + (int32) block * BF_BLOCK_BYTES,
							   BF_BLOCK_BYTES);
	if (BloomDataLen(slice) != BF_BLOCK_BYTES)
		elog(ERROR, "short slice of a stored bloom value");
	*result = bf_block_test(BloomData(slice), hash, header.k);
	pfree(slice);
	return true;
}

/*
 * The probe behind bloom_contains and the commuted form behind <@.  The
 * first probe of a stored filter reads only its header and one block
 * (ProbeStoredSlices); later ones find it detoasted in the cache.
 */
bool
ProbeValueArg(FunctionCallInfo fcinfo, int filter_arg, int value_arg)
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
		cache->key.collation == PG_GET_COLLATION() && KeyTypeIsCurrent(&cache->key))
		return BloomTestValue(bloom, &cache->stored.header, &cache->key, value);

	key = CallSiteKeyOfArg(fcinfo, value_arg);
	if (ProbeStoredSlices(fcinfo, filter_arg, key, value, &result))
		return result;
	bloom = ProbeFilterArg(fcinfo, filter_arg, &header);
	CheckKeyKind(&header, key);
	cache->stored.kind_checked = (bloom == cache->stored.filter);
	return BloomTestValue(bloom, &header, key, value);
}
