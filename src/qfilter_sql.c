/*-------------------------------------------------------------------------
 *
 * qfilter_sql.c
 *	  The qfilter type's SQL functions, in install-script order after the
 *	  value helpers they share with the aggregates (qfiltervalue.h): type
 *	  I/O, construction, add, remove, count, probes, array forms, union and
 *	  info.  Comparison and hashing reuse bloom's functions, which only look
 *	  at the bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "probecache.h"
#include "qfiltervalue.h"
#include "typmod.h"

#define QFILTER_TEXT_PREFIX "qfilter:"

/* Fingerprints a build takes from an array at once, between cancels. */
#define QF_BUILD_CHUNK 8192

/* ---------------------------------------------------------------------
 * Value helpers
 * ---------------------------------------------------------------------
 */

QFilter *
QFilterAlloc(const QfHeader *header)
{
	size_t		len = qf_value_bytes(header);
	QFilter    *filter = (QFilter *) palloc(VARHDRSZ + len);

	SET_VARSIZE(filter, VARHDRSZ + len);
	qf_init(QFilterData(filter), header);
	return filter;
}

/*
 * Merges a and b (b may be NULL: a copy of a, as growing does) into a new
 * filter of header's size, in slices that answer a cancel between them: a
 * union of two large filters takes seconds, and so does clearing the
 * result, which the merge does in slices too.  QF_ERR_FULL: grow header and
 * try again.
 */
#define MERGE_SLICE (1 << 20)

static QfStatus
MergeInSlices(QFilter **result, QfHeader *header, QFilter *a, const QfHeader *a_header,
			  QFilter *b, const QfHeader *b_header)
{
	size_t		len = qf_value_bytes(header);
	QfMerge		merge;
	QfStatus	status = QF_OK;
	bool		done = false;

	*result = (QFilter *) palloc(VARHDRSZ + len);
	SET_VARSIZE(*result, VARHDRSZ + len);
	qf_merge_start(&merge, QFilterData(a), a_header, b ? QFilterData(b) : NULL, b_header, true);
	while (!done && status == QF_OK)
	{
		CHECK_FOR_INTERRUPTS();
		status = qf_merge_step(&merge, QFilterData(*result), header,
							   QFilterData(a), a_header, b ? QFilterData(b) : NULL, b_header,
							   MERGE_SLICE, &done);
	}
	if (status != QF_OK)
	{
		pfree(*result);
		*result = NULL;
	}
	return status;
}

void
QFilterSize(int64 capacity, double fpr, QfHeader *header)
{
	QfStatus	status;

	memset(header, 0, sizeof(*header));
	header->version = QF_FORMAT_VERSION;
	header->key_kind = BF_KIND_NONE;
	header->capacity = capacity < 1 ? 0 : (uint64) capacity;
	header->fpr = fpr;
	status = capacity < 1 ? QF_ERR_CAPACITY : qf_size_for((uint64) capacity, fpr, header);
	if (status == QF_ERR_CAPACITY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("qfilter capacity must be at least 1"),
				 errdetail("Capacity was " INT64_FORMAT ".", capacity)));
	if (status == QF_ERR_FPR)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("qfilter false-positive rate must be greater than 0 and at most 0.5"),
				 errdetail("The rate was %g.", fpr)));
	if (status == QF_ERR_FPR_UNREACHABLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("qfilter false-positive rate %g is too low for capacity " INT64_FORMAT,
						fpr, capacity),
				 errdetail("Fingerprints are at most 63 bits: the rate must be at least capacity / 2^63.")));
	if (status != QF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("qfilter of capacity " INT64_FORMAT " at false-positive rate %g would be too large",
						capacity, fpr),
				 errdetail("%s.", qf_status_message(status))));
}

/*
 * Warns, once per statement, that a filter grew so far past its capacity
 * that its false-positive rate passed OVERFILL_RATE_FACTOR times its
 * target, as an overfilled bloom warns: it still counts every key exactly,
 * but answers "maybe" too often to save work.  The count bounds the
 * distinct fingerprints, so the scan that counts those runs only past that
 * bound, and within a statement again only once the count grew by a tenth.
 */
static void
QFilterWarnIfOverfilled(QFilter *filter, const QfHeader *header)
{
	static OverfillThrottle throttle;
	double		limit = OVERFILL_RATE_FACTOR * header->fpr;
	double		rate;

	if (header->count <= header->capacity ||
		qf_estimated_fpr(header, header->count) <= limit ||
		!OverfillCheckDue(&throttle, header->count))
		return;
	rate = qf_estimated_fpr(header, qf_distinct(QFilterData(filter), header));
	if (rate <= limit)
		return;
	OverfillWarned(&throttle);
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("qfilter is overfilled: its false-positive rate is %.3g, %.1f times its target of %g",
					rate, rate / header->fpr, header->fpr),
			 errdetail("It was sized for " UINT64_FORMAT " keys and holds " UINT64_FORMAT "; it grew to hold them, exactly.",
					   header->capacity, header->count),
			 errhint("Build a larger one with qfilter_empty(capacity, fpr), or with qfilter_agg(value), which sizes itself.")));
}

/*
 * For QF_ERR_LIMIT, header->count is the count the filter would have had:
 * the message names it.
 */
void
QFilterReportStatus(QfStatus status, const QfHeader *header)
{
	if (status == QF_ERR_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("qfilter is full"),
				 errdetail("It would hold " UINT64_FORMAT " keys, sized for " UINT64_FORMAT " at rate %g, and cannot grow further: its fingerprints have no remainder bits left, or no larger size holds the runs of its copies.",
						   header->count, header->capacity, header->fpr),
				 errhint("Build a larger one with qfilter_empty(capacity, fpr), or with qfilter_agg(value), which sizes itself.")));
	if (status == QF_ERR_TOO_LARGE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("qfilter cannot grow past 750000000 bytes")));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("qfilter value is corrupted"),
			 errdetail("%s.", qf_status_message(status))));
}

void
QFilterReadHeader(QFilter *filter, QfHeader *header)
{
	QfStatus	status = qf_read_header(QFilterData(filter), VARSIZE(filter) - VARHDRSZ, header);

	if (status != QF_OK)
		QFilterReportStatus(status == QF_ERR_LIMIT ? QF_ERR_COUNT : status, header);
}

void
QFilterWriteHeader(QFilter *filter, const QfHeader *header)
{
	qf_write_header(QFilterData(filter), header);
	QFilterWarnIfOverfilled(filter, header);
}

/* The key fields of a qfilter header, as the bloom header keykind.c reads. */
static void
KeyFieldsAsBloomHeader(const QfHeader *header, BfHeader *bloom)
{
	memset(bloom, 0, sizeof(*bloom));
	bloom->version = BF_FORMAT_VERSION;
	bloom->key_kind = header->key_kind;
	bloom->key_tag = header->key_tag;
	bloom->env_encoding = header->env_encoding;
	bloom->env_locale = header->env_locale;
}

void
QFilterCheckKey(const QfHeader *header, const KeyType *key)
{
	BfHeader	bloom;

	KeyFieldsAsBloomHeader(header, &bloom);
	CheckKeyKind(&bloom, key);
}

void
QFilterKeyIntoHeader(QfHeader *header, const KeyType *key)
{
	BfHeader	bloom;

	KeyFieldsAsBloomHeader(header, &bloom);
	KeyKindIntoHeader(&bloom, key);
	header->key_kind = bloom.key_kind;
	header->key_tag = bloom.key_tag;
	header->env_encoding = bloom.env_encoding;
	header->env_locale = bloom.env_locale;
}

uint64
QFilterKeyHash(const QfHeader *header, const KeyType *key, Datum value)
{
	return KeyHashInline(key, value, header->seed);
}

/* filter rebuilt into the next size up; frees filter. */
static QFilter *
GrowFilter(QFilter *filter, QfHeader *header)
{
	QfHeader	grown;
	QfStatus	status = qf_grown_header(header, &grown);
	QFilter    *bigger;

	for (;;)
	{
		if (status != QF_OK)
		{
			QfHeader	shown = *header;

			shown.count++;
			QFilterReportStatus(status, &shown);
		}
		status = MergeInSlices(&bigger, &grown, filter, header, NULL, NULL);
		if (status == QF_OK)
			break;
		/* runs spilled past the spare slots: one size up again */
		{
			QfHeader	next;

			status = qf_grown_header(&grown, &next);
			grown = next;
		}
	}
	pfree(filter);
	*header = grown;
	return bigger;
}

QFilter *
QFilterInsert(QFilter *filter, QfHeader *header, uint64 fingerprint)
{
	for (;;)
	{
		QfStatus	status = qf_insert(QFilterData(filter), header, fingerprint);

		if (status == QF_OK)
			return filter;
		if (status != QF_ERR_FULL)
		{
			QfHeader	shown = *header;

			shown.count++;
			QFilterReportStatus(status, &shown);
		}
		filter = GrowFilter(filter, header);
	}
}

/* Appends every fingerprint of source to the empty filter of header. */
static QfStatus
AppendFromSource(QFilter *filter, QfHeader *header, const QfSortedSource *source)
{
	QfAppender	app;
	QfStatus	status = QF_OK;
	const uint64 *piece;
	Size		n;

	qf_append_start(&app);
	source->restart(source->arg);
	while (status == QF_OK && (n = source->next(source->arg, &piece)) > 0)
	{
		CHECK_FOR_INTERRUPTS();
		for (Size i = 0; i < n && status == QF_OK; i++)
			status = qf_append(QFilterData(filter), header, &app, piece[i]);
	}
	if (status == QF_OK)
		qf_append_finish(QFilterData(filter), header, &app);
	return status;
}

QFilter *
QFilterBuildFrom(const QfHeader *params, uint64 n, const QfSortedSource *source)
{
	QfHeader	header;
	QfStatus	status = qf_header_for_count(params, n, &header);
	QFilter    *filter;

	if (status != QF_OK)
	{
		QfHeader	shown = *params;

		shown.count = n;
		QFilterReportStatus(status, &shown);
	}
	for (;;)
	{
		QfHeader	grown;

		CHECK_FOR_INTERRUPTS();
		filter = QFilterAlloc(&header);
		status = AppendFromSource(filter, &header, source);
		if (status == QF_OK)
			break;
		if (status != QF_ERR_FULL)
			QFilterReportStatus(status, &header);
		pfree(filter);
		header.count = 0;
		status = qf_grown_header(&header, &grown);
		if (status != QF_OK)
		{
			header.count = n;
			QFilterReportStatus(status, &header);
		}
		header = grown;
	}
	if (header.count != n)
		elog(ERROR, "qfilter build got " UINT64_FORMAT " fingerprints of " UINT64_FORMAT,
			 header.count, n);
	QFilterWriteHeader(filter, &header);
	return filter;
}

/* An array as a QfSortedSource. */
typedef struct ArraySource
{
	const uint64 *fingerprints;
	size_t		n;
	size_t		next;
} ArraySource;

static Size
NextOfArray(void *arg, const uint64 **piece)
{
	ArraySource *array = arg;
	Size		take = Min(QF_BUILD_CHUNK, array->n - array->next);

	*piece = array->fingerprints + array->next;
	array->next += take;
	return take;
}

static void
RestartArray(void *arg)
{
	((ArraySource *) arg)->next = 0;
}

QFilter *
QFilterBuildSorted(const QfHeader *params, const uint64 *fingerprints, size_t n)
{
	ArraySource array = {fingerprints, n, 0};
	QfSortedSource source = {NextOfArray, RestartArray, &array};

	return QFilterBuildFrom(params, n, &source);
}

/* A validated copy of bytes from outside, or NULL after a soft error. */
static QFilter *
QFilterFromBytes(const uint8 *bytes, size_t len, int sqlstate, Node *escontext,
				 const char *message)
{
	QfHeader	header;
	QfStatus	status = len > BF_MAX_VALUE_BYTES ? QF_ERR_TOO_LARGE
		: qf_validate(bytes, len, &header);
	QFilter    *filter;

	if (status != QF_OK)
	{
		report_input_error(escontext,
						   (errcode(sqlstate),
							errmsg_internal("%s", message),
							errdetail("%s.", qf_status_message(status))));
		return NULL;
	}
	filter = (QFilter *) palloc(VARHDRSZ + len);
	SET_VARSIZE(filter, VARHDRSZ + len);
	memcpy(QFilterData(filter), bytes, len);
	return filter;
}

/* ---------------------------------------------------------------------
 * What a call site keeps: the key type, and a stored or constant filter
 * detoasted once per query (probecache.c's identity checks).
 * ---------------------------------------------------------------------
 */
typedef struct QfCallCache
{
	KeyType		key;
	Oid			toastrelid;
	Oid			valueid;
	struct varlena *constant;
	QFilter    *filter;
	bool		owned;
	bool		kind_checked;	/* the key type fits filter's kind */
	QfHeader	header;
} QfCallCache;

static QfCallCache *
GetQfCallCache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(QfCallCache));
	return (QfCallCache *) fcinfo->flinfo->fn_extra;
}

/* The filter argument argno to read, with its header. */
static QFilter *
ProbeQFilterArg(FunctionCallInfo fcinfo, int argno, QfHeader *header)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	QfCallCache *cache = GetQfCallCache(fcinfo);
	struct varatt_external pointer = {0};
	bool		is_stored = VARATT_IS_EXTERNAL_ONDISK(raw);
	MemoryContext old;
	QFilter    *filter;
	QfHeader	decoded;

	if (is_stored)
	{
		VARATT_EXTERNAL_GET_POINTER(pointer, raw);
		if (cache->filter != NULL && SameStoredValue(&pointer, cache->toastrelid, cache->valueid))
		{
			*header = cache->header;
			return cache->filter;
		}
	}
	else if (ArgIsConst(fcinfo->flinfo, argno))
	{
		if (cache->filter != NULL && cache->constant == raw)
		{
			*header = cache->header;
			return cache->filter;
		}
	}
	else
	{
		filter = (QFilter *) PG_DETOAST_DATUM(PointerGetDatum(raw));
		QFilterReadHeader(filter, header);
		return filter;
	}

	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	filter = (QFilter *) PG_DETOAST_DATUM(PointerGetDatum(raw));
	MemoryContextSwitchTo(old);
	QFilterReadHeader(filter, &decoded);
	if (cache->filter != NULL && cache->owned)
		pfree(cache->filter);
	cache->filter = filter;
	cache->kind_checked = false;
	cache->owned = (Pointer) filter != (Pointer) raw;
	cache->header = decoded;
	cache->toastrelid = is_stored ? pointer.va_toastrelid : InvalidOid;
	cache->valueid = is_stored ? pointer.va_valueid : InvalidOid;
	cache->constant = is_stored ? NULL : raw;
	*header = decoded;
	return filter;
}

/*
 * The call site's key type; one set up again (after an ALTER TYPE) must be
 * checked against the filter again.
 */
static KeyType *
KeyOfArg(FunctionCallInfo fcinfo, int argno)
{
	QfCallCache *cache = GetQfCallCache(fcinfo);

	if (!KeyTypeIsCurrent(&cache->key))
		cache->kind_checked = false;
	return KeyTypeForArg(&cache->key, fcinfo, argno);
}

static KeyType *
KeyOfArray(FunctionCallInfo fcinfo, ArrayType *array)
{
	return KeyTypeFor(&GetQfCallCache(fcinfo)->key, fcinfo, ARR_ELEMTYPE(array));
}

/* The fingerprint of a key in the filter, its kind checked. */
static uint64
KeyFingerprint(const QfHeader *header, const KeyType *key, Datum value)
{
	return qf_fingerprint(header, QFilterKeyHash(header, key, value));
}

/* ---------------------------------------------------------------------
 * Type I/O
 * ---------------------------------------------------------------------
 */

/* As bloom's (bloomfilter.c): the column's type modifier, -1 for none. */
static int32
InputTypmod(FunctionCallInfo fcinfo)
{
	return PG_NARGS() >= 3 && !PG_ARGISNULL(2) ? PG_GETARG_INT32(2) : -1;
}

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
	if (filter == NULL || !QFilterFitsTypmod(filter, InputTypmod(fcinfo), fcinfo->context))
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
	QFilterFitsTypmod(filter, InputTypmod(fcinfo), NULL);
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

PG_FUNCTION_INFO_V1(qfilter_typmod_out);
Datum
qfilter_typmod_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(FilterTypmodOut(PG_GETARG_INT32(0)));
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
	key = KeyOfArg(fcinfo, 1);
	filter = PG_GETARG_QFILTER_P_COPY(0);
	QFilterReadHeader(filter, &header);
	QFilterCheckKey(&header, key);
	QFilterKeyIntoHeader(&header, key);
	filter = QFilterInsert(filter, &header, KeyFingerprint(&header, key, PG_GETARG_DATUM(1)));
	QFilterWriteHeader(filter, &header);
	PG_RETURN_POINTER(filter);
}

/* Removes one copy of value; false if its fingerprint is not there. */
static bool
RemoveKey(QFilter *filter, QfHeader *header, const KeyType *key, Datum value)
{
	if (header->key_kind == BF_KIND_NONE)
		return false;
	return qf_remove(QFilterData(filter), header, KeyFingerprint(header, key, value));
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
	key = KeyOfArg(fcinfo, 1);
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
	KeyType    *key = KeyOfArg(fcinfo, 1);
	QfHeader	header;
	QFilter    *filter = ProbeQFilterArg(fcinfo, 0, &header);

	QFilterCheckKey(&header, key);
	if (header.key_kind == BF_KIND_NONE)
		PG_RETURN_INT64(0);
	PG_RETURN_INT64((int64) qf_count(QFilterData(filter), &header,
									 KeyFingerprint(&header, key, PG_GETARG_DATUM(1))));
}

/*
 * Whether argument argno is the filter the call site cached, with its key
 * kind checked: the same TOAST value or the same constant.  Per row in a
 * scan, so kept to a few comparisons.
 */
static inline bool
IsCheckedCachedFilter(FunctionCallInfo fcinfo, const QfCallCache *cache, int argno)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	struct varatt_external pointer;

	if (cache == NULL || cache->filter == NULL || !cache->kind_checked ||
		!KeyTypeIsCurrent(&cache->key))
		return false;
	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return raw == cache->constant;
	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	return pointer.va_valueid == cache->valueid && pointer.va_toastrelid == cache->toastrelid;
}

/* Whether value (argument value_arg) may be in the filter (filter_arg). */
static bool
ProbeKey(FunctionCallInfo fcinfo, int filter_arg, int value_arg)
{
	QfCallCache *cache = (QfCallCache *) fcinfo->flinfo->fn_extra;
	KeyType    *key;
	QfHeader	header;
	QFilter    *filter;

	/* a scan over one stored filter: everything is known but the key */
	if (IsCheckedCachedFilter(fcinfo, cache, filter_arg))
		return cache->header.key_kind != BF_KIND_NONE &&
			qf_contains(QFilterData(cache->filter), &cache->header,
						KeyFingerprint(&cache->header, &cache->key,
									   PG_GETARG_DATUM(value_arg)));

	key = KeyOfArg(fcinfo, value_arg);
	filter = ProbeQFilterArg(fcinfo, filter_arg, &header);
	cache = GetQfCallCache(fcinfo);

	/* a scan probes one cached filter with one key type: check once */
	if (filter != cache->filter || !cache->kind_checked)
	{
		QFilterCheckKey(&header, key);
		cache->kind_checked = filter == cache->filter;
	}
	if (header.key_kind == BF_KIND_NONE)
		return false;
	return qf_contains(QFilterData(filter), &header,
					   KeyFingerprint(&header, key, PG_GETARG_DATUM(value_arg)));
}

PG_FUNCTION_INFO_V1(qfilter_contains);
/* qfilter_contains(filter, value), also filter @> value */
Datum
qfilter_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeKey(fcinfo, 0, 1));
}

PG_FUNCTION_INFO_V1(qfilter_contained_by);
/* value <@ filter */
Datum
qfilter_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ProbeKey(fcinfo, 1, 0));
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
	key = KeyOfArray(fcinfo, array);
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
			filter = QFilterInsert(filter, &header, KeyFingerprint(&header, key, value));
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

/* What ProbeArray's per-element test needs. */
typedef struct ArrayProbeContext
{
	QFilter    *filter;
	QfHeader	header;
	KeyType    *key;
} ArrayProbeContext;

static bool
ProbeOneElement(Datum value, void *context)
{
	ArrayProbeContext *probe = (ArrayProbeContext *) context;

	return probe->header.key_kind != BF_KIND_NONE &&
		qf_contains(QFilterData(probe->filter), &probe->header,
					KeyFingerprint(&probe->header, probe->key, value));
}

/* qfilter_contains_all and qfilter_contains_any: as x = ALL/ANY (array). */
static Datum
ProbeArray(FunctionCallInfo fcinfo, bool stop_on)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(1);
	ArrayProbeContext probe;
	bool		result;
	bool		isnull;

	probe.key = KeyOfArray(fcinfo, array);
	probe.filter = ProbeQFilterArg(fcinfo, 0, &probe.header);
	QFilterCheckKey(&probe.header, probe.key);
	result = ProbeArrayElements(array, stop_on, ProbeOneElement, &probe, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(result);
}

PG_FUNCTION_INFO_V1(qfilter_contains_all);
Datum
qfilter_contains_all(PG_FUNCTION_ARGS)
{
	return ProbeArray(fcinfo, false);
}

PG_FUNCTION_INFO_V1(qfilter_contains_any);
Datum
qfilter_contains_any(PG_FUNCTION_ARGS)
{
	return ProbeArray(fcinfo, true);
}

/* ---------------------------------------------------------------------
 * Union
 * ---------------------------------------------------------------------
 */

static void
DescribeQfParameters(StringInfo out, const QfHeader *h)
{
	appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, seed " UINT64_FORMAT ", key kind %s)",
					 h->capacity, h->fpr, h->seed, KeyKindName(h->key_kind));
}

void
QFilterCheckCompatible(const QfHeader *a, const QfHeader *b)
{
	StringInfoData detail;
	bool		kinds_match = a->key_kind == BF_KIND_NONE || b->key_kind == BF_KIND_NONE ||
		(a->key_kind == b->key_kind && a->key_tag == b->key_tag &&
		 a->env_encoding == b->env_encoding && a->env_locale == b->env_locale);

	if (qf_compatible(a, b) && kinds_match)
		return;
	initStringInfo(&detail);
	appendStringInfoString(&detail, "First filter ");
	DescribeQfParameters(&detail, a);
	appendStringInfoString(&detail, ", second filter ");
	DescribeQfParameters(&detail, b);
	appendStringInfoChar(&detail, '.');
	if (!kinds_match)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot compute the union of qfilters of different kinds of values"),
				 errdetail_internal("%s", detail.data),
				 errhint("Combine filters of one key kind, built for one type in one encoding and locale.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("cannot compute the union of qfilters with different parameters"),
			 errdetail_internal("%s", detail.data),
			 errhint("Build every filter that will be combined with the same capacity and false-positive rate.")));
}

/* The multiset sum of two compatible filters. */
QFilter *
QFilterUnion(QFilter *a, const QfHeader *a_header, QFilter *b, const QfHeader *b_header)
{
	QfHeader	params = a_header->key_kind != BF_KIND_NONE ? *a_header : *b_header;
	QfHeader	header;
	QfStatus	status;
	QFilter    *result;

	QFilterCheckCompatible(a_header, b_header);
	status = qf_header_for_count(&params, a_header->count + b_header->count, &header);
	for (;;)
	{
		QfHeader	grown;

		if (status != QF_OK)
		{
			params.count = a_header->count + b_header->count;
			QFilterReportStatus(status, &params);
		}
		status = MergeInSlices(&result, &header, a, a_header, b, b_header);
		if (status == QF_OK)
			break;
		if (status != QF_ERR_FULL)
			continue;
		header.count = 0;
		status = qf_grown_header(&header, &grown);
		header = grown;
	}
	QFilterWriteHeader(result, &header);
	return result;
}

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
	BfHeader	key_fields;
	char	   *environment;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "qfilter_info must return a record");
	QFilterReadHeader(filter, &h);
	distinct = qf_distinct(QFilterData(filter), &h);
	slots = (uint64) h.home_blocks * QF_BLOCK_SLOTS;
	KeyFieldsAsBloomHeader(&h, &key_fields);
	environment = KeyEnvironmentName(&key_fields);

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
	values[10] = CStringGetTextDatum(KeyKindName(h.key_kind));
	if (environment[0] != '\0')
		values[11] = CStringGetTextDatum(environment);
	else
		nulls[11] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
