/*-------------------------------------------------------------------------
 *
 * qfiltervalue.c
 *	  The qfilter value as the glue handles it (qfiltervalue.h): allocation,
 *	  sizing and its errors, the header, key checks and fingerprints,
 *	  inserting with growth, bulk builds from sorted fingerprints,
 *	  validation of bytes from outside, and union, all cancellable where
 *	  they loop over a large value; and how the probe cache reads a qfilter
 *	  (QFilterReader).  The SQL functions (qfilter_sql.c) and the
 *	  aggregates (qfilter_agg.c) share them; the slots themselves are the
 *	  core's (qfilter.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "largevalue.h"
#include "probecache.h"
#include "qfiltervalue.h"

/* Fingerprints a build takes from an array at once, between cancels. */
#define QF_BUILD_CHUNK 8192

QFilter *
QFilterAlloc(const QfHeader *header)
{
	size_t		len = qf_value_bytes(header);
	QFilter    *filter = (QFilter *) PallocLarge(VARHDRSZ + len);

	SET_VARSIZE(filter, VARHDRSZ + len);
	qf_init(QFilterData(filter), header, &InterruptibleSlices);
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

	*result = (QFilter *) PallocLarge(VARHDRSZ + len);
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
	header->identity.kind = BF_KIND_NONE;
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

/* A qfilter records the environment always, as bloom's version 2 does. */
void
QFilterCheckKey(const QfHeader *header, const KeyType *key)
{
	CheckKeyIdentity(&header->identity, true, key);
}

void
QFilterKeyIntoHeader(QfHeader *header, const KeyType *key)
{
	header->identity = KeyIdentityOf(key, true);
}

uint64
QFilterKeyHash(const QfHeader *header, const KeyType *key, Datum value)
{
	return KeyHashInline(key, value, header->seed);
}

uint64
QFilterKeyFingerprint(const QfHeader *header, const KeyType *key, Datum value)
{
	return qf_fingerprint(header, QFilterKeyHash(header, key, value));
}

bool
QFilterTestFingerprint(QFilter *filter, const QfHeader *header, uint64 fingerprint)
{
	if (header->identity.kind == BF_KIND_NONE)
		return false;			/* nothing was ever added */
	return qf_contains(QFilterData(filter), header, fingerprint);
}

/* How the probe cache (probecache.c) reads a qfilter. */
static void
QFilterProbeReadHeader(struct varlena *filter, void *header)
{
	QFilterReadHeader(filter, (QfHeader *) header);
}

static void
QFilterProbeCheckKey(const void *header, const KeyType *key)
{
	QFilterCheckKey((const QfHeader *) header, key);
}

static bool
QFilterProbeTest(struct varlena *filter, const void *header, const KeyType *key, Datum value)
{
	const QfHeader *qf_header = (const QfHeader *) header;

	return QFilterTestFingerprint(filter, qf_header,
								  QFilterKeyFingerprint(qf_header, key, value));
}

static uint64
QFilterProbeHash(const void *header, const KeyType *key, Datum value)
{
	return QFilterKeyFingerprint((const QfHeader *) header, key, value);
}

static void
QFilterProbePrefetch(struct varlena *filter, const void *header, uint64 fingerprint)
{
	qf_prefetch(QFilterData(filter), (const QfHeader *) header, fingerprint);
}

static bool
QFilterProbeTestHash(struct varlena *filter, const void *header, uint64 fingerprint)
{
	return QFilterTestFingerprint(filter, (const QfHeader *) header, fingerprint);
}

const FilterReader QFilterReader = {
	.header_size = sizeof(QfHeader),
	.raw_header_size = QF_HEADER_SIZE,
	.read_header = QFilterProbeReadHeader,
	.check_key = QFilterProbeCheckKey,
	.test = QFilterProbeTest,
	.hash = QFilterProbeHash,
	.prefetch = QFilterProbePrefetch,
	.test_hash = QFilterProbeTestHash,
};

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

QFilter *
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
 * Union
 * ---------------------------------------------------------------------
 */

static void
DescribeQfParameters(StringInfo out, const QfHeader *h)
{
	appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, seed " UINT64_FORMAT ", key kind %s)",
					 h->capacity, h->fpr, h->seed, KeyKindName(h->identity.kind));
}

void
QFilterCheckCompatible(const QfHeader *a, const QfHeader *b)
{
	StringInfoData detail;
	bool		kinds_match = bf_key_identity_compatible(&a->identity, &b->identity);

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
	QfHeader	params = a_header->identity.kind != BF_KIND_NONE ? *a_header : *b_header;
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
