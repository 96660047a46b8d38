/*-------------------------------------------------------------------------
 *
 * bloom_setagg.c
 *	  The aggregates over filters: bloom_union_agg and
 *	  bloom_intersection_agg, with the combine, serialize and deserialize
 *	  functions that parallel plans need.
 *
 * The state is one filter, a copy of the first input, into which every
 * later input is combined in place with the one routine behind | and &
 * (BloomCombineInto); a parallel plan combines the workers' filters the
 * same way, so the result does not depend on the plan.  Whether the result
 * is overfilled is checked once, at the end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/memutils.h"

#include "bloomvalue.h"

/* State of bloom_union_agg and bloom_intersection_agg. */
typedef struct BloomSetAggState
{
	Bloom	   *filter;
} BloomSetAggState;

static BloomSetAggState *
NewSetAggState(Bloom *first, MemoryContext aggcontext)
{
	BloomSetAggState *state = MemoryContextAlloc(aggcontext, sizeof(BloomSetAggState));

	state->filter = MemoryContextAlloc(aggcontext, VARSIZE(first));
	memcpy(state->filter, first, VARSIZE(first));
	return state;
}

/* Not STRICT: the state starts as NULL, and NULL filters are skipped. */
static Datum
SetAggAdd(FunctionCallInfo fcinfo, bool is_union)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, is_union ? "bloom_union_agg" : "bloom_intersection_agg");
	BloomSetAggState *state = PG_ARGISNULL(0) ? NULL
		: (BloomSetAggState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (state == NULL)
		state = NewSetAggState(PG_GETARG_BLOOM_P(1), aggcontext);
	else
		state->filter = BloomCombineInto(state->filter, PG_GETARG_BLOOM_P(1), is_union, false);
	PG_RETURN_POINTER(state);
}

/* Merges two partial states of a parallel plan. */
static Datum
SetAggCombine(FunctionCallInfo fcinfo, bool is_union)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "bloom set aggregate combine");
	BloomSetAggState *into = PG_ARGISNULL(0) ? NULL
		: (BloomSetAggState *) PG_GETARG_POINTER(0);
	BloomSetAggState *from = PG_ARGISNULL(1) ? NULL
		: (BloomSetAggState *) PG_GETARG_POINTER(1);

	if (from == NULL)
	{
		if (into == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(into);
	}
	if (into == NULL)
		PG_RETURN_POINTER(NewSetAggState(from->filter, aggcontext));
	into->filter = BloomCombineInto(into->filter, from->filter, is_union, false);
	PG_RETURN_POINTER(into);
}

PG_FUNCTION_INFO_V1(bloom_union_agg_add);
/* Transition of bloom_union_agg. */
Datum
bloom_union_agg_add(PG_FUNCTION_ARGS)
{
	return SetAggAdd(fcinfo, true);
}

PG_FUNCTION_INFO_V1(bloom_intersection_agg_add);
/* Transition of bloom_intersection_agg. */
Datum
bloom_intersection_agg_add(PG_FUNCTION_ARGS)
{
	return SetAggAdd(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bloom_union_agg_combine);
/* Combine function of bloom_union_agg. */
Datum
bloom_union_agg_combine(PG_FUNCTION_ARGS)
{
	return SetAggCombine(fcinfo, true);
}

PG_FUNCTION_INFO_V1(bloom_intersection_agg_combine);
/* Combine function of bloom_intersection_agg. */
Datum
bloom_intersection_agg_combine(PG_FUNCTION_ARGS)
{
	return SetAggCombine(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bloom_set_agg_final);
/* Final function of bloom_union_agg and bloom_intersection_agg. */
Datum
bloom_set_agg_final(PG_FUNCTION_ARGS)
{
	BloomSetAggState *state;
	Bloom	   *copy;
	BfHeader	header;

	AggregateMemoryContext(fcinfo, "bloom_set_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (BloomSetAggState *) PG_GETARG_POINTER(0);
	copy = (Bloom *) palloc(VARSIZE(state->filter));
	memcpy(copy, state->filter, VARSIZE(state->filter));
	BloomReadHeader(copy, &header);
	WarnIfOverfilled(copy, &header);
	PG_RETURN_BLOOM_P(copy);
}

PG_FUNCTION_INFO_V1(bloom_set_agg_serialize);
/* A set aggregate's state is its filter: serialised as the filter's bytes. */
Datum
bloom_set_agg_serialize(PG_FUNCTION_ARGS)
{
	BloomSetAggState *state = (BloomSetAggState *) PG_GETARG_POINTER(0);
	bytea	   *out = palloc(VARSIZE(state->filter));

	AggregateMemoryContext(fcinfo, "bloom_set_agg_serialize");
	memcpy(out, state->filter, VARSIZE(state->filter));
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(bloom_set_agg_deserialize);
/* Reads a set aggregate's state through the validator. */
Datum
bloom_set_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "bloom_set_agg_deserialize");
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);
	BloomSetAggState *state = MemoryContextAlloc(aggcontext, sizeof(BloomSetAggState));
	MemoryContext old = MemoryContextSwitchTo(aggcontext);

	state->filter = BloomFromBytes((const uint8 *) VARDATA_ANY(raw),
								   VARSIZE_ANY_EXHDR(raw),
								   ERRCODE_INVALID_BINARY_REPRESENTATION, NULL,
								   "invalid serialised bloom aggregate state", NULL);
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(state);
}
