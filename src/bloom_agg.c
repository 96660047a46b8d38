/*-------------------------------------------------------------------------
 *
 * bloom_agg.c
 *	  bloom_agg in its four forms, with the combine, serialize and
 *	  deserialize functions that parallel plans need.  In sections: the hash buffer's
 *	  memory, what to do with a full buffer, the transition, final and
 *	  combine, serialize and deserialize.  The aggregates over filters
 *	  (bloom_union_agg, bloom_intersection_agg) are bloom_setagg.c's.
 *	  De-duplication itself is the core's (hashbuf.c); the temporary file
 *	  of a state past its memory budget is hashspill.c's; the parallel
 *	  leader's hand-over of its own state is handover.c's.
 *
 * bloom_agg collects hashes, not bits
 * -----------------------------------
 * Every form of bloom_agg starts by collecting the 64-bit hashes of its
 * values, 8 bytes per value.  The self-sizing forms (no capacity given) must:
 * they learn how many distinct values there are only at the end, when the
 * buffer is de-duplicated and the filter sized for what is left.
 * While running, a full buffer is de-duplicated in place before it is grown,
 * so duplicates cost no memory.
 *
 * Past its memory budget (work_mem, or hash_mem in a hashed GROUP BY) a
 * self-sizing state de-duplicates its buffer and, unless that halved it,
 * writes it to a temporary file (hashspill.c) and starts afresh.  The final
 * function counts the distinct hashes on disk partition by partition, gives
 * its buffer back, and inserts them from the file into the filter, which
 * is the one built in memory bit for bit: it depends only on the set of
 * hashes and the count of rows.  Where no duplicate showed in memory and
 * the filter sized for the rows fits the budget, it guesses that size and
 * inserts each partition's hashes as the count has them, one pass over the
 * file fewer; duplicates the count finds make it start again.  Only a group
 * whose own hashes exceed the budget opens a file.
 *
 * The growing form (capacity, fpr and growth given) collects hashes as the
 * self-sizing forms do, and builds its chain of segments at the end (bloom.h)
 * from the distinct hashes in one fixed order: a chain skips a value it may
 * already hold, and fills its segments one after another, so its bits
 * depend on the order values arrive in; one order makes them a function of
 * the set alone, the same in a serial plan, a parallel one and a
 * recomputation.  The order is not the hashes' own: a segment would then
 * take a narrow range of them, all in a few of its blocks, and answer
 * "maybe" far too often.  It is the order of a bijective mix of each hash
 * (ChainOrderKey), which the state keeps instead of the hash, so that the
 * sort the other forms use puts them in it.
 *
 * The fixed form (capacity given) switches to the filter's bits as soon as
 * its hashes would take more room than the bits.  A GROUP BY with many small
 * groups thus holds a few hashes per group, not one full filter per group.
 *
 * De-duplicated hashes come out grouped by their high bits, which pick the
 * block, so inserting them walks a large filter in order instead of taking
 * one cache miss per value.
 *
 * Because the final filter depends only on the set of hashes and the count
 * of values, a parallel plan's partial states combine into a filter that is
 * bit for bit the one a serial plan builds.  Each process only groups its
 * hashes (a worker that met many duplicates also drops them); the leader
 * keeps the buffers as they arrive, counts their union group by group, and
 * inserts each buffer, so that its serial share of the work is a count and
 * an insert, with nothing merged or copied.  The leader's own partial
 * state does not even travel: handover.c passes it in memory.
 *
 * A spilled state travels as its distinct hashes, read from its file into
 * the message, or, the leader's own, is handed over with its file and read
 * into the combining state.  A combining state whose buffers exceed the
 * budget writes them to its own file, freeing those received in messages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "bloomvalue.h"
#include "handover.h"
#include "hashbuf.h"
#include "hashspill.h"
#include "largevalue.h"
#include "qfilter.h"

/*
 * The growing form's order (see the file's header): MurmurHash3's 64-bit
 * finaliser, a bijection whose every output bit depends on every input
 * bit, and its inverse, which gives the hash back from a kept key.
 */
static inline uint64
ChainOrderKey(uint64 hash)
{
	hash ^= hash >> 33;
	hash *= UINT64CONST(0xff51afd7ed558ccd);
	hash ^= hash >> 33;
	hash *= UINT64CONST(0xc4ceb9fe1a85ec53);
	hash ^= hash >> 33;
	return hash;
}

static inline uint64
ChainOrderHash(uint64 key)
{
	key ^= key >> 33;
	key *= UINT64CONST(0x9cb4b2f8129337db);
	key ^= key >> 33;
	key *= UINT64CONST(0x4f74430c22a54005);
	key ^= key >> 33;
	return key;
}

/*
 * Hashes the fixed form buffers, once it holds bits, before inserting them:
 * an eighth of the filter's size, within these bounds.  Inserting into a
 * filter larger than the cache is a cache miss per hash, hidden by
 * prefetching ahead within a batch; a longer batch restarts that pipeline
 * less often, and the bound keeps a small group's state small.
 */
#define PENDING_SHARE_OF_FILTER 8
#define MIN_PENDING 256
#define MAX_PENDING 4096

/* Smallest hash buffer. */
#define MIN_HASHES 8

/*
 * The self-sizing forms de-duplicate their buffer first when it holds
 * FIRST_COMPACTION_AT hashes.  A pass that removes a quarter or more found
 * many duplicates: the buffer then keeps its size while a quarter of it is
 * free, and the next pass comes as soon.  A pass that removes less means
 * mostly distinct values, for which de-duplicating is a waste of time: the
 * next waits until the buffer has grown COMPACTION_BACKOFF-fold, so that at
 * most 1/63 of the rows are de-duplicated in vain.
 */
#define FIRST_COMPACTION_AT 1024
#define COMPACTION_BACKOFF 64

/*
 * Room for the distinct count of a combined state (CountDistinct): this
 * many times an average group, since uneven groups mean duplicates, plus a
 * floor for small states.
 */
#define COUNT_ROOM_GROUPS 4
#define COUNT_ROOM_MIN 8192

/*
 * Plain aggregates the planner expects to see at least this many rows
 * reserve their hash buffer up front (ReserveHashes), up to the most.
 */
#define RESERVE_FROM 65536
#define MAX_RESERVED (1 << 24)

/* A reservation's margin over the planner's estimate, as estimates are estimates. */
#define RESERVE_MARGIN 1.25

/* Hashes beyond which de-duplication is worth a scratch buffer. */
#define SCRATCH_FROM 65536

/* Hashes the final function inserts between two checks for a cancel. */
#define INSERT_CHUNK 8192

/* Room before the hashes in a serialised state, for its other fields. */
#define SERIAL_HEADER_ROOM 64

/*
 * First byte of a serialised aggregate state (internal to a query): a whole
 * state, or the name of one handed over within this process.
 */
#define AGG_STATE_VERSION 4
#define AGG_STATE_HANDED_OVER 3

typedef struct BloomAggState
{
	MemoryContext aggcontext;	/* where the state and its buffers live */
	int64		capacity;		/* fixed form; 0 for the self-sizing forms */
	double		fpr;
	int64		chain_capacity; /* growing form: its first segment's capacity */
	int32		growth;			/* growing form: its growth; 0 otherwise */
	BfKeyIdentity identity;		/* of the values seen; BF_KIND_NONE before */
	uint64		rows;			/* non-NULL values added */

	/*
	 * How the transition hashes its column: looked up for the first row,
	 * fixed for the call site and so for the state.  NULL in a state made by
	 * combine or deserialize, which hash nothing.
	 */
	const KeyType *key;

	/*
	 * Hashes not yet in the filter (all of them, until there is one).  The
	 * buffer has room for "allocated"; "maxhashes" is how far it may fill
	 * before MakeRoom decides what to do, which grows as if the buffer did.
	 */
	uint64	   *hashes;
	void	   *hashes_block;	/* its allocation: hashes itself, unless padded */
	Size		nhashes;
	Size		maxhashes;
	Size		allocated;
	Size		compact_at;		/* self-sizing: de-duplicate when this full */
	bool		had_duplicates; /* a de-duplication removed a quarter or more */
	bool		distinct;		/* hashes are de-duplicated and grouped */
	bool		one_group;		/* of an ungrouped aggregate (AllocFilledOnce) */

	/*
	 * Self-sizing forms in an Agg node: the memory budget in bytes
	 * (HashSpillBudget), the most hashes kept in memory within it, and the
	 * temporary file past it, NULL until the buffer first spills.  budget
	 * and spill_at are 0 for the fixed form and in a window aggregate, which
	 * never spill.
	 */
	Size		budget;
	Size		spill_at;
	HashSpill  *spill;

	/* Made by bloom_agg_deserialize: a combine may free its buffer. */
	bool		from_message;

	/* Fixed form only: the bits, once they are smaller than the hashes. */
	Bloom	   *filter;

	/*
	 * Self-sizing forms, in a combine: the grouped hash buffers of the
	 * states combined, referenced rather than copied.  Each belongs to a
	 * state that is not used after it is combined and outlives this one:
	 * made by bloom_agg_deserialize in the aggregate's context, or the
	 * leader's own partial state, handed over (HandOverConsumer), which only a
	 * rescan or the end of its node resets, and those reach this state's
	 * aggregate first.  The final function counts their union group by
	 * group and inserts each as it is, since adding a hash twice changes
	 * nothing; nothing merges or copies them.  A run from a message is this
	 * state's to free once it has copied or spilled it (run_blocks).
	 */
	const uint64 **runs;
	Size	   *run_lengths;
	void	  **run_blocks;		/* a run's allocation if this state frees it */
	int			nruns;
	int			maxruns;
} BloomAggState;

/* Whether part is at most three quarters of whole: a quarter or more gone. */
static inline bool
AtMostThreeQuarters(Size part, Size whole)
{
	return part <= whole * 3 / 4;
}

/* ---------------------------------------------------------------------
 * bloom_agg: the hash buffer's memory
 * ---------------------------------------------------------------------
 */

/* Bytes of the fixed form's filter; its hashes may grow to this much. */
static Size
FixedFilterBytes(const BloomAggState *state)
{
	BfHeader	header;

	SizeFilter(state->capacity, state->fpr, &header);
	return bf_value_bytes(header.nblocks);
}

/*
 * A hash buffer for n hashes of the state that is filled once from end to
 * end (a reservation, scratch space, a deserialised state), on huge pages
 * where the kernel has them.  The 4 kB pages at an unaligned buffer's start
 * and end are a fault each, a large share of a parallel leader's faults, so
 * a large buffer of an ungrouped aggregate is padded: it starts on a huge
 * page boundary and owns the huge page its end falls in.  That costs up
 * to 4 MB more of the context's memory and up to one huge page resident
 * past the end, fine for the one state of an ungrouped aggregate but not
 * for the states of a hashed GROUP BY, which count against hash_mem.  Sets
 * *block to the allocation, which pfree takes.  NULL when the memory is not
 * there.
 */
static uint64 *
AllocFilledOnce(const BloomAggState *state, Size n, void **block)
{
	Size		bytes = n * sizeof(uint64);
	char	   *raw;

#ifdef HUGE_PAGE_BYTES
	if (state->one_group && bytes >= HUGE_PAGE_BYTES)
	{
		uint64	   *hashes;

		raw = MemoryContextAllocExtended(state->aggcontext, bytes + 2 * HUGE_PAGE_BYTES,
										 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (raw == NULL)
			return NULL;
		/* past raw even if it is aligned: hashes != block marks the padding */
		hashes = (uint64 *) TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) raw + 1);
		AdviseHugePages(hashes, TYPEALIGN(HUGE_PAGE_BYTES, bytes));
		*block = raw;
		return hashes;
	}
#endif
	raw = MemoryContextAllocExtended(state->aggcontext, bytes,
									 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (raw != NULL)
		AdviseHugePages(raw, bytes);
	*block = raw;
	return (uint64 *) raw;
}

/*
 * Whether scratch space for n hashes fits in the state's budget next to its
 * buffer.  Scratch only speeds things up, so past the budget, work is done in
 * place instead.
 */
static bool
ScratchFits(const BloomAggState *state, Size n)
{
	return state->spill_at == 0 ||
		(state->nhashes + n) * sizeof(uint64) <= state->budget;
}

/* Makes "hashes", in allocation "block", the state's buffer, freeing the old one. */
static void
ReplaceHashes(BloomAggState *state, uint64 *hashes, void *block, Size allocated)
{
	if (state->hashes_block != NULL)
		pfree(state->hashes_block);
	state->hashes = hashes;
	state->hashes_block = block;
	state->allocated = allocated;
}

/*
 * Lets the buffer fill by half as much again, growing it if it was not
 * reserved that large.  No huge pages on a grown buffer: madvise on part of
 * a mapping splits it, and glibc's realloc then can no longer move the
 * mapping with mremap but copies it, into new memory that faults in
 * again.  A padded
 * buffer (AllocFilledOnce) is copied out of, as it cannot be reallocated.
 */
static void
GrowHashes(BloomAggState *state, Size wanted)
{
	Size		newmax = Max(Max(wanted, MIN_HASHES), state->maxhashes + state->maxhashes / 2);

	/* a state that spills grows no further than its budget */
	if (state->spill_at > 0 && newmax > state->spill_at && wanted <= state->spill_at)
		newmax = state->spill_at;
	if (newmax > MaxAllocHugeSize / sizeof(uint64))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many values for one bloom_agg")));
	/* a reservation is used up before anything is moved */
	if (newmax > state->allocated && wanted <= state->allocated &&
		state->maxhashes < state->allocated)
		newmax = state->allocated;
	if (newmax > state->allocated && state->hashes != NULL &&
		state->hashes == state->hashes_block)
	{
		state->hashes = repalloc_huge(state->hashes, newmax * sizeof(uint64));
		state->hashes_block = state->hashes;
		state->allocated = newmax;
	}
	else if (newmax > state->allocated)
	{
		uint64	   *grown = MemoryContextAllocHuge(state->aggcontext, newmax * sizeof(uint64));

		if (state->nhashes > 0)
			memcpy(grown, state->hashes, state->nhashes * sizeof(uint64));
		ReplaceHashes(state, grown, grown, newmax);
	}
	state->maxhashes = newmax;
}

/*
 * Rows the planner expects an ungrouped aggregate to see, or 0 when there
 * are groups or the caller is not an Agg node.  In a parallel plan it is one
 * process's share.
 */
static double
ExpectedRows(FunctionCallInfo fcinfo)
{
	Agg		   *agg;

	if (!UngroupedAggregate(fcinfo))
		return 0;
	agg = (Agg *) CallingAggNode(fcinfo)->ss.ps.plan;
	if (outerPlan(agg) == NULL)
		return 0;
	return outerPlan(agg)->plan_rows;
}

/*
 * Reserves the hash buffer for the rows the planner expects, on huge pages.
 * Growing a large buffer instead costs either a copy per step (glibc
 * reallocates on its heap by copying, and a backend's heap is where large
 * blocks go once a larger one has been freed, after an array_agg say) or,
 * moved with mremap, a page fault per 4 kB.  Memory reserved but
 * never written costs address space only, so an overestimate is cheap; the
 * fixed form needs at most its filter's size, when it switches to bits.
 * Best effort: no reservation if the allocation fails.
 */
static void
ReserveHashes(BloomAggState *state, double expected)
{
	Size		reserve;

	if (!(expected >= RESERVE_FROM))	/* also false for NaN */
		return;
	expected *= RESERVE_MARGIN;
	reserve = expected < MAX_RESERVED ? (Size) expected : MAX_RESERVED;
	if (state->spill_at > 0)
		reserve = Min(reserve, state->spill_at);
	if (state->capacity > 0)
		reserve = Min(reserve, FixedFilterBytes(state) / sizeof(uint64));
	state->hashes = AllocFilledOnce(state, reserve, &state->hashes_block);
	if (state->hashes != NULL)
		state->allocated = reserve;
}

/* ---------------------------------------------------------------------
 * bloom_agg: what to do with a full buffer
 * ---------------------------------------------------------------------
 */

/*
 * De-duplicates the buffer unless it already is: the self-sizing forms count
 * what is left, and the result inserts in block order.
 */
static void
DistinctHashes(BloomAggState *state, bool at_end)
{
	uint64	   *scratch = NULL;
	void	   *scratch_block = NULL;
	uint64	   *placed;
	Size		room = state->nhashes;

	if (state->distinct)
		return;

	/*
	 * Scratch space makes a buffer larger than the cache much faster.  It is
	 * taken only at the end of a state's life (final, serialize), so while
	 * rows come in the state stays at 8 bytes per value.  The distinct
	 * hashes usually end up in it, and then it becomes the buffer.
	 */
	if (at_end && room > SCRATCH_FROM && ScratchFits(state, room))
		scratch = AllocFilledOnce(state, room, &scratch_block);
	state->nhashes = bf_distinct_hashes_placed(state->hashes, room, scratch, &placed);
	if (placed == scratch)
	{
		ReplaceHashes(state, scratch, scratch_block, room);
		state->maxhashes = room;
	}
	else if (scratch != NULL)
		pfree(scratch_block);
	state->distinct = true;
}

/* Moves the buffered hashes into the filter (fixed form only). */
static void
FlushHashes(BloomAggState *state)
{
	BfHeader	header;

	BloomReadHeader(state->filter, &header);
	bf_add_hashes(bf_bits(BloomData(state->filter)), header.nblocks, header.k,
				  state->hashes, state->nhashes);
	state->nhashes = 0;
	state->distinct = true;
}

/* The fixed form's switch from hashes to bits. */
static void
MaterializeFilter(BloomAggState *state)
{
	BfHeader	header;
	uint64	   *pending;
	MemoryContext old = MemoryContextSwitchTo(state->aggcontext);

	SizeFilter(state->capacity, state->fpr, &header);
	header.identity = state->identity;	/* a filter with bits needs its kind */
	state->filter = BloomAlloc(&header);
	MemoryContextSwitchTo(old);

	/*
	 * In arrival order: de-duplicating them in place first, for block
	 * order, took longer than the cache misses it saved.
	 */
	FlushHashes(state);
	state->maxhashes = Max(MIN_PENDING,
						   Min(MAX_PENDING, VARSIZE(state->filter) /
							   PENDING_SHARE_OF_FILTER / sizeof(uint64)));
	pending = MemoryContextAlloc(state->aggcontext, state->maxhashes * sizeof(uint64));
	ReplaceHashes(state, pending, pending, state->maxhashes);
}

/* Makes a spilling state's temporary file, registered with its aggregate. */
static void
StartSpilling(FunctionCallInfo fcinfo, BloomAggState *state)
{
	if (state->spill != NULL)
		return;
	elog(DEBUG1, "bloom_agg state spills its hashes to a temporary file");
	state->spill = HashSpillCreate(fcinfo, state->aggcontext, state->budget);
}

/*
 * A self-sizing state at its budget writes its buffer to its temporary
 * file and empties it ("all": whatever it holds).  It de-duplicates the
 * buffer first, the first time and whenever duplicates have shown, and
 * keeps it if that halved it, so that a column of few distinct values never
 * touches disk.  A buffer of distinct values is written as it is: the
 * final function de-duplicates what is on disk anyway.
 */
static void
SpillHashes(FunctionCallInfo fcinfo, BloomAggState *state, bool all)
{
	Size		before = state->nhashes;

	if (state->spill == NULL || state->had_duplicates)
	{
		DistinctHashes(state, false);
		state->had_duplicates |= AtMostThreeQuarters(state->nhashes, before);
		if (!all && state->nhashes <= state->spill_at / 2)
			return;
	}
	StartSpilling(fcinfo, state);
	HashSpillWrite(state->spill, state->hashes, state->nhashes);
	state->nhashes = 0;
	state->distinct = true;
}

/*
 * Makes room for at least one more hash: flushes into the filter, drops
 * duplicates, spills, switches to bits, or grows, whichever fits the state.
 */
static void
MakeRoom(FunctionCallInfo fcinfo, BloomAggState *state, Size incoming)
{
	if (state->nhashes + incoming <= state->maxhashes)
		return;
	if (state->filter != NULL)
	{
		FlushHashes(state);
		if (incoming <= state->maxhashes)
			return;
	}
	else if (state->capacity > 0 &&
			 (state->nhashes + incoming) * sizeof(uint64) >= FixedFilterBytes(state))
	{
		MaterializeFilter(state);
		if (incoming <= state->maxhashes)
			return;
		FlushHashes(state);
	}
	else if (state->spill_at > 0 && state->nhashes + incoming > state->spill_at)
	{
		SpillHashes(fcinfo, state, false);
		if (state->nhashes + incoming <= state->maxhashes)
			return;
	}
	else if (state->capacity == 0 && state->nhashes >= state->compact_at)
	{
		Size		before = state->nhashes;

		bool		many_duplicates;

		DistinctHashes(state, false);
		many_duplicates = AtMostThreeQuarters(state->nhashes, before);
		state->compact_at = many_duplicates ? FIRST_COMPACTION_AT
			: before * COMPACTION_BACKOFF;
		state->had_duplicates |= many_duplicates;
		if (AtMostThreeQuarters(state->nhashes + incoming, state->maxhashes))
			return;
	}
	GrowHashes(state, state->nhashes + incoming);
}

static inline void
AppendHash(FunctionCallInfo fcinfo, BloomAggState *state, uint64 hash)
{
	if (state->nhashes == state->maxhashes)
		MakeRoom(fcinfo, state, 1);
	state->hashes[state->nhashes++] = hash;
	state->distinct = false;
}

/* ---------------------------------------------------------------------
 * bloom_agg: the transition
 * ---------------------------------------------------------------------
 */

/*
 * Records the identity of the values; one aggregate call sees a single
 * column, so a mismatch can only come from a combine of foreign states.
 */
static void
NoteKeyIdentity(BloomAggState *state, const BfKeyIdentity *identity)
{
	if (!bf_key_identity_compatible(&state->identity, identity))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot combine bloom_agg states built from values of different kinds")));
	if (identity->kind != BF_KIND_NONE)
		state->identity = *identity;
}

static BloomAggState *
NewAggState(FunctionCallInfo fcinfo, int64 capacity, double fpr, MemoryContext aggcontext)
{
	BloomAggState *state;
	BfHeader	unused;

	/* rejects bad parameters at the first row, not at the end */
	SizeFilter(capacity == 0 ? 1 : capacity, fpr, &unused);
	state = MemoryContextAllocZero(aggcontext, sizeof(BloomAggState));
	state->aggcontext = aggcontext;
	state->capacity = capacity;
	state->fpr = fpr;
	state->compact_at = FIRST_COMPACTION_AT;
	state->distinct = true;
	state->one_group = UngroupedAggregate(fcinfo);
	if (capacity == 0)
	{
		state->budget = HashSpillBudget(fcinfo);
		if (state->budget > 0)
			state->spill_at = HashSpillBufferHashes(state->budget);
	}
	return state;
}

/* The key type of the aggregated column, kept for the transition's call site. */
static const KeyType *
ColumnKeyType(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(KeyType));
	return KeyTypeForArg((KeyType *) fcinfo->flinfo->fn_extra, fcinfo, 1);
}

/*
 * The first row's state.  Apart from the transition, so that the per-row
 * path has no locals in memory (and no stack protector to pay for them).
 */
static pg_noinline BloomAggState *
FirstAggState(FunctionCallInfo fcinfo, int64 capacity, double fpr, int32 growth)
{
	BloomAggState *state;

	if (growth != 0)
		CheckFilterParameters(capacity, fpr, growth);
	state = NewAggState(fcinfo, growth != 0 ? 0 : capacity, fpr,
						AggregateMemoryContext(fcinfo, "bloom_agg"));
	if (growth != 0)
	{
		state->chain_capacity = capacity;
		state->growth = growth;
	}

	ReserveHashes(state, ExpectedRows(fcinfo));
	state->key = ColumnKeyType(fcinfo);
	NoteKeyIdentity(state, &state->key->identity);
	return state;
}

/*
 * The aggregated composite's type was altered while the aggregate ran:
 * ALTER TYPE does not wait for the statements that read the type, and a
 * scan takes its invalidation in at the next relation lock (a TOAST
 * fetch).  Rows hashed before and after would share the filter's one key
 * tag, and a probe under either definition would miss the others' keys:
 * refused, unless the shape, and so the tag, is what it was.  (KeyHash
 * refuses a change taken in while a value is hashed.)
 */
static pg_noinline void
CheckKeyShapeKept(FunctionCallInfo fcinfo, BloomAggState *state)
{
	state->key = ColumnKeyType(fcinfo);
	if (state->key->identity.tag != state->identity.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the type of bloom_agg's values, %s, was altered while the aggregate ran",
						format_type_be(state->key->typid)),
				 errdetail("Its values hash differently under the new definition."),
				 errhint("Run the aggregate again.")));
}

/* The parameters of the state's form: capacity, rate and growth as given. */
static inline bool
SameForm(const BloomAggState *state, int64 capacity, double fpr, int32 growth)
{
	return state->fpr == fpr && state->growth == growth &&
		(growth != 0 ? state->chain_capacity : state->capacity) == capacity;
}

/*
 * The transition shared by the four forms.  capacity 0 means self-sizing,
 * growth other than 0 growing.  Not STRICT: the state starts as NULL, and
 * NULL values are skipped.  Only a new state needs the aggregate's context;
 * a state can only come from an aggregate, so later rows skip the check.
 */
static pg_attribute_always_inline Datum
AggAdd(FunctionCallInfo fcinfo, int64 capacity, double fpr, int32 growth)
{
	BloomAggState *state = PG_ARGISNULL(0) ? NULL
		: (BloomAggState *) PG_GETARG_POINTER(0);
	uint64		hash;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	if (state == NULL)
		state = FirstAggState(fcinfo, capacity, fpr, growth);
	else if (!SameForm(state, capacity, fpr, growth))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 growth != 0
				 ? errmsg("bloom_agg capacity, false-positive rate and growth must be the same for every row")
				 : errmsg("bloom_agg capacity and false-positive rate must be the same for every row")));

	if (unlikely(!KeyTypeIsCurrent(state->key)))
		CheckKeyShapeKept(fcinfo, state);
	hash = KeyHashInline(state->key, PG_GETARG_DATUM(1), 0);
	AppendHash(fcinfo, state, growth != 0 ? ChainOrderKey(hash) : hash);
	state->rows = bf_count_add(state->rows, 1);
	PG_RETURN_POINTER(state);
}

static double
FprArg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_agg false-positive rate must not be NULL")));
	return PG_GETARG_FLOAT8(argno);
}

PG_FUNCTION_INFO_V1(bloom_agg_add);
/* Transition of bloom_agg(value): self-sizing at fpr 0.01. */
Datum
bloom_agg_add(PG_FUNCTION_ARGS)
{
	return AggAdd(fcinfo, 0, BLOOM_DEFAULT_FPR, 0);
}

PG_FUNCTION_INFO_V1(bloom_agg_add_fpr);
/* Transition of bloom_agg(value, fpr): self-sizing. */
Datum
bloom_agg_add_fpr(PG_FUNCTION_ARGS)
{
	return AggAdd(fcinfo, 0, FprArg(fcinfo, 2), 0);
}

/*
 * Raises sizing's error for a capacity below 1.  Apart from the transition,
 * so that its header on the stack does not give the per-row path a stack
 * protector to pay for.
 */
static pg_noinline void
RejectCapacity(int64 capacity, double fpr)
{
	BfHeader	unused;

	SizeFilter(capacity, fpr, &unused);
}

/*
 * Transition of bloom_agg(value, capacity, fpr): fixed size.  The entry
 * points call it directly rather than each other: a call to an exported
 * symbol could bind to another build's, were two loaded (bench/ab.sh).
 */
static Datum
AggAddFixed(FunctionCallInfo fcinfo)
{
	int64		capacity;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_agg capacity must not be NULL")));
	capacity = PG_GETARG_INT64(2);
	if (capacity < 1)
		RejectCapacity(capacity, FprArg(fcinfo, 3));
	return AggAdd(fcinfo, capacity, FprArg(fcinfo, 3), 0);
}

PG_FUNCTION_INFO_V1(bloom_agg_add_fixed);
Datum
bloom_agg_add_fixed(PG_FUNCTION_ARGS)
{
	return AggAddFixed(fcinfo);
}

PG_FUNCTION_INFO_V1(bloom_agg_add_growing);
/*
 * Transition of bloom_agg(value, capacity, fpr, growth): a chain from
 * growth 2 on; growth 0 is the fixed form, as bloom_empty's is.
 */
Datum
bloom_agg_add_growing(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_agg capacity, false-positive rate and growth must not be NULL")));
	if (PG_GETARG_INT32(4) == 0)
		return AggAddFixed(fcinfo);
	return AggAdd(fcinfo, PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3), PG_GETARG_INT32(4));
}

/* ---------------------------------------------------------------------
 * bloom_agg: final and combine
 * ---------------------------------------------------------------------
 */

/* Copies the runs into the state's own buffer, to be de-duplicated there. */
static void
ConcatenateRuns(BloomAggState *state)
{
	Size		total = state->nhashes;

	for (int r = 0; r < state->nruns; r++)
		total += state->run_lengths[r];
	if (total > state->maxhashes)
		GrowHashes(state, total);
	for (int r = 0; r < state->nruns; r++)
	{
		memcpy(state->hashes + state->nhashes, state->runs[r],
			   state->run_lengths[r] * sizeof(uint64));
		state->nhashes += state->run_lengths[r];
		if (state->run_blocks[r] != NULL)
			pfree(state->run_blocks[r]);
	}
	if (state->nruns > 0)
		state->distinct = false;
	state->nruns = 0;
}

/*
 * Keeps another state's hashes as a run (self-sizing combine).  block, if
 * not NULL, is their allocation, which this state then frees when done.
 */
static void
AddRun(BloomAggState *into, const uint64 *hashes, Size n, void *block)
{
	if (n == 0)
		return;

	/*
	 * Past the count can take in one go (one is kept for the state's own
	 * buffer), the runs so far become the state's own hashes, de-duplicated
	 * so that memory follows their union, not their sum.
	 */
	if (into->nruns == BF_MAX_GROUPED_BUFFERS - 1)
	{
		ConcatenateRuns(into);
		DistinctHashes(into, false);
	}
	/* A few slots first: a parallel GROUP BY may have millions of groups. */
	if (into->nruns == into->maxruns)
	{
		int			newmax = into->maxruns == 0 ? 4 : 2 * into->maxruns;

		if (into->runs == NULL)
		{
			into->runs = MemoryContextAlloc(into->aggcontext, newmax * sizeof(uint64 *));
			into->run_lengths = MemoryContextAlloc(into->aggcontext, newmax * sizeof(Size));
			into->run_blocks = MemoryContextAlloc(into->aggcontext, newmax * sizeof(void *));
		}
		else
		{
			into->runs = repalloc(into->runs, newmax * sizeof(uint64 *));
			into->run_lengths = repalloc(into->run_lengths, newmax * sizeof(Size));
			into->run_blocks = repalloc(into->run_blocks, newmax * sizeof(void *));
		}
		into->maxruns = newmax;
	}
	into->runs[into->nruns] = hashes;
	into->run_lengths[into->nruns] = n;
	into->run_blocks[into->nruns] = block;
	into->nruns++;
}

/* Hashes a state holds in memory: its buffer's and its runs'. */
static Size
HashesInMemory(const BloomAggState *state)
{
	Size		total = state->nhashes;

	for (int r = 0; r < state->nruns; r++)
		total += state->run_lengths[r];
	return total;
}

/* Writes a combined state's runs to its temporary file, freeing its own. */
static void
SpillRuns(FunctionCallInfo fcinfo, BloomAggState *state)
{
	if (state->nruns == 0)
		return;
	StartSpilling(fcinfo, state);
	for (int r = 0; r < state->nruns; r++)
	{
		CHECK_FOR_INTERRUPTS();
		HashSpillWrite(state->spill, state->runs[r], state->run_lengths[r]);
		if (state->run_blocks[r] != NULL)
			pfree(state->run_blocks[r]);
	}
	state->nruns = 0;
}

/* Copies hashes into the state's buffer, making room as the transition does. */
static void
AppendHashes(FunctionCallInfo fcinfo, BloomAggState *state, const uint64 *hashes, Size n)
{
	while (n > 0)
	{
		Size		take;

		if (state->nhashes == state->maxhashes)
			MakeRoom(fcinfo, state, 1);
		take = Min(n, state->maxhashes - state->nhashes);
		memcpy(state->hashes + state->nhashes, hashes, take * sizeof(uint64));
		state->nhashes += take;
		state->distinct = false;
		hashes += take;
		n -= take;
	}
}

/*
 * Combines a spilled state, the parallel leader's own handed over with its
 * file: its hashes are read into this state's buffer, which spills them in
 * turn as it fills.  The other state is used no more.
 */
static void
TakeSpilledState(FunctionCallInfo fcinfo, BloomAggState *into, const BloomAggState *from)
{
	AppendHashes(fcinfo, into, from->hashes, from->nhashes);
	for (int r = 0; r < from->nruns; r++)
		AppendHashes(fcinfo, into, from->runs[r], from->run_lengths[r]);
	HashSpillRewind(from->spill);
	for (;;)
	{
		Size		got;

		CHECK_FOR_INTERRUPTS();
		if (into->nhashes == into->maxhashes)
			MakeRoom(fcinfo, into, 1);
		got = HashSpillRead(from->spill, into->hashes + into->nhashes,
							into->maxhashes - into->nhashes);
		if (got == 0)
			break;
		into->nhashes += got;
		into->distinct = false;
	}
}

/*
 * How a spilled state is settled: HashSpillCount, HashSpillCountOnly or
 * HashSpillSort.
 */
typedef uint64 (*SpillSettler) (HashSpill *spill, uint64 *buffer, Size room);

/*
 * The number of distinct hashes of a spilled state.  What it holds in
 * memory goes to its file first, and its buffer, at its budget, serves to
 * count them; it is given back afterwards, as what comes next (the filter,
 * or a message) needs the memory more.  Only a filter guessed before the
 * count (StartCountedFill) is held alongside it.
 */
static uint64
SettleSpilled(FunctionCallInfo fcinfo, BloomAggState *state, SpillSettler settle)
{
	uint64		settled;

	SpillRuns(fcinfo, state);
	if (state->nhashes > 0)
		SpillHashes(fcinfo, state, true);
	if (state->allocated < state->spill_at)
	{
		uint64	   *buffer;

		ReplaceHashes(state, NULL, NULL, 0);
		buffer = MemoryContextAllocHuge(state->aggcontext, state->spill_at * sizeof(uint64));
		ReplaceHashes(state, buffer, buffer, state->spill_at);
	}
	settled = settle(state->spill, state->hashes, state->spill_at);
	ReplaceHashes(state, NULL, NULL, 0);
	state->maxhashes = 0;
	return settled;
}

/*
 * De-duplicates the buffer and leaves it grouped by BF_MAX_GROUP_BITS bits,
 * as bf_count_distinct_grouped needs: bf_distinct_hashes groups only results
 * of more than BF_UNGROUPED_DISTINCT_MAX hashes, so a smaller one may need
 * grouping (cheap).
 */
static void
GroupedDistinctHashes(BloomAggState *state)
{
	DistinctHashes(state, true);
	if (state->nhashes <= BF_UNGROUPED_DISTINCT_MAX &&
		bf_grouped_bits(state->hashes, state->nhashes) < BF_MAX_GROUP_BITS)
		bf_group_hashes(state->hashes, state->nhashes);
}

/*
 * The number of distinct hashes in a combined self-sizing state: counted
 * over its runs and its own buffer group by group when they are all grouped
 * (as the workers' de-duplication leaves them), else after copying them all
 * into its own buffer and de-duplicating that.
 */
static Size
CountDistinct(BloomAggState *state)
{
	const uint64 *buffers[BF_MAX_GROUPED_BUFFERS];
	Size		lengths[BF_MAX_GROUPED_BUFFERS];
	int			nbuffers = 0;
	Size		total = 0;
	Size		room;
	uint64	   *scratch;
	Size		distinct = SIZE_MAX;

	if (state->nruns == 0)
	{
		DistinctHashes(state, true);
		return state->nhashes;
	}
	GroupedDistinctHashes(state);

	for (int r = 0; r < state->nruns; r++)
	{
		buffers[nbuffers] = state->runs[r];
		lengths[nbuffers++] = state->run_lengths[r];
	}
	if (state->nhashes > 0)
	{
		buffers[nbuffers] = state->hashes;
		lengths[nbuffers++] = state->nhashes;
	}
	for (int b = 0; b < nbuffers; b++)
		total += lengths[b];

	/* Should a buffer not be grouped after all, the count says so. */
	room = COUNT_ROOM_GROUPS * (total >> BF_MAX_GROUP_BITS) + COUNT_ROOM_MIN;
	scratch = MemoryContextAllocExtended(CurrentMemoryContext, room * sizeof(uint64),
										 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (scratch != NULL)
	{
		distinct = bf_count_distinct_grouped(buffers, lengths, nbuffers,
											 BF_MAX_GROUP_BITS, scratch, room);
		pfree(scratch);
	}
	if (distinct != SIZE_MAX)
		return distinct;
	ConcatenateRuns(state);
	DistinctHashes(state, true);
	return state->nhashes;
}

/*
 * Inserts hashes into the final filter chunk by chunk, answering a cancel
 * between chunks: with a large work_mem the buffer holds many millions.
 */
static void
InsertHashes(Bloom *bloom, const BfHeader *header, const uint64 *hashes, Size n)
{
	for (Size done = 0; done < n; done += INSERT_CHUNK)
	{
		CHECK_FOR_INTERRUPTS();
		bf_add_hashes(bf_bits(BloomData(bloom)), header->nblocks, header->k,
					  hashes + done, Min(INSERT_CHUNK, n - done));
	}
}

/*
 * A spilled state's filter, filled while its hashes are counted
 * (FinalFromSpill): the count gives each partition's distinct hashes to
 * InsertCounted once it has them in memory.
 */
typedef struct CountedFill
{
	Bloom	   *bloom;
	BfHeader	header;
	uint64		given;			/* distinct hashes inserted */
} CountedFill;

static void
InsertCounted(void *arg, const uint64 *hashes, Size n)
{
	CountedFill *fill = (CountedFill *) arg;

	bf_add_hashes(bf_bits(BloomData(fill->bloom)), fill->header.nblocks, fill->header.k,
				  hashes, n);
	fill->given += n;
}

/*
 * Starts a filter sized for the state's rows, to be filled as its hashes
 * are counted, where that may be its filter: every row's hash is still
 * there, none dropped as a duplicate in memory, so the values may all be
 * distinct, and then the filter sized for the rows is the one sized for the
 * distinct hashes.  Only a filter within the state's budget is guessed: it
 * is held next to the buffer the count uses, so the final function holds up
 * to twice the budget while it counts, and a wrong guess (duplicates that
 * only the count finds, say values distinct at first and repeated later)
 * costs that memory, for a while, and the inserts made so far.  A spill
 * counted already (a second final function on the state) gives nothing to
 * insert, so it is not guessed for.
 */
static bool
StartCountedFill(BloomAggState *state, CountedFill *fill)
{
	if (HashSpillSettled(state->spill) ||
		state->rows == 0 || state->rows > (uint64) PG_INT64_MAX ||
		HashSpillWritten(state->spill) + HashesInMemory(state) != state->rows)
		return false;
	SizeFilter((int64) state->rows, state->fpr, &fill->header);
	if (bf_value_bytes(fill->header.nblocks) > state->budget)
		return false;
	fill->header.inserted = state->rows;
	fill->bloom = BloomAlloc(&fill->header);
	fill->given = 0;
	HashSpillSetSink(state->spill, InsertCounted, fill);
	return true;
}

/*
 * The filter of a spilled self-sizing state: sized for the count of its
 * distinct hashes.  When every row was distinct and the guess was made
 * (StartCountedFill), the count has filled it.  Else the hashes its file
 * holds are read once more in small chunks, in the order of their top
 * bits, which is the order of the filter's blocks.  Those are not
 * de-duplicated (HashSpillCountOnly): a hash inserted twice sets the same
 * bits.
 */
static Bloom *
FinalFromSpill(FunctionCallInfo fcinfo, BloomAggState *state)
{
	CountedFill fill;
	bool		guessed = StartCountedFill(state, &fill);
	uint64		distinct = SettleSpilled(fcinfo, state, HashSpillCountOnly);
	BfHeader	header;
	Bloom	   *bloom;
	uint64	   *chunk;
	Size		n;

	if (guessed)
	{
		/* given == distinct: this call's count gave the filter every hash */
		if (distinct == state->rows && fill.given == distinct)
		{
			elog(DEBUG1, "bloom_agg filled its filter while counting its spilled hashes");
			fill.header.identity = state->identity;
			BloomWriteHeader(fill.bloom, &fill.header);
			return fill.bloom;
		}
		elog(DEBUG1, "bloom_agg fills its filter from its spilled hashes again");
		pfree(fill.bloom);
	}

	SizeFilter(Max((int64) distinct, 1), state->fpr, &header);
	header.inserted = distinct;
	bloom = BloomAlloc(&header);
	chunk = palloc(INSERT_CHUNK * sizeof(uint64));
	HashSpillRewind(state->spill);
	while ((n = HashSpillRead(state->spill, chunk, INSERT_CHUNK)) > 0)
		InsertHashes(bloom, &header, chunk, n);
	pfree(chunk);
	header.identity = state->identity;
	BloomWriteHeader(bloom, &header);
	return bloom;
}

/* The last key a chain was given, so that a repeat is dropped across pieces. */
typedef struct SortedTail
{
	bool		any;
	uint64		last;
} SortedTail;

/*
 * Adds a piece of sorted keys (ChainOrderKey) to a chain, each distinct one
 * once, in order, and returns how many it added.  The distinct keys are
 * left at the front of keys, and their hashes in scratch.
 */
static Size
AddSortedToChain(Bloom **chain, BfHeader *header, uint64 *keys, Size n, uint64 *scratch,
				 SortedTail *tail)
{
	Size		kept = 0;

	for (Size i = 0; i < n; i++)
	{
		if (tail->any && keys[i] == tail->last)
			continue;
		keys[kept] = tail->last = keys[i];
		scratch[kept++] = ChainOrderHash(keys[i]);
		tail->any = true;
	}
	for (Size done = 0; done < kept; done += INSERT_CHUNK)
	{
		CHECK_FOR_INTERRUPTS();
		BloomAddHashes(chain, header, scratch + done, Min(INSERT_CHUNK, kept - done));
	}
	return kept;
}

/*
 * The growing form's chain: the distinct hashes in increasing order, from
 * the temporary file sorted partition by partition, or from memory.
 */
static Bloom *
FinalChain(FunctionCallInfo fcinfo, BloomAggState *state)
{
	Bloom	   *chain = BloomAllocChain(state->chain_capacity, state->fpr, state->growth);
	BfHeader	header;
	SortedTail	tail = {false, 0};

	BloomReadHeader(chain, &header);
	if (header.seed != 0)
		elog(ERROR, "bloom_agg chain has seed " UINT64_FORMAT ", its hashes seed 0",
			 header.seed);
	if (state->spill != NULL)
	{
		uint64	   *chunk = palloc(2 * INSERT_CHUNK * sizeof(uint64));
		Size		n;

		SettleSpilled(fcinfo, state, HashSpillSort);
		HashSpillRewind(state->spill);
		while ((n = HashSpillRead(state->spill, chunk, INSERT_CHUNK)) > 0)
			AddSortedToChain(&chain, &header, chunk, n, chunk + INSERT_CHUNK, &tail);
		pfree(chunk);
	}
	else
	{
		uint64	   *scratch;

		ConcatenateRuns(state);
		scratch = palloc_extended(Max(state->nhashes, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
		qf_sort_u64(state->hashes, scratch, state->nhashes);
		/* distinct and sorted, which is grouped too: a final again finds them so */
		state->nhashes = AddSortedToChain(&chain, &header, state->hashes, state->nhashes,
										  scratch, &tail);
		state->distinct = true;
		pfree(scratch);
	}
	header.identity = state->identity;
	BloomWriteHeader(chain, &header);
	return chain;
}

/*
 * Final function of every bloom_agg form.  It de-duplicates the state's
 * buffer in place, or counts a spilled state's file, neither of which
 * changes what the state means, so it may run more than once.
 */
static Datum
AggFinal(FunctionCallInfo fcinfo)
{
	BloomAggState *state;
	BfHeader	header;
	Bloom	   *bloom;

	AggregateMemoryContext(fcinfo, "bloom_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (BloomAggState *) PG_GETARG_POINTER(0);

	if (state->growth != 0)
		PG_RETURN_BLOOM_P(FinalChain(fcinfo, state));
	if (state->spill != NULL)
		PG_RETURN_BLOOM_P(FinalFromSpill(fcinfo, state));
	if (state->capacity == 0)
	{
		Size		distinct = CountDistinct(state);

		SizeFilter(Max((int64) distinct, 1), state->fpr, &header);
		header.inserted = distinct;
		bloom = BloomAlloc(&header);
	}
	else if (state->filter != NULL)
	{
		bloom = (Bloom *) PallocLarge(VARSIZE(state->filter));
		memcpy(bloom, state->filter, VARSIZE(state->filter));
		BloomReadHeader(bloom, &header);
		header.inserted = state->rows;
	}
	else
	{
		SizeFilter(state->capacity, state->fpr, &header);
		header.inserted = state->rows;
		bloom = BloomAlloc(&header);
	}

	DistinctHashes(state, true);	/* the fixed form's, for block order */
	InsertHashes(bloom, &header, state->hashes, state->nhashes);
	for (int r = 0; r < state->nruns; r++)
		InsertHashes(bloom, &header, state->runs[r], state->run_lengths[r]);
	header.identity = state->identity;
	BloomWriteHeader(bloom, &header);
	WarnIfOverfilled(bloom, &header);	/* only the fixed form can be */
	PG_RETURN_BLOOM_P(bloom);
}

PG_FUNCTION_INFO_V1(bloom_agg_final);
Datum
bloom_agg_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo);
}

PG_FUNCTION_INFO_V1(bloom_agg_final_growing);
/* The growing form's final function, under the name 1.0 gave it. */
Datum
bloom_agg_final_growing(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo);
}

PG_FUNCTION_INFO_V1(bloom_agg_combine);
/*
 * Combine function of every bloom_agg form (parallel plans).  It only reads
 * its second state, which may be the leader's own partial state, handed
 * over (HandOver): it never modifies, adopts or returns it.  The one
 * exception is a state deserialised from a message, used no more, whose
 * buffer the combined state takes over, to free it once spilled.
 */
Datum
bloom_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "bloom_agg_combine");
	BloomAggState *into = PG_ARGISNULL(0) ? NULL
		: (BloomAggState *) PG_GETARG_POINTER(0);
	BloomAggState *from = PG_ARGISNULL(1) ? NULL
		: (BloomAggState *) PG_GETARG_POINTER(1);

	if (from == NULL)
	{
		if (into == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(into);
	}
	if (into == NULL)
	{
		into = NewAggState(fcinfo, from->capacity, from->fpr, aggcontext);
		into->chain_capacity = from->chain_capacity;
		into->growth = from->growth;
	}
	else if (into->capacity != from->capacity || into->fpr != from->fpr ||
			 into->chain_capacity != from->chain_capacity || into->growth != from->growth)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom_agg capacity, false-positive rate and growth must be the same for every row")));

	NoteKeyIdentity(into, &from->identity);
	into->rows = bf_count_add(into->rows, from->rows);
	if (from->filter != NULL)
	{
		if (into->filter == NULL)
			MaterializeFilter(into);
		into->filter = BloomCombineInto(into->filter, from->filter, true, false);
	}
	if (into->capacity == 0)
	{
		if (from->spill != NULL)
			TakeSpilledState(fcinfo, into, from);
		else
		{
			/* a deserialised state is used no more: its buffer is into's */
			AddRun(into, from->hashes, from->nhashes,
				   from->from_message ? from->hashes_block : NULL);
			if (from->from_message)
				from->hashes_block = NULL;
			for (int r = 0; r < from->nruns; r++)
				AddRun(into, from->runs[r], from->run_lengths[r], NULL);
		}
		if (into->spill_at > 0 && HashesInMemory(into) > into->spill_at)
			SpillRuns(fcinfo, into);
		PG_RETURN_POINTER(into);
	}
	if (from->nhashes == 0)
		PG_RETURN_POINTER(into);
	MakeRoom(fcinfo, into, from->nhashes);
	memcpy(into->hashes + into->nhashes, from->hashes, from->nhashes * sizeof(uint64));
	into->nhashes += from->nhashes;
	into->distinct = false;
	PG_RETURN_POINTER(into);
}

/* ---------------------------------------------------------------------
 * bloom_agg: serialize and deserialize
 * ---------------------------------------------------------------------
 */

/* The most hashes a serialised state can hold: it travels as one bytea. */
static Size
MaxSerialisedHashes(Size filter_bytes)
{
	return (MaxAllocSize - SERIAL_HEADER_ROOM - 1 - filter_bytes) / sizeof(uint64);
}

/*
 * Puts a large state's hashes, grouped, into dst (room for all of them), the
 * message's place for them, and says how many there are.  Grouping is all
 * the combining side needs: it counts the union, which de-duplicates it
 * anyway, and the leader of a parallel plan can start counting only once its
 * slowest worker has sent its state, so a worker that only groups (about a
 * third of the work of de-duplicating) keeps it waiting less.  Only a
 * parallel worker whose buffer has shown many duplicates de-duplicates
 * first, since sending them would cost the leader more than it costs the
 * worker; its buffer gets the result back too, so that the state stays
 * whole.
 */
static Size
GroupIntoMessage(BloomAggState *state, uint64 *dst)
{
	uint64	   *placed;
	Size		distinct;

	if (!IsParallelWorker() || !state->had_duplicates)
	{
		bf_group_hashes_into(state->hashes, state->nhashes, dst);
		return state->nhashes;
	}
	distinct = bf_distinct_hashes_placed(state->hashes, state->nhashes, dst, &placed);
	if (placed == dst)
		memcpy(state->hashes, dst, distinct * sizeof(uint64));
	else
		memcpy(dst, state->hashes, distinct * sizeof(uint64));
	state->nhashes = distinct;
	state->distinct = true;
	return distinct;
}

/*
 * Leaves a state to be handed over as a worker's message holds its hashes
 * (GroupIntoMessage): grouped, or de-duplicated after many duplicates.  A
 * large buffer is grouped into new memory that replaces it.
 */
static void
GroupForHandOver(BloomAggState *state)
{
	uint64	   *grouped = NULL;
	void	   *block = NULL;

	if (!state->distinct && !state->had_duplicates && state->nhashes > SCRATCH_FROM &&
		ScratchFits(state, state->nhashes))
		grouped = AllocFilledOnce(state, state->nhashes, &block);
	if (grouped == NULL)
	{
		GroupedDistinctHashes(state);
		return;
	}
	bf_group_hashes_into(state->hashes, state->nhashes, grouped);
	ReplaceHashes(state, grouped, block, state->nhashes);
	state->maxhashes = state->nhashes;
}

/* The ERROR for a state whose message would exceed a bytea's 1 GB. */
static void
CheckSerialisable(uint64 nhashes, Size filter_bytes)
{
	if (nhashes > MaxSerialisedHashes(filter_bytes))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloom_agg state of " UINT64_FORMAT " distinct values is too large for a parallel plan",
						nhashes),
				 errhint("Run the query without parallelism: SET max_parallel_workers_per_gather = 0.")));
}

/*
 * Writes a serialised state's fields before its nhashes hashes, padded to
 * SERIAL_HEADER_ROOM, where the hashes start.
 */
static void
SendStateFields(StringInfo buf, const BloomAggState *state, uint64 nhashes)
{
	pq_sendbyte(buf, AGG_STATE_VERSION);
	pq_sendint64(buf, state->capacity);
	pq_sendfloat8(buf, state->fpr);
	pq_sendint64(buf, state->chain_capacity);
	pq_sendint32(buf, state->growth);
	pq_sendbyte(buf, state->identity.kind);
	pq_sendint32(buf, state->identity.tag);
	pq_sendbyte(buf, state->identity.env_encoding);
	pq_sendint32(buf, state->identity.env_locale);
	pq_sendint64(buf, (int64) state->rows);
	pq_sendint64(buf, (int64) nhashes);
	/* Padding by hand: appending a char writes a NUL after it, on a hash. */
	Assert(buf->len <= SERIAL_HEADER_ROOM);
	enlargeStringInfo(buf, SERIAL_HEADER_ROOM - buf->len);
	memset(buf->data + buf->len, 0, SERIAL_HEADER_ROOM - buf->len);
	buf->len = SERIAL_HEADER_ROOM;
}

/*
 * Serialises a spilled state: its distinct hashes, counted on disk, are
 * read from its file straight into the message, grouped as the leader's
 * count wants them (CountDistinct).  A worker's state reaches the leader
 * whole, since a message is all a Gather passes; its memory is then the
 * message's.
 */
static bytea *
SerialiseSpilled(FunctionCallInfo fcinfo, BloomAggState *state)
{
	uint64		distinct = SettleSpilled(fcinfo, state, HashSpillCount);
	StringInfoData buf;
	Size		left;
	Size		n;

	CheckSerialisable(distinct, 0);
	pq_begintypsend(&buf);
	enlargeStringInfo(&buf, SERIAL_HEADER_ROOM + distinct * sizeof(uint64) + 1);
	AdviseHugePages(buf.data, buf.maxlen);
	SendStateFields(&buf, state, distinct);
	HashSpillRewind(state->spill);
	left = distinct;
	while ((n = HashSpillRead(state->spill, (uint64 *) (buf.data + buf.len), left)) > 0)
	{
		CHECK_FOR_INTERRUPTS();
		buf.len += n * sizeof(uint64);
		left -= n;
	}
	if (left != 0)
		elog(ERROR, "bloom_agg temporary file holds fewer hashes than counted");
	pq_sendbyte(&buf, false);	/* no filter: self-sizing */
	return pq_endtypsend(&buf);
}

PG_FUNCTION_INFO_V1(bloom_agg_serialize);
/*
 * Serialises a bloom_agg state for a parallel worker's result.  The hashes
 * start at SERIAL_HEADER_ROOM, after the other fields and padding, so that
 * a large buffer can be grouped straight into its place in the message.
 */
Datum
bloom_agg_serialize(PG_FUNCTION_ARGS)
{
	BloomAggState *state = (BloomAggState *) PG_GETARG_POINTER(0);
	Size		filter_bytes = state->filter ? BloomDataLen(state->filter) : 0;
	StringInfoData buf;
	Size		nhashes;
	uint64	   *in_message = NULL;
	const Plan *consumer;

	AggregateMemoryContext(fcinfo, "bloom_agg_serialize");
	consumer = HandOverConsumer(fcinfo);
	if (state->spill != NULL && consumer != NULL)
	{
		/* its file is read by the combining state (TakeSpilledState) */
		elog(DEBUG1, "bloom_agg state of the parallel leader handed over with its temporary file");
		PG_RETURN_BYTEA_P(HandOver(state, state->aggcontext, consumer,
									 AGG_STATE_HANDED_OVER));
	}
	if (state->spill != NULL)
		PG_RETURN_BYTEA_P(SerialiseSpilled(fcinfo, state));
	ConcatenateRuns(state);		/* a combined state, if ever serialised */
	if (consumer != NULL)
	{
		elog(DEBUG1, "bloom_agg state of the parallel leader handed over in memory");
		GroupForHandOver(state);
		PG_RETURN_BYTEA_P(HandOver(state, state->aggcontext, consumer,
									 AGG_STATE_HANDED_OVER));
	}
	pq_begintypsend(&buf);

	/*
	 * The message is new memory that a large state's hashes would be copied
	 * into anyway: taken first, on huge pages, it is where they are put in
	 * order.  Smaller states are grouped in place, so that the leader counts
	 * without merging (CountDistinct).
	 */
	if (!state->distinct && state->nhashes > SCRATCH_FROM &&
		state->nhashes <= MaxSerialisedHashes(filter_bytes))
	{
		enlargeStringInfo(&buf, SERIAL_HEADER_ROOM + state->nhashes * sizeof(uint64) +
						  1 + filter_bytes);
		AdviseHugePages(buf.data, buf.maxlen);
		in_message = (uint64 *) (buf.data + SERIAL_HEADER_ROOM);
		nhashes = GroupIntoMessage(state, in_message);
	}
	else
	{
		GroupedDistinctHashes(state);
		nhashes = state->nhashes;
	}
	CheckSerialisable(nhashes, filter_bytes);
	SendStateFields(&buf, state, nhashes);
	/* same machine, so the hashes go in native byte order */
	if (in_message != NULL)
		buf.len += nhashes * sizeof(uint64);	/* already there */
	else
		pq_sendbytes(&buf, (const char *) state->hashes, nhashes * sizeof(uint64));
	pq_sendbyte(&buf, state->filter != NULL);
	if (state->filter != NULL)
	{
		/* the leader's deserialize validates it: its bits came in raw */
		BloomSeal(state->filter);
		pq_sendbytes(&buf, (const char *) BloomData(state->filter),
					 BloomDataLen(state->filter));
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

static void
CheckSerialisedState(bool ok)
{
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid serialised bloom_agg state")));
}

PG_FUNCTION_INFO_V1(bloom_agg_deserialize);
/* Reads a serialised bloom_agg state; the filter goes through the validator. */
Datum
bloom_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateMemoryContext(fcinfo, "bloom_agg_deserialize");
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	BloomAggState *state;
	int64		nhashes;
	MemoryContext old;

	buf.data = VARDATA_ANY(raw);
	buf.len = VARSIZE_ANY_EXHDR(raw);
	buf.maxlen = buf.len;
	buf.cursor = 0;

	switch (pq_getmsgbyte(&buf))
	{
		case AGG_STATE_VERSION:
			break;
		case AGG_STATE_HANDED_OVER:

			/*
			 * The state itself, which combine only reads: not STRICT, it
			 * makes its own state rather than take its first input's.
			 */
			PG_RETURN_POINTER((BloomAggState *) HandedOver(&buf, fcinfo));
		default:
			CheckSerialisedState(false);
	}
	{
		int64		capacity = pq_getmsgint64(&buf);
		double		fpr = pq_getmsgfloat8(&buf);
		int64		chain_capacity = pq_getmsgint64(&buf);
		int32		growth = pq_getmsgint(&buf, 4);

		CheckSerialisedState(capacity >= 0 && chain_capacity >= 0 &&
							 (growth == 0 || capacity == 0));
		state = NewAggState(fcinfo, capacity, fpr, aggcontext);
		state->chain_capacity = chain_capacity;
		state->growth = growth;
		state->from_message = true;
	}
	state->identity.kind = pq_getmsgbyte(&buf);
	state->identity.tag = pq_getmsgint(&buf, 4);
	state->identity.env_encoding = pq_getmsgbyte(&buf);
	state->identity.env_locale = pq_getmsgint(&buf, 4);
	CheckSerialisedState(state->identity.kind <= BF_KIND_LAST);
	state->rows = (uint64) pq_getmsgint64(&buf);
	nhashes = pq_getmsgint64(&buf);
	/* the padding up to the hashes (bloom_agg_serialize) */
	CheckSerialisedState(buf.cursor <= SERIAL_HEADER_ROOM - VARHDRSZ &&
						 buf.len >= SERIAL_HEADER_ROOM - VARHDRSZ);
	buf.cursor = SERIAL_HEADER_ROOM - VARHDRSZ;
	CheckSerialisedState(nhashes >= 0 &&
						 nhashes <= (buf.len - buf.cursor) / (int64) sizeof(uint64));
	if (nhashes > 0)
	{
		/* never grown, so huge pages cost it nothing (GrowHashes) */
		state->hashes = AllocFilledOnce(state, nhashes, &state->hashes_block);
		if (state->hashes != NULL)
			state->maxhashes = state->allocated = nhashes;
		else
			GrowHashes(state, (Size) nhashes);	/* without huge pages */
		memcpy(state->hashes, pq_getmsgbytes(&buf, nhashes * sizeof(uint64)),
			   nhashes * sizeof(uint64));
		state->nhashes = nhashes;
		state->distinct = false;	/* grouped, but may hold duplicates */
	}
	if (pq_getmsgbyte(&buf) != 0)
	{
		int			len = buf.len - buf.cursor;

		CheckSerialisedState(state->capacity > 0);
		old = MemoryContextSwitchTo(aggcontext);
		state->filter = BloomFromBytes((const uint8 *) pq_getmsgbytes(&buf, len), len,
									   ERRCODE_INVALID_BINARY_REPRESENTATION, NULL,
									   "invalid serialised bloom_agg state", NULL);
		MemoryContextSwitchTo(old);
	}
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(state);
}
