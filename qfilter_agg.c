/*-------------------------------------------------------------------------
 *
 * qfilter_agg.c
 *	  The qfilter aggregates: qfilter_agg in its three forms (self-sizing,
 *	  self-sizing at a rate, fixed capacity), with parallel support and the
 *	  inverse transition of moving window frames, and qfilter_union_agg.
 *
 * Every state is a list of 64-bit items: the values' hashes for
 * qfilter_agg, the input filters' fingerprints for qfilter_union_agg.  The
 * final step sorts them and builds the filter in one pass of appends,
 * sized for their number, so the result depends on the multiset alone:
 * parallel plans, window frames and recomputation give the same bytes.
 * Adding hashes instead of inserting fingerprints row by row keeps the
 * transition an append, and leaves the size to be chosen at the end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "qfiltervalue.h"

/* The state of every qfilter aggregate. */
typedef struct QfAggState
{
	QfHeader	params;			/* capacity, fpr, seed and the values' kind */
	bool		self_sizing;	/* capacity is the number of items */
	bool		fingerprints;	/* items are fingerprints, not hashes */
	uint64	   *items;
	Size		n;
	Size		room;
} QfAggState;

#define INITIAL_ROOM 1024

static QfAggState *
NewState(MemoryContext aggcontext, int64 capacity, double fpr)
{
	QfAggState *state = MemoryContextAllocZero(aggcontext, sizeof(QfAggState));

	/* sizing errors surface on the first row, not at the end */
	QFilterSize(capacity > 0 ? capacity : 1, fpr, &state->params);
	state->self_sizing = capacity <= 0;
	state->room = INITIAL_ROOM;
	state->items = MemoryContextAlloc(aggcontext, state->room * sizeof(uint64));
	return state;
}

static void
AppendItem(QfAggState *state, uint64 item)
{
	if (state->n == state->room)
	{
		state->room *= 2;
		state->items = repalloc_huge(state->items, state->room * sizeof(uint64));
	}
	state->items[state->n++] = item;
}

/* The transition of the three forms: capacity 0 sizes itself. */
static Datum
AddValue(FunctionCallInfo fcinfo, int64 capacity, double fpr)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "qfilter_agg_add");
	QfAggState *state = PG_ARGISNULL(0) ? NewState(aggcontext, capacity, fpr)
		: (QfAggState *) PG_GETARG_POINTER(0);
	KeyType    *key;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(KeyType));
	key = KeyTypeForArg((KeyType *) fcinfo->flinfo->fn_extra, fcinfo, 1);
	QFilterCheckKey(&state->params, key);
	QFilterKeyIntoHeader(&state->params, key);
	AppendItem(state, KeyHashInline(key, PG_GETARG_DATUM(1), state->params.seed));
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(qfilter_agg_add);
Datum
qfilter_agg_add(PG_FUNCTION_ARGS)
{
	return AddValue(fcinfo, 0, BLOOM_DEFAULT_FPR);
}

PG_FUNCTION_INFO_V1(qfilter_agg_add_fpr);
Datum
qfilter_agg_add_fpr(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("qfilter_agg's false-positive rate must not be NULL")));
	return AddValue(fcinfo, 0, PG_GETARG_FLOAT8(2));
}

PG_FUNCTION_INFO_V1(qfilter_agg_add_fixed);
Datum
qfilter_agg_add_fixed(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("qfilter_agg's capacity and false-positive rate must not be NULL")));
	if (PG_GETARG_INT64(2) < 1)
		QFilterSize(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3), &(QfHeader) {0});
	return AddValue(fcinfo, PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3));
}

PG_FUNCTION_INFO_V1(qfilter_agg_remove);
/*
 * The inverse transition of moving window frames: the value leaving the
 * frame was added when it entered, so one copy of its hash is there.
 */
Datum
qfilter_agg_remove(PG_FUNCTION_ARGS)
{
	QfAggState *state;
	KeyType    *key;
	uint64		hash;

	AggregateMemoryContext(fcinfo, "qfilter_agg_remove");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();		/* cannot happen: asks for recomputation */
	state = (QfAggState *) PG_GETARG_POINTER(0);
	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(KeyType));
	key = KeyTypeForArg((KeyType *) fcinfo->flinfo->fn_extra, fcinfo, 1);
	hash = KeyHashInline(key, PG_GETARG_DATUM(1), state->params.seed);
	for (Size i = state->n; i-- > 0;)
		if (state->items[i] == hash)
		{
			state->items[i] = state->items[--state->n];
			PG_RETURN_POINTER(state);
		}
	PG_RETURN_NULL();			/* not found: let the executor recompute */
}

PG_FUNCTION_INFO_V1(qfilter_agg_final);
/*
 * Sorts the items and builds the filter; the state stays usable (windows).
 * qfilter_agg over no value but NULLs is NULL, as bloom_agg and sum are: a
 * frame that lost its last value to the inverse transition too.
 */
Datum
qfilter_agg_final(PG_FUNCTION_ARGS)
{
	QfAggState *state;
	QfHeader	params;
	QfHeader	sized;
	QfStatus	status;
	uint64	   *sorted;
	QFilter    *filter;

	AggregateMemoryContext(fcinfo, "qfilter_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (QfAggState *) PG_GETARG_POINTER(0);
	if (state->n == 0 && !state->fingerprints)
		PG_RETURN_NULL();
	params = state->params;
	if (state->self_sizing)
		QFilterSize((int64) Max(state->n, 1), params.fpr, &params);
	/* QFilterSize cleared the key fields; the values' kind comes back */
	params.key_kind = state->params.key_kind;
	params.key_tag = state->params.key_tag;
	params.env_encoding = state->params.env_encoding;
	params.env_locale = state->params.env_locale;

	status = qf_header_for_count(&params, state->n, &sized);
	if (status != QF_OK)
	{
		params.count = state->n;
		QFilterReportStatus(status, &params);
	}

	sorted = palloc_extended(Max(state->n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	qf_sort_u64(state->items, sorted, state->n);
	for (Size i = 0; i < state->n; i++)
		sorted[i] = state->fingerprints ? state->items[i]
			: qf_fingerprint(&sized, state->items[i]);
	filter = QFilterBuildSorted(&params, sorted, state->n);
	pfree(sorted);
	PG_RETURN_POINTER(filter);
}

PG_FUNCTION_INFO_V1(qfilter_agg_combine);
/* Parallel plans: the items of both partial states. */
Datum
qfilter_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "qfilter_agg_combine");
	QfAggState *a = PG_ARGISNULL(0) ? NULL : (QfAggState *) PG_GETARG_POINTER(0);
	QfAggState *b = PG_ARGISNULL(1) ? NULL : (QfAggState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
	{
		a = MemoryContextAlloc(aggcontext, sizeof(QfAggState));
		*a = *b;
		a->room = Max(b->n, INITIAL_ROOM);
		a->items = MemoryContextAllocHuge(aggcontext, a->room * sizeof(uint64));
		memcpy(a->items, b->items, b->n * sizeof(uint64));
		PG_RETURN_POINTER(a);
	}
	QFilterCheckCompatible(&a->params, &b->params);
	if (a->params.key_kind == BF_KIND_NONE)
		a->params = b->params;
	if (a->n + b->n > a->room)
	{
		a->room = a->n + b->n;
		a->items = repalloc_huge(a->items, a->room * sizeof(uint64));
	}
	memcpy(a->items + a->n, b->items, b->n * sizeof(uint64));
	a->n += b->n;
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(qfilter_agg_serialize);
/* A partial state as bytes: the header fields, the flags, the items. */
Datum
qfilter_agg_serialize(PG_FUNCTION_ARGS)
{
	QfAggState *state = (QfAggState *) PG_GETARG_POINTER(0);
	StringInfoData buf;

	AggregateMemoryContext(fcinfo, "qfilter_agg_serialize");
	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) &state->params, sizeof(QfHeader));
	pq_sendbyte(&buf, state->self_sizing);
	pq_sendbyte(&buf, state->fingerprints);
	pq_sendint64(&buf, (int64) state->n);
	pq_sendbytes(&buf, (const char *) state->items, state->n * sizeof(uint64));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

PG_FUNCTION_INFO_V1(qfilter_agg_deserialize);
Datum
qfilter_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "qfilter_agg_deserialize");
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	QfAggState *state = MemoryContextAllocZero(aggcontext, sizeof(QfAggState));

	buf.data = VARDATA_ANY(raw);
	buf.len = VARSIZE_ANY_EXHDR(raw);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	pq_copymsgbytes(&buf, (char *) &state->params, sizeof(QfHeader));
	state->self_sizing = pq_getmsgbyte(&buf);
	state->fingerprints = pq_getmsgbyte(&buf);
	state->n = (Size) pq_getmsgint64(&buf);
	if (state->n > (Size) (buf.len - buf.cursor) / sizeof(uint64))
		elog(ERROR, "qfilter_agg state of " UINT64_FORMAT " items is truncated",
			 (uint64) state->n);
	state->room = Max(state->n, INITIAL_ROOM);
	state->items = MemoryContextAllocHuge(aggcontext, state->room * sizeof(uint64));
	pq_copymsgbytes(&buf, (char *) state->items, state->n * sizeof(uint64));
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(qfilter_union_agg_add);
/* qfilter_union_agg's transition: the input filter's fingerprints. */
Datum
qfilter_union_agg_add(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "qfilter_union_agg_add");
	QfAggState *state = PG_ARGISNULL(0) ? NULL : (QfAggState *) PG_GETARG_POINTER(0);
	QFilter    *filter;
	QfHeader	header;
	QfCursor	cursor;
	uint64		fingerprint;
	MemoryContext old;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	filter = PG_GETARG_QFILTER_P(1);
	QFilterReadHeader(filter, &header);
	if (state == NULL)
	{
		state = MemoryContextAllocZero(aggcontext, sizeof(QfAggState));
		state->params = header;
		state->params.count = 0;
		state->fingerprints = true;
		state->room = Max(header.count, INITIAL_ROOM);
		state->items = MemoryContextAllocHuge(aggcontext, state->room * sizeof(uint64));
	}
	else
	{
		QFilterCheckCompatible(&state->params, &header);
		if (state->params.key_kind == BF_KIND_NONE)
		{
			state->params.key_kind = header.key_kind;
			state->params.key_tag = header.key_tag;
			state->params.env_encoding = header.env_encoding;
			state->params.env_locale = header.env_locale;
		}
	}
	old = MemoryContextSwitchTo(aggcontext);
	qf_cursor_start(&cursor);
	for (uint64 i = 0; qf_cursor_next(QFilterData(filter), &header, &cursor, &fingerprint); i++)
	{
		if ((i & ((1 << 20) - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		AppendItem(state, fingerprint);
	}
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(state);
}
