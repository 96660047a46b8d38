/*-------------------------------------------------------------------------
 *
 * bloom_growagg.c
 *	  bloom_agg(value, capacity, fpr, growth): the fixed-size aggregate
 *	  building a growing filter (a chain of segments, see bloom.h), which
 *	  starts a segment whenever its last is full instead of overfilling;
 *	  growth 0 builds a filter of fixed size, as bloom_empty's does.
 *
 * Values go in one by one, as bloom_add adds them: in a chain a value
 * already present takes no room, which only a probe of the chain so far
 * can tell.  So the filter is the state, there is no buffering of hashes,
 * and there is no combine function: two workers' chains, each filled from
 * its first segment, would union into a first segment holding both halves,
 * over its capacity.  The planner therefore never runs this form in
 * parallel.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/memutils.h"

#include "bloomvalue.h"

typedef struct GrowAggState
{
	Bloom	   *filter;			/* in the aggregate's context */
	BfHeader	header;
	KeyType		key;
	int64		capacity;
	double		fpr;
	int32		growth;
} GrowAggState;

static GrowAggState *
NewGrowAggState(FunctionCallInfo fcinfo, int64 capacity, double fpr, int32 growth)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "bloom_agg");
	MemoryContext old = MemoryContextSwitchTo(aggcontext);
	GrowAggState *state = palloc0(sizeof(GrowAggState));

	if (growth != 0)
		state->filter = BloomAllocChain(capacity, fpr, growth);
	else
	{
		SizeFilter(capacity, fpr, &state->header);
		state->filter = BloomAlloc(&state->header);
	}
	BloomReadHeader(state->filter, &state->header);
	KeyTypeForArg(&state->key, fcinfo, 1);
	state->capacity = capacity;
	state->fpr = fpr;
	state->growth = growth;
	MemoryContextSwitchTo(old);
	CheckKeyKind(&state->header, &state->key);
	return state;
}

PG_FUNCTION_INFO_V1(bloom_agg_add_growing);
/*
 * Transition of bloom_agg(value, capacity, fpr, growth).  Not STRICT: the
 * state starts as NULL, and NULL values are skipped.
 */
Datum
bloom_agg_add_growing(PG_FUNCTION_ARGS)
{
	GrowAggState *state = PG_ARGISNULL(0) ? NULL : (GrowAggState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_agg capacity, false-positive rate and growth must not be NULL")));

	if (state == NULL)
		state = NewGrowAggState(fcinfo, PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3),
								PG_GETARG_INT32(4));
	else if (state->capacity != PG_GETARG_INT64(2) || state->fpr != PG_GETARG_FLOAT8(3) ||
			 state->growth != PG_GETARG_INT32(4))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom_agg capacity, false-positive rate and growth must be the same for every row")));

	/* a grown filter stays in the state's context: BloomAddValue repallocs */
	BloomAddValue(&state->filter, &state->header, &state->key, PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(bloom_agg_final_growing);
/* A copy: a window aggregate calls the final function again and again. */
Datum
bloom_agg_final_growing(PG_FUNCTION_ARGS)
{
	GrowAggState *state;
	Bloom	   *copy;

	AggregateMemoryContext(fcinfo, "bloom_agg");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (GrowAggState *) PG_GETARG_POINTER(0);
	copy = (Bloom *) palloc(VARSIZE(state->filter));
	memcpy(copy, state->filter, VARSIZE(state->filter));
	WarnIfOverfilled(copy, &state->header);
	PG_RETURN_BLOOM_P(copy);
}
