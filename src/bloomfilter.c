/*-------------------------------------------------------------------------
 *
 * bloomfilter.c
 *	  The SQL entry points of the bloom type, in the order of
 *	  bloomfilter.sql: type I/O and casts, comparison, construction,
 *	  adding and probing, the batch forms, union and intersection,
 *	  inspection, and the btree/hash support functions.  Also the module's
 *	  _PG_init.
 *
 * A leaf: each function here unpacks its arguments and calls the rooms
 * that do the work (bloomvalue.c for values, keykind.c for hashing,
 * probecache.c for probes, bloom.c for the bits).  Nothing else in the
 * module calls into this file.  The aggregates are in bloom_agg.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "bloomexpanded.h"
#include "bloomindex.h"
#include "bloomscan.h"
#include "handover.h"
#include "probecache.h"
#include "probefunctions.h"
#include "typmod.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Module load: the settings (before HandOverDefineSettings reserves their
 * prefix), the batched scan's hook and the index's options.
 */
void
_PG_init(void)
{
	BloomScanInit();
	HandOverDefineSettings();
	BloomIndexDefineOptions();
}

#define BLOOM_TEXT_PREFIX		"bloom:"

/* ---------------------------------------------------------------------
 * Type I/O
 * ---------------------------------------------------------------------
 */

/* Whether bloom is a value of type bloom(typmod) (typmod.c). */
static bool
BloomFitsTypmod(Bloom *bloom, int32 typmod, Node *escontext)
{
	BfHeader	header;

	if (typmod < 0)
		return true;
	BloomReadHeader(bloom, &header);
	return FilterFitsTypmod(typmod, "bloom", header.capacity, header.fpr, header.growth,
							escontext);
}

PG_FUNCTION_INFO_V1(bloom_in);
/* Text input: "bloom:" followed by the base64 of the serialised value. */
Datum
bloom_in(PG_FUNCTION_ARGS)
{
	char	   *input = PG_GETARG_CSTRING(0);
	size_t		len;
	uint8	   *decoded = DecodeTextForm(input, BLOOM_TEXT_PREFIX, "bloom", fcinfo->context, &len);
	Bloom	   *bloom;

	if (decoded == NULL)
		PG_RETURN_NULL();
	bloom = BloomFromBytes(decoded, len, ERRCODE_INVALID_TEXT_REPRESENTATION, fcinfo->context,
						   "invalid input syntax for type bloom", input);
	pfree(decoded);
	if (bloom == NULL || !BloomFitsTypmod(bloom, InputFunctionTypmod(fcinfo), fcinfo->context))
		PG_RETURN_NULL();
	PG_RETURN_BLOOM_P(bloom);
}

PG_FUNCTION_INFO_V1(bloom_out);
/* Text output: the exact inverse of bloom_in. */
Datum
bloom_out(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);

	PG_RETURN_CSTRING(EncodeTextForm(BloomData(bloom), BloomDataLen(bloom),
									 BLOOM_TEXT_PREFIX, "bloom"));
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
	BloomFitsTypmod(bloom, InputFunctionTypmod(fcinfo), NULL);
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

PG_FUNCTION_INFO_V1(bloom_typmod_in);
/* bloom(capacity, fpr[, growth]): parameters bloom_empty accepts. */
Datum
bloom_typmod_in(PG_FUNCTION_ARGS)
{
	FilterTypmod decoded;
	int32		typmod = FilterTypmodIn(PG_GETARG_ARRAYTYPE_P(0), "bloom", true, &decoded);

	CheckFilterParameters(decoded.capacity, decoded.fpr, decoded.growth);
	PG_RETURN_INT32(typmod);
}

PG_FUNCTION_INFO_V1(bloom_typmod_out);
/* Also qfilter's: a modifier prints the same for both types. */
Datum
bloom_typmod_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(FilterTypmodOut(PG_GETARG_INT32(0)));
}

PG_FUNCTION_INFO_V1(bloom_typmod_cast);
/*
 * The cast of bloom to bloom(capacity, fpr[, growth]): on assignment to
 * such a column, and explicit.  The value passes unchanged or not at all.
 */
Datum
bloom_typmod_cast(PG_FUNCTION_ARGS)
{
	BloomFitsTypmod(PG_GETARG_BLOOM_P(0), PG_GETARG_INT32(1), NULL);
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
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
 * Sort order and hashing: the operator classes' support, for GROUP BY,
 * DISTINCT and UNION over filters
 * ---------------------------------------------------------------------
 */

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

PG_FUNCTION_INFO_V1(bloom_cmp);
/* Byte order of the serialised values: arbitrary but total and stable. */
Datum
bloom_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(BloomCompare(PG_GETARG_BLOOM_P(0), PG_GETARG_BLOOM_P(1)));
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

/* ---------------------------------------------------------------------
 * Construction, adding and probing
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(bloom_empty);
/*
 * bloom_empty(capacity, fpr, growth): an empty filter sized for capacity
 * values; with a growth factor, a chain that adds segments as it fills.
 */
Datum
bloom_empty(PG_FUNCTION_ARGS)
{
	BfHeader	header;
	int32		growth = PG_GETARG_INT32(2);

	if (growth != 0)
		PG_RETURN_BLOOM_P(BloomAllocChain(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1), growth));
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
	Bloom	  **bloom;
	BfHeader	header;
	KeyType    *key;
	Datum		result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	key = CallSiteKeyOfArg(fcinfo, 1);
	bloom = BloomArgForUpdate(fcinfo, 0, &result);
	BloomReadHeader(*bloom, &header);
	BloomCheckKey(&header, key);
	BloomAddValue(bloom, &header, key, PG_GETARG_DATUM(1));
	WarnIfOverfilled(*bloom, &header);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(bloom_contains);
/* bloom_contains(filter, value), also filter @> value */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeValueArg(fcinfo, &BloomReader, 0, 1));
}

PG_FUNCTION_INFO_V1(bloom_contained_by);
/* value <@ filter */
Datum
bloom_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeValueArg(fcinfo, &BloomReader, 1, 0));
}

/* ---------------------------------------------------------------------
 * Batch forms over arrays
 * ---------------------------------------------------------------------
 */

/*
 * Adds a batch of hashes.  A filter changed in place must be whole at
 * every step, should a later value's hashing fail: the core writes bits
 * and header together, and cannot fail in between.
 */
static void
AddPendingHashes(Bloom **bloom, BfHeader *header, const KeyType *key,
				 const uint64 *hashes, int n)
{
	if (n == 0)
		return;
	BloomKeyIntoHeader(header, key);
	BloomAddHashes(bloom, header, hashes, n);
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
	Bloom	  **bloom;
	BfHeader	header;
	ArrayIterator iterator;
	Datum		value;
	bool		isnull;
	uint64		pending[256];
	int			npending = 0;
	Datum		result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	array = PG_GETARG_ARRAYTYPE_P(1);
	key = CallSiteKeyOfType(fcinfo, ARR_ELEMTYPE(array));
	bloom = BloomArgForUpdate(fcinfo, 0, &result);
	BloomReadHeader(*bloom, &header);
	BloomCheckKey(&header, key);

	/* Hashes go in batches, so the core can prefetch their blocks. */
	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &value, &isnull))
	{
		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		pending[npending++] = KeyHash(key, value, header.seed, header.version);
		if (npending == lengthof(pending))
		{
			AddPendingHashes(bloom, &header, key, pending, npending);
			npending = 0;
		}
	}
	array_free_iterator(iterator);
	AddPendingHashes(bloom, &header, key, pending, npending);
	WarnIfOverfilled(*bloom, &header);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(bloom_contains_all);
/* bloom_contains_all(filter, values[]): every value may be present. */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	return ProbeArrayArg(fcinfo, &BloomReader, false);
}

PG_FUNCTION_INFO_V1(bloom_contains_any);
/* bloom_contains_any(filter, values[]): some value may be present. */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	return ProbeArrayArg(fcinfo, &BloomReader, true);
}

/* ---------------------------------------------------------------------
 * Union and intersection
 * ---------------------------------------------------------------------
 */

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
	result = BloomCombineInto(result, PG_GETARG_BLOOM_P(1), is_union, true);
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

PG_FUNCTION_INFO_V1(bloom_info);
/* bloom_info(filter): one row describing the filter. */
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;
	TupleDesc	tupdesc;
	Datum		values[18];
	bool		nulls[18] = {0};
	BfEstimate	e;
	char	   *environment;

	tupdesc = ResultRowDesc(fcinfo);
	BloomReadHeader(bloom, &h);
	BloomEstimates(bloom, &h, &e);

	values[0] = Int32GetDatum(h.version);
	values[1] = CStringGetTextDatum(bf_is_chain(&h) ? "chained" : "blocked512");
	values[2] = Int64GetDatum(bf_clamp_int64(e.bits));
	values[3] = Int64GetDatum((int64) BloomDataLen(bloom));
	values[4] = Int32GetDatum(e.k);
	values[5] = Int64GetDatum(bf_clamp_int64(e.capacity));
	values[6] = Float8GetDatum(h.fpr);
	values[7] = Int64GetDatum(bf_clamp_int64(h.inserted));
	values[8] = Int64GetDatum(bf_clamp_int64(e.bits_set));
	values[9] = Float8GetDatum(e.fill);
	values[10] = Float8GetDatum(e.distinct);
	values[11] = Float8GetDatum(e.fpr);
	values[12] = CStringGetTextDatum(KeyKindName(h.identity.kind));
	values[13] = Int64GetDatum((int64) h.seed);
	environment = KeyEnvironmentName(&h.identity);
	if (environment != NULL)
		values[14] = CStringGetTextDatum(environment);
	else
		nulls[14] = true;
	values[15] = BoolGetDatum(e.over_capacity);
	values[16] = Int32GetDatum((int32) h.nsegments);
	values[17] = Int32GetDatum(h.growth);
	nulls[17] = !bf_is_chain(&h);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(bloom_cardinality);
/* bloom_cardinality(filter): distinct values estimated from the fill. */
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;
	BfEstimate	e;

	BloomReadHeader(bloom, &h);
	BloomEstimates(bloom, &h, &e);
	PG_RETURN_FLOAT8(e.distinct);
}

PG_FUNCTION_INFO_V1(bloom_fpr);
/* bloom_fpr(filter): this filter's false-positive rate for absent values. */
Datum
bloom_fpr(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	BfHeader	h;

	BloomReadHeader(bloom, &h);
	PG_RETURN_FLOAT8(BloomEstimatedFpr(bloom, &h));
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

	tupdesc = ResultRowDesc(fcinfo);
	SizeFilter(capacity, PG_GETARG_FLOAT8(1), &h);
	values[0] = Int64GetDatum((int64) h.nblocks * BF_BLOCK_BITS);
	values[1] = Int64GetDatum((int64) bf_value_bytes(h.nblocks));
	values[2] = Int32GetDatum(h.k);
	values[3] = Float8GetDatum((double) h.nblocks * BF_BLOCK_BITS / (double) capacity);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
