/*-------------------------------------------------------------------------
 *
 * qfilter_sql.c
 *	  The qfilter type's SQL functions, in install-script order: type I/O,
 *	  construction, add, remove, count, probes, array forms, union and
 *	  info, on the value helpers they share with the aggregates
 *	  (qfiltervalue.c) and on the probe cache of both types (probecache.c).
 *	  Comparison and hashing reuse bloom's functions, which only look at
 *	  the bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "probecache.h"
#include "probefunctions.h"
#include "qfiltervalue.h"
#include "typmod.h"

#define QFILTER_TEXT_PREFIX "qfilter:"

/* ---------------------------------------------------------------------
 * Type I/O
 * ---------------------------------------------------------------------
 */

/* Whether filter is a value of type qfilter(typmod) (typmod.c). */
static bool
QFilterFitsTypmod(QFilter *filter, int32 typmod, Node *escontext)
{
	QfHeader	header;

	if (typmod < 0)
		return true;
	QFilterReadHeader(filter, &header);
	return FilterFitsTypmod(typmod, "qfilter", header.capacity, header.fpr, 0, escontext);
}

PG_FUNCTION_INFO_V1(qfilter_in);
/* Text input: "qfilter:" followed by the base64 of the serialised value. */
Datum
qfilter_in(PG_FUNCTION_ARGS)
{
	char	   *input = PG_GETARG_CSTRING(0);
	size_t		len;
	uint8	   *decoded = DecodeTextForm(input, QFILTER_TEXT_PREFIX, "qfilter",
										 fcinfo->context, &len);
	QFilter    *filter;

	if (decoded == NULL)
		PG_RETURN_NULL();
	filter = QFilterFromBytes(decoded, len, ERRCODE_INVALID_TEXT_REPRESENTATION,
							  fcinfo->context, "invalid input syntax for type qfilter");
	pfree(decoded);
	if (filter == NULL || !QFilterFitsTypmod(filter, InputFunctionTypmod(fcinfo), fcinfo->context))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(filter);
}

PG_FUNCTION_INFO_V1(qfilter_out);
/* Text output: the exact inverse of qfilter_in. */
Datum
qfilter_out(PG_FUNCTION_ARGS)
{
	QFilter    *filter = PG_GETARG_QFILTER_P(0);

	PG_RETURN_CSTRING(EncodeTextForm(QFilterData(filter), VARSIZE(filter) - VARHDRSZ,
									 QFILTER_TEXT_PREFIX, "qfilter"));
}

PG_FUNCTION_INFO_V1(qfilter_recv);
/* Binary input: the serialised value as is, validated. */
Datum
qfilter_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	QFilter    *filter;

	filter = QFilterFromBytes((const uint8 *) buf->data + buf->cursor, buf->len - buf->cursor,
							  ERRCODE_INVALID_BINARY_REPRESENTATION, NULL,
							  "invalid external binary representation for type qfilter");
	buf->cursor = buf->len;
	QFilterFitsTypmod(filter, InputFunctionTypmod(fcinfo), NULL);
	PG_RETURN_POINTER(filter);
}

PG_FUNCTION_INFO_V1(qfilter_from_bytea);
/* bytea::qfilter, validated like every other input. */
Datum
qfilter_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(QFilterFromBytes((const uint8 *) VARDATA_ANY(raw), VARSIZE_ANY_EXHDR(raw),
									   ERRCODE_INVALID_BINARY_REPRESENTATION, NULL,
									   "invalid bytea value for type qfilter"));
}

PG_FUNCTION_INFO_V1(qfilter_typmod_in);
/* qfilter(capacity, fpr): parameters qfilter_empty accepts. */
Datum
qfilter_typmod_in(PG_FUNCTION_ARGS)
{
	FilterTypmod decoded;
	QfHeader	unused;
	int32		typmod = FilterTypmodIn(PG_GETARG_ARRAYTYPE_P(0), "qfilter", false, &decoded);

	QFilterSize(decoded.capacity, decoded.fpr, &unused);
	PG_RETURN_INT32(typmod);
}

PG_FUNCTION_INFO_V1(qfilter_typmod_cast);
/* The cast of qfilter to qfilter(capacity, fpr), as bloom's. */
Datum
qfilter_typmod_cast(PG_FUNCTION_ARGS)
{
	QFilterFitsTypmod(PG_GETARG_QFILTER_P(0), PG_GETARG_INT32(1), NULL);
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/* ---------------------------------------------------------------------
 * Construction, add, remove, count and probes
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(qfilter_empty);
/* qfilter_empty(capacity, fpr) */
Datum
qfilter_empty(PG_FUNCTION_ARGS)
{
	QfHeader	header;

	QFilterSize(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1), &header);
	PG_RETURN_POINTER(QFilterAlloc(&header));
}

PG_FUNCTION_INFO_V1(qfilter_add);
/*
 * qfilter_add(filter, value): a copy with one more copy of value.  Not
 * STRICT: adding NULL returns the filter unchanged instead of losing it.
 */
Datum
qfilter_add(PG_FUNCTION_ARGS)
{
	QFilter    *filter;
	QfHeader	header;
	KeyType    *key;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	key = CallSiteKeyOfArg(fcinfo, 1);
	filter = PG_GETARG_QFILTER_P_COPY(0);
	QFilterReadHeader(filter, &header);
	QFilterCheckKey(&header, key);
	QFilterKeyIntoHeader(&header, key);
	filter = QFilterInsert(filter, &header, QFilterKeyFingerprint(&header, key, PG_GETARG_DATUM(1)));
	QFilterWriteHeader(filter, &header);
	PG_RETURN_POINTER(filter);
}

/* Removes one copy of value; false if its fingerprint is not there. */
static bool
RemoveKey(QFilter *filter, QfHeader *header, const KeyType *key, Datum value)
{
	if (header->identity.kind == BF_KIND_NONE)
		return false;
	return qf_remove(QFilterData(filter), header, QFilterKeyFingerprint(header, key, value));
}

static void
NoticeNotRemoved(int64 missing)
{
	if (missing == 1)
		ereport(NOTICE,
				(errmsg("qfilter_remove: the key is not in the filter, which is unchanged"),
				 errdetail("Removing keys that were never added can remove other keys' fingerprints; check before removing.")));
	else if (missing > 1)
		ereport(NOTICE,
				(errmsg("qfilter_remove_all: " INT64_FORMAT " of the keys are not in the filter and were skipped",
						missing),
				 errdetail("Removing keys that were never added can remove other keys' fingerprints; check before removing.")));
}

PG_FUNCTION_INFO_V1(qfilter_remove);
/*
 * qfilter_remove(filter, value): a copy with one copy of value fewer.  A
 * key whose fingerprint is not there leaves the filter unchanged, with a
 * NOTICE.
 */
Datum
qfilter_remove(PG_FUNCTION_ARGS)
{
	QFilter    *filter;
	QfHeader	header;
	KeyType    *key;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	key = CallSiteKeyOfArg(fcinfo, 1);
	filter = PG_GETARG_QFILTER_P_COPY(0);
	QFilterReadHeader(filter, &header);
	QFilterCheckKey(&header, key);
	if (!RemoveKey(filter, &header, key, PG_GETARG_DATUM(1)))
		NoticeNotRemoved(1);
	QFilterWriteHeader(filter, &header);
	PG_RETURN_POINTER(filter);
}

PG_FUNCTION_INFO_V1(qfilter_count);
/* qfilter_count(filter, value): copies of value's fingerprint, >= its true count. */
Datum
qfilter_count(PG_FUNCTION_ARGS)
{
	KeyType    *key = CallSiteKeyOfArg(fcinfo, 1);
	QFilter    *filter;
	const QfHeader *header = CachedFilterArg(fcinfo, &QFilterReader, 0, &filter);

	QFilterCheckKey(header, key);
	if (header->identity.kind == BF_KIND_NONE)
		PG_RETURN_INT64(0);
	PG_RETURN_INT64((int64) qf_count(QFilterData(filter), header,
									 QFilterKeyFingerprint(header, key, PG_GETARG_DATUM(1))));
}

PG_FUNCTION_INFO_V1(qfilter_contains);
/* qfilter_contains(filter, value), also filter @> value */
Datum
qfilter_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeValueArg(fcinfo, &QFilterReader, 0, 1));
}

PG_FUNCTION_INFO_V1(qfilter_contained_by);
/* value <@ filter */
Datum
qfilter_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeValueArg(fcinfo, &QFilterReader, 1, 0));
}

/* ---------------------------------------------------------------------
 * Array forms
 * ---------------------------------------------------------------------
 */

/* qfilter_add_all and qfilter_remove_all: one copy for every element. */
static Datum
ChangeAll(FunctionCallInfo fcinfo, bool add)
{
	ArrayType  *array;
	KeyType    *key;
	QFilter    *filter;
	QfHeader	header;
	ArrayIterator iterator;
	Datum		value;
	bool		isnull;
	int64		missing = 0;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	array = PG_GETARG_ARRAYTYPE_P(1);
	key = CallSiteKeyOfType(fcinfo, ARR_ELEMTYPE(array));
	filter = PG_GETARG_QFILTER_P_COPY(0);
	QFilterReadHeader(filter, &header);
	QFilterCheckKey(&header, key);

	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &value, &isnull))
	{
		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		if (add)
		{
			QFilterKeyIntoHeader(&header, key);
			filter = QFilterInsert(filter, &header, QFilterKeyFingerprint(&header, key, value));
		}
		else if (!RemoveKey(filter, &header, key, value))
			missing++;
	}
	array_free_iterator(iterator);
	QFilterWriteHeader(filter, &header);
	if (missing == 1)
		missing = 2;			/* the plural message names the batch form */
	NoticeNotRemoved(missing);
	PG_RETURN_POINTER(filter);
}

PG_FUNCTION_INFO_V1(qfilter_add_all);
Datum
qfilter_add_all(PG_FUNCTION_ARGS)
{
	return ChangeAll(fcinfo, true);
}

PG_FUNCTION_INFO_V1(qfilter_remove_all);
Datum
qfilter_remove_all(PG_FUNCTION_ARGS)
{
	return ChangeAll(fcinfo, false);
}

PG_FUNCTION_INFO_V1(qfilter_contains_all);
/* qfilter_contains_all(filter, values[]): as x = ALL (array). */
Datum
qfilter_contains_all(PG_FUNCTION_ARGS)
{
	return ProbeArrayArg(fcinfo, &QFilterReader, false);
}

PG_FUNCTION_INFO_V1(qfilter_contains_any);
/* qfilter_contains_any(filter, values[]): as x = ANY (array). */
Datum
qfilter_contains_any(PG_FUNCTION_ARGS)
{
	return ProbeArrayArg(fcinfo, &QFilterReader, true);
}

/* ---------------------------------------------------------------------
 * Union
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(qfilter_union);
/* qfilter_union(a, b), also a | b: the multiset sum */
Datum
qfilter_union(PG_FUNCTION_ARGS)
{
	QFilter    *a = PG_GETARG_QFILTER_P(0);
	QFilter    *b = PG_GETARG_QFILTER_P(1);
	QfHeader	a_header,
				b_header;

	QFilterReadHeader(a, &a_header);
	QFilterReadHeader(b, &b_header);
	PG_RETURN_POINTER(QFilterUnion(a, &a_header, b, &b_header));
}

/* ---------------------------------------------------------------------
 * Inspection
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(qfilter_info);
/* qfilter_info(filter): parameters, fill and estimates. */
Datum
qfilter_info(PG_FUNCTION_ARGS)
{
	QFilter    *filter = PG_GETARG_QFILTER_P(0);
	QfHeader	h;
	TupleDesc	desc;
	Datum		values[12];
	bool		nulls[12] = {0};
	uint64		distinct;
	uint64		slots;
	char	   *environment;

	desc = ResultRowDesc(fcinfo);
	QFilterReadHeader(filter, &h);
	distinct = qf_distinct(QFilterData(filter), &h);
	slots = (uint64) h.home_blocks * QF_BLOCK_SLOTS;
	environment = KeyEnvironmentName(&h.identity);

	values[0] = Int32GetDatum(h.version);
	values[1] = Int64GetDatum((int64) (VARSIZE(filter) - VARHDRSZ));
	values[2] = Int64GetDatum((int64) slots);
	values[3] = Int32GetDatum(h.r);
	values[4] = Int64GetDatum((int64) h.capacity);
	values[5] = Float8GetDatum(h.fpr);
	values[6] = Int64GetDatum((int64) h.count);
	values[7] = Int64GetDatum((int64) distinct);
	values[8] = Float8GetDatum((double) h.count / (double) slots);
	values[9] = Float8GetDatum(qf_estimated_fpr(&h, distinct));
	values[10] = CStringGetTextDatum(KeyKindName(h.identity.kind));
	if (environment != NULL)
		values[11] = CStringGetTextDatum(environment);
	else
		nulls[11] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
