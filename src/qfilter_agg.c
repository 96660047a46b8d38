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
 * A state holds its items within the aggregate's memory budget (work_mem,
 * hash_mem for a hashed group: HashSpillBudget) and writes the rest to a
 * temporary file (hashspill.c), which sorts them partition by partition;
 * the final step then streams them into the filter.  The filter is the one
 * built in memory, bit for bit, as a fingerprint only grows with its hash.
 * A window aggregate has no budget (its states cannot own a file) and
 * holds everything, as before.  A parallel worker's state reaches the
 * leader whole, in one message, as bloom_agg's does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "hashspill.h"
#include "qfiltervalue.h"

/* The state of every qfilter aggregate. */
typedef struct QfAggState
{
	QfHeader	params;			/* capacity, fpr, seed and the values' kind */
	int64		asked_capacity; /* the arguments, as the first row gave */
	double		asked_fpr;		/* them (0 capacity: self-sizing) */
	bool		self_sizing;	/* capacity is the number of items */
	bool		fingerprints;	/* items are fingerprints, not hashes */
	uint64	   *items;			/* held in memory */
	Size		n;				/* items held */
	Size		room;
	uint64		total;			/* items added, held or spilled */
	MemoryContext context;		/* the aggregate's: all of the state */
	Size		budget;			/* bytes for items (0: no limit) */
	Size		hold_at;		/* most items held within the budget */
	HashSpill  *spill;			/* the items past hold_at; NULL till then */
	bool		from_message;	/* deserialised: consumed by a combine */
} QfAggState;

#define INITIAL_ROOM 1024

/* Items read from a temporary file or a state at once. */
#define READ_CHUNK 8192

/* An empty state with params, its budget the calling aggregate's. */
static QfAggState *
EmptyState(FunctionCallInfo fcinfo, MemoryContext aggcontext, const QfHeader *params)
{
	QfAggState *state = MemoryContextAllocZero(aggcontext, sizeof(QfAggState));

	state->params = *params;
	state->context = aggcontext;
	state->budget = HashSpillBudget(fcinfo);
	state->hold_at = state->budget > 0 ? HashSpillBufferHashes(state->budget) : 0;
	state->room = INITIAL_ROOM;
	state->items = MemoryContextAlloc(aggcontext, state->room * sizeof(uint64));
	return state;
}

static QfAggState *
NewState(FunctionCallInfo fcinfo, MemoryContext aggcontext, int64 capacity, double fpr)
{
	QfHeader	params;
	QfAggState *state;

	/* sizing errors surface on the first row, not at the end */
	QFilterSize(capacity > 0 ? capacity : 1, fpr, &params);
	state = EmptyState(fcinfo, aggcontext, &params);
	state->self_sizing = capacity <= 0;
	state->asked_capacity = capacity;
	state->asked_fpr = fpr;
	return state;
}

/* Writes the items held to the state's temporary file, made if need be. */
static void
SpillHeld(FunctionCallInfo fcinfo, QfAggState *state)
{
	if (state->spill == NULL)
	{
		elog(DEBUG1, "qfilter aggregate state spills its items to a temporary file");
		state->spill = HashSpillCreate(fcinfo, state->context, state->budget);
	}
	HashSpillWrite(state->spill, state->items, state->n);
	state->n = 0;
}

/* Room for one more item: a larger buffer, or an empty one past the budget. */
static void
MakeRoom(FunctionCallInfo fcinfo, QfAggState *state)
{
	Size		room;

	if (state->n < state->room)
		return;
	if (state->hold_at > 0 && state->room >= state->hold_at)
	{
		SpillHeld(fcinfo, state);
		return;
	}
	room = state->room * 2;
	if (state->hold_at > 0)
		room = Min(room, state->hold_at);
	state->items = repalloc_huge(state->items, room * sizeof(uint64));
	state->room = room;
}

static void
AppendItems(FunctionCallInfo fcinfo, QfAggState *state, const uint64 *items, Size n)
{
	while (n > 0)
	{
		Size		take;

		MakeRoom(fcinfo, state);
		take = Min(n, state->room - state->n);
		memcpy(state->items + state->n, items, take * sizeof(uint64));
		state->n += take;
		state->total += take;
		items += take;
		n -= take;
	}
}

static inline void
AppendItem(FunctionCallInfo fcinfo, QfAggState *state, uint64 item)
{
	if (state->n == state->room)
		MakeRoom(fcinfo, state);
	state->items[state->n++] = item;
	state->total++;
}

/*
 * Adds every item of from, a state used no more, to into: those it holds,
 * then those of its file.  A deserialised state's memory is freed.
 */
static void
TakeItems(FunctionCallInfo fcinfo, QfAggState *into, QfAggState *from)
{
	AppendItems(fcinfo, into, from->items, from->n);
	if (from->spill != NULL)
	{
		uint64	   *chunk = palloc(READ_CHUNK * sizeof(uint64));
		Size		got;

		HashSpillRewind(from->spill);
		while ((got = HashSpillRead(from->spill, chunk, READ_CHUNK)) > 0)
		{
			CHECK_FOR_INTERRUPTS();
			AppendItems(fcinfo, into, chunk, got);
		}
		pfree(chunk);
	}
	if (from->from_message)
	{
		pfree(from->items);
		from->items = NULL;
		from->n = from->room = 0;
	}
}

/* The transition of the three forms: capacity 0 sizes itself. */
static Datum
AddValue(FunctionCallInfo fcinfo, int64 capacity, double fpr)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "qfilter_agg_add");
	QfAggState *state = PG_ARGISNULL(0) ? NewState(fcinfo, aggcontext, capacity, fpr)
		: (QfAggState *) PG_GETARG_POINTER(0);
	KeyType    *key;
	uint64		hash;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	/* the first row's would decide, and with them the order of the rows */
	if (state->asked_capacity != capacity || state->asked_fpr != fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("qfilter_agg capacity and false-positive rate must be the same for every row")));
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(KeyType));
	key = KeyTypeForArg((KeyType *) fcinfo->flinfo->fn_extra, fcinfo, 1);
	QFilterCheckKey(&state->params, key);
	QFilterKeyIntoHeader(&state->params, key);
	hash = KeyHashInline(key, PG_GETARG_DATUM(1), state->params.seed);
	AppendItem(fcinfo, state, hash);
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
 * frame was added when it entered, so one copy of its hash is there (a
 * window's state holds all: it has no budget to spill at).
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
	if (state->spill != NULL)
		PG_RETURN_NULL();		/* cannot happen either: recompute */
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(KeyType));
	key = KeyTypeForArg((KeyType *) fcinfo->flinfo->fn_extra, fcinfo, 1);
	hash = KeyHashInline(key, PG_GETARG_DATUM(1), state->params.seed);
	for (Size i = state->n; i-- > 0;)
		if (state->items[i] == hash)
		{
			state->items[i] = state->items[--state->n];
			state->total--;
			PG_RETURN_POINTER(state);
		}
	PG_RETURN_NULL();			/* not found: let the executor recompute */
}

/*
 * A spilled state's items, sorted in its file, as the filter's
 * fingerprints (QfSortedSource).
 */
typedef struct SpilledSource
{
	HashSpill  *spill;
	const QfHeader *sized;		/* the universe fingerprints are taken in */
	bool		fingerprints;	/* the items are fingerprints already */
	uint64	   *piece;			/* READ_CHUNK of them */
} SpilledSource;

static Size
NextSpilled(void *arg, const uint64 **piece)
{
	SpilledSource *source = arg;
	Size		n = HashSpillRead(source->spill, source->piece, READ_CHUNK);

	if (!source->fingerprints)
		for (Size i = 0; i < n; i++)
			source->piece[i] = qf_fingerprint(source->sized, source->piece[i]);
	*piece = source->piece;
	return n;
}

static void
RestartSpilled(void *arg)
{
	HashSpillRewind(((SpilledSource *) arg)->spill);
}

/*
 * The filter of a state that outgrew its budget, or would to sort: what it
 * holds joins its file, its buffer serves to sort that, and is given back,
 * as the filter needs the memory more.  Sorting is done once: a final
 * called again reads the sorted file again.
 */
static QFilter *
BuildFromSpill(FunctionCallInfo fcinfo, QfAggState *state, const QfHeader *params,
			   const QfHeader *sized)
{
	SpilledSource spilled = {NULL, sized, state->fingerprints, NULL};
	QfSortedSource source = {NextSpilled, RestartSpilled, &spilled};
	uint64		sorted;
	QFilter    *filter;

	if (state->n > 0)
		SpillHeld(fcinfo, state);
	if (state->items != NULL)
	{
		sorted = HashSpillSort(state->spill, state->items, state->room);
		pfree(state->items);
		state->items = NULL;
		state->room = 0;
	}
	else
		sorted = HashSpillSort(state->spill, NULL, 0);
	if (sorted != state->total)
		elog(ERROR, "qfilter_agg temporary file holds " UINT64_FORMAT " of " UINT64_FORMAT " items",
			 sorted, state->total);
	spilled.spill = state->spill;
	spilled.piece = palloc(READ_CHUNK * sizeof(uint64));
	filter = QFilterBuildFrom(params, state->total, &source);
	pfree(spilled.piece);
	return filter;
}

/* The filter of a state that holds its items, sorted with a copy. */
static QFilter *
BuildInMemory(const QfAggState *state, const QfHeader *params, const QfHeader *sized)
{
	uint64	   *sorted = palloc_extended(Max(state->n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	QFilter    *filter;

	qf_sort_u64(state->items, sorted, state->n);
	if (!state->fingerprints)
		for (Size i = 0; i < state->n; i++)
			sorted[i] = qf_fingerprint(sized, state->items[i]);
	else
		memcpy(sorted, state->items, state->n * sizeof(uint64));
	filter = QFilterBuildSorted(params, sorted, state->n);
	pfree(sorted);
	return filter;
}

PG_FUNCTION_INFO_V1(qfilter_agg_final);
/*
 * Sorts the items and builds the filter; the state stays usable (windows).
 * qfilter_agg over no value but NULLs is NULL, as bloom_agg and sum are: a
 * frame that lost its last value to the inverse transition too.  Sorting
 * in memory takes a copy of the items, so a state with a budget sorts in
 * memory only while the copy fits in it too.
 */
Datum
qfilter_agg_final(PG_FUNCTION_ARGS)
{
	QfAggState *state;
	QfHeader	params;
	QfHeader	sized;
	QfStatus	status;

	AggregateMemoryContext(fcinfo, "qfilter_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (QfAggState *) PG_GETARG_POINTER(0);
	if (state->total == 0 && !state->fingerprints)
		PG_RETURN_NULL();
	params = state->params;
	if (state->self_sizing)
		QFilterSize((int64) Max(state->total, 1), params.fpr, &params);
	/* QFilterSize cleared the key identity; the values' comes back */
	params.identity = state->params.identity;

	status = qf_header_for_count(&params, state->total, &sized);
	if (status != QF_OK)
	{
		params.count = state->total;
		QFilterReportStatus(status, &params);
	}
	if (state->spill != NULL || (state->hold_at > 0 && state->n > state->hold_at / 2))
		PG_RETURN_POINTER(BuildFromSpill(fcinfo, state, &params, &sized));
	PG_RETURN_POINTER(BuildInMemory(state, &params, &sized));
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
	{
		/* both partial states saw only NULLs: a NULL state is no pointer */
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
	{
		a = EmptyState(fcinfo, aggcontext, &b->params);
		a->self_sizing = b->self_sizing;
		a->fingerprints = b->fingerprints;
	}
	else
	{
		QFilterCheckCompatible(&a->params, &b->params);
		if (a->params.identity.kind == BF_KIND_NONE)
			a->params = b->params;
	}
	TakeItems(fcinfo, a, b);
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(qfilter_agg_serialize);
/*
 * A partial state as bytes: the header fields, the flags, the items, those
 * of its file included (a message is all a Gather passes on).
 */
Datum
qfilter_agg_serialize(PG_FUNCTION_ARGS)
{
	QfAggState *state = (QfAggState *) PG_GETARG_POINTER(0);
	StringInfoData buf;
	uint64		sent;

	AggregateMemoryContext(fcinfo, "qfilter_agg_serialize");
	if (state->total > (MaxAllocSize - sizeof(QfHeader) - 16) / sizeof(uint64))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("qfilter_agg partial state of " UINT64_FORMAT " values is too large to pass to the parallel leader",
						state->total),
				 errhint("Set max_parallel_workers_per_gather to 0 for this query.")));
	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) &state->params, sizeof(QfHeader));
	pq_sendbyte(&buf, state->self_sizing);
	pq_sendbyte(&buf, state->fingerprints);
	pq_sendint64(&buf, (int64) state->total);
	enlargeStringInfo(&buf, state->total * sizeof(uint64));
	pq_sendbytes(&buf, (const char *) state->items, state->n * sizeof(uint64));
	sent = state->n;
	if (state->spill != NULL)
	{
		Size		got;

		HashSpillRewind(state->spill);
		while (sent < state->total &&
			   (got = HashSpillRead(state->spill, (uint64 *) (buf.data + buf.len),
									(Size) (state->total - sent))) > 0)
		{
			CHECK_FOR_INTERRUPTS();
			buf.len += got * sizeof(uint64);
			sent += got;
		}
	}
	if (sent != state->total)
		elog(ERROR, "qfilter_agg partial state of " UINT64_FORMAT " items found " UINT64_FORMAT,
			 state->total, sent);
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
	state->context = aggcontext;
	state->from_message = true;
	state->self_sizing = pq_getmsgbyte(&buf);
	state->fingerprints = pq_getmsgbyte(&buf);
	state->n = (Size) pq_getmsgint64(&buf);
	state->total = state->n;
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

	if (PG_ARGISNULL(1))
	{
		/* no filter yet: the state stays NULL, which final turns into NULL */
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	filter = PG_GETARG_QFILTER_P(1);
	QFilterReadHeader(filter, &header);
	if (state == NULL)
	{
		state = EmptyState(fcinfo, aggcontext, &header);
		state->params.count = 0;
		state->fingerprints = true;
	}
	else
	{
		QFilterCheckCompatible(&state->params, &header);
		if (state->params.identity.kind == BF_KIND_NONE)
			state->params.identity = header.identity;
	}
	qf_cursor_start(&cursor);
	for (uint64 i = 0; qf_cursor_next(QFilterData(filter), &header, &cursor, &fingerprint); i++)
	{
		if ((i & ((1 << 20) - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		AppendItem(fcinfo, state, fingerprint);
	}
	PG_RETURN_POINTER(state);
}
