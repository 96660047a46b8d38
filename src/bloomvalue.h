/*-------------------------------------------------------------------------
 *
 * bloomvalue.h
 *	  The bloom varlena and the helpers every glue file uses on it
 *	  (bloomvalue.c): allocation, header access, the one validation path
 *	  for bytes from outside, sizing with its user-facing errors, adding and
 *	  testing values, and combining two filters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_BLOOMVALUE_H
#define BF_BLOOMVALUE_H

#include "access/tupdesc.h"
#include "fmgr.h"
#include "nodes/nodes.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "bloom.h"
#include "keykind.h"

/* A bloom value is a varlena whose data is the core's serialised format. */
typedef struct varlena Bloom;

#define DatumGetBloomP(X)		((Bloom *) PG_DETOAST_DATUM(X))
#define PG_GETARG_BLOOM_P(n)	DatumGetBloomP(PG_GETARG_DATUM(n))
#define PG_GETARG_BLOOM_P_COPY(n) ((Bloom *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(n)))
#ifdef USE_ASSERT_CHECKING
/* every value returned passes its own input (bloom.h, "The body check") */
extern Bloom *BloomAssertSealed(Bloom *bloom);
#define PG_RETURN_BLOOM_P(x)	PG_RETURN_POINTER(BloomAssertSealed(x))
#else
#define PG_RETURN_BLOOM_P(x)	PG_RETURN_POINTER(x)
#endif

/* Soft input errors (pg_input_is_valid) exist from PostgreSQL 16 on. */
#if PG_VERSION_NUM >= 160000
#define report_input_error(escontext, ...) errsave(escontext, __VA_ARGS__)
#else
#define report_input_error(escontext, ...) ereport(ERROR, __VA_ARGS__)
#endif

static inline uint8 *
BloomData(Bloom *bloom)
{
	return (uint8 *) VARDATA(bloom);
}

static inline size_t
BloomDataLen(const Bloom *bloom)
{
	return VARSIZE(bloom) - VARHDRSZ;
}

/*
 * The false-positive rate of bloom_agg(value), and the default of
 * bloom_empty's fpr argument in bloomfilter.sql.
 */
#define BLOOM_DEFAULT_FPR 0.01

/*
 * The core's pauses (BfHooks, no memory): a cancel is answered between
 * slices of the loops over a filter's bytes.
 */
extern BF_HIDDEN const BfHooks InterruptibleSlices;

/*
 * The backend's memo of the rates sized (sizing.h), which every call of a
 * core function that sizes is given.
 */
extern BF_HIDDEN BfSizingMemo BackendSizingMemo;

/* The row type of a function with OUT parameters (bloom_info and the like). */
extern BF_HIDDEN TupleDesc ResultRowDesc(FunctionCallInfo fcinfo);

/* The aggregate's memory context; an ERROR outside an aggregate. */
extern BF_HIDDEN MemoryContext AggregateMemoryContext(FunctionCallInfo fcinfo,
													 const char *name);

/*
 * The Agg node calling an aggregate's support function, or NULL when
 * another node calls it (a window aggregate) or none does: the one place
 * that asks, for the budget, the plan shape and the row estimate.
 */
struct AggState;
extern BF_HIDDEN struct AggState *CallingAggNode(FunctionCallInfo fcinfo);

/* A new, empty filter with the given header, in the current context. */
extern BF_HIDDEN Bloom *BloomAlloc(BfHeader *header);

/* Header of a value already in the database; corruption is an ERROR. */
extern BF_HIDDEN void BloomReadHeader(Bloom *bloom, BfHeader *header);

/*
 * The glue's one way out for a value whose bits it set itself (the
 * aggregates' bulk inserts, an index snapshot) or whose header it changed:
 * writes the header with a fresh body check (bf_seal, one pass), so that
 * the value passes its own input.  BloomSeal does it from the value alone.
 */
extern BF_HIDDEN void BloomWriteHeader(Bloom *bloom, BfHeader *header);
extern BF_HIDDEN void BloomSeal(Bloom *bloom);

/* The ERROR for a stored value whose header or length is wrong. */
extern BF_HIDDEN void ReportCorruptValue(BfStatus status);

/*
 * A validated copy of serialised bytes from outside (text input, binary
 * receive, the bytea cast, aggregate deserialisation), or NULL after a soft
 * error.
 */
extern BF_HIDDEN Bloom *BloomFromBytes(const uint8 *bytes, size_t len, int sqlstate,
									   Node *escontext, const char *message,
									   const char *shown);

/*
 * The text forms of bloom and qfilter: a prefix ("bloom:") and the base64
 * of the serialised value.  DecodeTextForm returns the bytes (palloc'd,
 * *len of them, not yet validated) or NULL after a soft error; both raise
 * errors that name the type.
 */
extern BF_HIDDEN uint8 *DecodeTextForm(const char *input, const char *prefix,
									   const char *type_name, Node *escontext, size_t *len);
extern BF_HIDDEN char *EncodeTextForm(const uint8 *bytes, size_t len, const char *prefix,
									  const char *type_name);

/* Sizes a filter for (capacity, fpr): the header every constructor uses. */
extern BF_HIDDEN void SizeFilter(int64 capacity, double fpr, BfHeader *header);

/*
 * Raises the error bloom_empty would for these parameters (growth 0: a
 * filter of fixed size); the one check of capacity, rate and growth.
 */
extern BF_HIDDEN void CheckFilterParameters(int64 capacity, double fpr, int32 growth);

/*
 * A new growing filter (a chain), which grows (in its own memory context)
 * as values are added.
 */
extern BF_HIDDEN Bloom *BloomAllocChain(int64 capacity, double fpr, int32 growth);

/*
 * Refuses a key whose identity differs from the filter's (a false negative
 * otherwise), and records the identity of the first key added: keykind.c's
 * checks, under the header's version (version 1 records no environment).
 */
extern BF_HIDDEN void BloomCheckKey(const BfHeader *header, const KeyType *key);
extern BF_HIDDEN void BloomKeyIntoHeader(BfHeader *header, const KeyType *key);

/*
 * Adding to *bloom, a filter the caller owns, whose header it decoded and
 * whose key it checked: *bloom moves when a chain grows.  BloomAddHashes
 * needs the key identity already in the header.
 */
extern BF_HIDDEN void BloomAddHashes(Bloom **bloom, BfHeader *header,
									 const uint64 *hashes, size_t n);
extern BF_HIDDEN void BloomAddValue(Bloom **bloom, BfHeader *header, const KeyType *key,
									Datum value);
extern BF_HIDDEN bool BloomTestValue(Bloom *bloom, const BfHeader *header,
									 const KeyType *key, Datum value);

/*
 * BloomTestValue in two steps, for a caller that hashes many values first
 * and tests them later (the batched scan, bloomscan.c): the hash a value
 * probes with in this filter, and the test of such a hash.
 */
static inline uint64
BloomHashValue(const BfHeader *header, const KeyType *key, Datum value)
{
	return KeyHash(key, value, header->seed, header->version);
}

static inline bool
BloomTestHash(Bloom *bloom, const BfHeader *header, uint64 hash)
{
	if (header->identity.kind == BF_KIND_NONE)
		return false;			/* nothing was ever added */
	return bf_filter_test(BloomData(bloom), header, hash);
}

/*
 * The core's estimates over every segment (bf_estimate), in a loop that
 * answers a cancel.
 */
extern BF_HIDDEN void BloomEstimates(Bloom *bloom, const BfHeader *header,
									 BfEstimate *estimate);
extern BF_HIDDEN double BloomEstimatedFpr(Bloom *bloom, const BfHeader *header);

/*
 * Union or intersection of src into dst, which the caller owns; a union
 * warns if dst ends up overfilled, unless the caller checks at its end.
 * Returns dst, moved when a union with a longer chain grew it.
 */
extern BF_HIDDEN Bloom *BloomCombineInto(Bloom *dst, Bloom *src, bool is_union,
										 bool warn_overfilled);

/*
 * An add or union warns once a filter's false-positive rate passes twice its
 * target (bloom_info's over_capacity is the core's, BF_OVER_CAPACITY_MARGIN).
 */
#define OVERFILL_RATE_FACTOR 2.0
extern BF_HIDDEN void WarnIfOverfilled(Bloom *bloom, const BfHeader *header);

/*
 * The once-per-statement bookkeeping of an overfill warning, one per kind
 * of filter (bloom's above, qfilter's): OverfillCheckDue says whether to
 * measure the rate now (not after this statement warned, and again within
 * it only once the count grew by a tenth) and records that it did;
 * OverfillWarned records the warning.
 */
typedef struct OverfillThrottle
{
	int64		warned_statement;	/* statement start timestamps */
	int64		checked_statement;
	uint64		checked_count;
} OverfillThrottle;

extern BF_HIDDEN bool OverfillCheckDue(OverfillThrottle *throttle, uint64 count);
extern BF_HIDDEN void OverfillWarned(OverfillThrottle *throttle);

#endif							/* BF_BLOOMVALUE_H */
