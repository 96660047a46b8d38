/*-------------------------------------------------------------------------
 *
 * bloomexpanded.c
 *	  The expanded form of a bloom value, so that adding keys in a loop
 *	  does not copy the whole filter per key.
 *
 * A bloom value is one varlena; every function that returns a changed
 * filter must return a new value, so `f := bloom_add(f, x)` in PL/pgSQL
 * used to copy the filter once per key.  PostgreSQL's expanded objects
 * (utils/expandeddatum.h) are the way out: a function that receives a
 * read-write pointer to an expanded value owns it and may change it in
 * place.  Here the expanded form is simply the flat value in a memory
 * context of its own, since the bits need no other representation; its
 * flattening is a copy.
 *
 * Who hands over read-write pointers: the executor, for a nested call's
 * result (bloom_add(bloom_add(f, 1), 2)), and PL/pgSQL from PostgreSQL 18
 * on for an assignment whose function's support answers
 * SupportRequestModifyInPlace (bloom_add_support, in bloomfilter.c).
 * Before 18, PL/pgSQL passes its variables read-only and the function
 * copies, as it always did.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "bloomexpanded.h"

typedef struct ExpandedBloom
{
	ExpandedObjectHeader hdr;
	Bloom	   *flat;			/* the value, in the object's context */
} ExpandedBloom;

static Size
ExpandedBloomFlatSize(ExpandedObjectHeader *eohptr)
{
	return VARSIZE(((ExpandedBloom *) eohptr)->flat);
}

static void
ExpandedBloomFlatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	memcpy(result, ((ExpandedBloom *) eohptr)->flat, allocated_size);
}

static const ExpandedObjectMethods expanded_bloom_methods = {
	ExpandedBloomFlatSize,
	ExpandedBloomFlatten
};

/* The expanded object behind a datum, if it is one of ours. */
static ExpandedBloom *
ExpandedBloomOf(Datum datum)
{
	ExpandedBloom *expanded;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(datum)))
		return NULL;
	expanded = (ExpandedBloom *) DatumGetEOHP(datum);
	if (expanded->hdr.eoh_methods != &expanded_bloom_methods)
		elog(ERROR, "expanded value is not a bloom value");
	return expanded;
}

Bloom *
ExpandedBloomFlat(Datum datum)
{
	ExpandedBloom *expanded = ExpandedBloomOf(datum);

	return expanded != NULL ? expanded->flat : NULL;
}

Bloom **
BloomArgForUpdate(FunctionCallInfo fcinfo, int argno, Datum *result)
{
	Datum		argument = PG_GETARG_DATUM(argno);
	MemoryContext context;
	MemoryContext old;
	ExpandedBloom *expanded;

	if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(argument)))
	{
		*result = argument;
		return &ExpandedBloomOf(argument)->flat;
	}

	/* one copy, straight into the new object's context */
	context = AllocSetContextCreate(CurrentMemoryContext, "expanded bloom",
									ALLOCSET_SMALL_SIZES);
	expanded = MemoryContextAlloc(context, sizeof(ExpandedBloom));
	EOH_init_header(&expanded->hdr, &expanded_bloom_methods, context);
	old = MemoryContextSwitchTo(context);
	expanded->flat = (Bloom *) PG_DETOAST_DATUM_COPY(argument);
	MemoryContextSwitchTo(old);
	*result = EOHPGetRWDatum(&expanded->hdr);
	return &expanded->flat;
}
