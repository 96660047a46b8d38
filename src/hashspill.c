/*-------------------------------------------------------------------------
 *
 * hashspill.c
 *	  Temporary files for the 64-bit items of an aggregate state that
 *	  outgrow its memory budget (the hashes of a self-sizing bloom_agg, the
 *	  hashes or fingerprints of a qfilter_agg): the budget, partitions by
 *	  top bits, the count of distinct items or the sorted multiset of all,
 *	  settled partition by partition, and reading them back in order.
 *
 * Why the hashes can wait on disk
 * -------------------------------
 * The filter of a self-sizing bloom_agg depends only on the set of distinct
 * hashes and the number of rows: its size on how many distinct hashes there
 * are, its bits on which they are.  Neither depends on the order of the
 * hashes or on where they were kept meanwhile.  So a state that would exceed
 * its budget writes hashes to a temporary file, the final function reads
 * them back, and the filter is bit for bit the one built in memory.
 *
 * Partitions by top bits
 * ----------------------
 * The hashes are written in partitions by their top bits, so equal hashes
 * always meet in the same one: the distinct hashes of the whole are the
 * disjoint union of each partition's, and one partition at a time is loaded
 * into the caller's buffer and de-duplicated.  A partition with more
 * distinct hashes than half the buffer is split again by its next bits as
 * it is read; hashes are de-duplicated whenever the buffer fills, so a
 * partition of few distinct hashes among many duplicates is never split.
 * Every split consumes bits, and hashes sharing all 64 are one value, so
 * splitting ends.  (This is hashed aggregation's own scheme, nodeAgg.c,
 * with hashes for tuples.)
 *
 * Sorting, for qfilter_agg
 * ------------------------
 * A qfilter is built from its fingerprints in increasing order, every copy
 * kept, and a fingerprint only grows with its hash.  Partitions by top bits
 * are already in that order among themselves, so sorting is settling each
 * in turn: one that fits in half the buffer is read and sorted (the other
 * half is the sort's scratch), a larger one is split by the bits after the
 * prefix all its items share (known from the smallest and largest written
 * to it), so every split makes progress whatever the items are; one whose
 * items are all equal is written out as often as it holds them, unread.
 *
 * Counting leaves the distinct hashes on one more tape, in the order of
 * their top bits, which is the order of the filter's blocks (bf_block_of):
 * read into a parallel worker's message, it is what the leader's count
 * wants, distinct and grouped.  The final function needs only the count:
 * it sizes the filter, gives the buffer back, and inserts the hashes
 * reading them in small chunks, so that at the end memory holds the filter
 * and little else, and a duplicate inserted twice changes nothing.  So it
 * counts without that tape (HashSpillCountOnly): the partitions are frozen
 * instead of freed as they are read, and read once more to insert, which
 * spares writing every distinct hash a second time: three passes over the
 * file's contents instead of four.  A final function that guessed the
 * filter's size before counting (every value distinct) is handed each
 * partition's distinct hashes as the count has them (HashSpillSetSink), and
 * where the guess was right the third pass never happens.
 *
 * One file of tapes
 * -----------------
 * The partitions are logical tapes in one temporary file (logtape.c, as
 * sorts and hashed aggregation use): one file to create however many
 * partitions there are, and a tape's blocks are recycled as it is read, so
 * that counting, which reads every partition and writes the distinct
 * hashes, needs little more disk than the hashes written.  Hashes go to
 * their partitions through a small staging array per partition, in one
 * linear pass.
 *
 * Memory
 * ------
 * A state's budget is work_mem, or hash_mem for a group of a hashed GROUP BY
 * (HashSpillBudget): three quarters for the hashes it holds, a quarter for
 * the buffers of the tapes a split writes (8 kB each, and its staging
 * array), which sets how many partitions a split makes.  The file is made
 * when first written, so a state that never exceeds its budget, like each
 * small group of a GROUP BY, has none.
 *
 * Files and errors
 * ----------------
 * The file is a BufFile, registered with the resource owner that runs the
 * query, which closes and removes it when a transaction or subtransaction
 * aborts; the tapes' memory is the state's.  Otherwise the file is closed
 * just before the aggregate resets the state's memory (AggRegisterCallback):
 * at the next group, a rescan or the end of the query.  A window aggregate
 * offers no such callback, so its states never spill.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/logtape.h"

#include "port/pg_bitutils.h"

#include "bloomvalue.h"
#include "hashbuf.h"
#include "hashspill.h"
#include "qfilter.h"

/* The widest split: 1024 partitions, as many as hashed aggregation makes. */
#define SPILL_MAX_BITS 10

/* Hashes staged per partition before they are written to its tape. */
#define STAGE_HASHES 64

/*
 * Memory of a partition being written: its tape's 8 kB buffer, the list of
 * blocks the tape set reserves for it (up to 128), its staging array.
 */
#define PARTITION_BYTES (BLCKSZ + 128 * sizeof(long) + STAGE_HASHES * sizeof(uint64))

/* Read buffer of a tape that is counted: a few blocks per read. */
#define READ_BUFFER_BYTES (4 * BLCKSZ)

/* Fewest hashes a state holds in memory, whatever its budget. */
#define MIN_BUFFER_HASHES 1024

/* What was written on a partition's tape: how many hashes, their range. */
typedef struct PartStats
{
	uint64		written;		/* duplicates included */
	uint64		min;
	uint64		max;
} PartStats;

struct HashSpill
{
	MemoryContext context;		/* of the tapes and all else here */
	LogicalTapeSet *tapes;		/* NULL until the first write */
	int			split_bits;		/* a split makes 2^split_bits partitions */
	uint64	   *staging;		/* STAGE_HASHES per partition of a split */
	LogicalTape **partitions;	/* by top split_bits bits; NULL until written */
	PartStats  *stats;			/* of each partition */
	bool		read_raw;		/* partitions were read back, unsettled */
	uint64		hashes_written; /* duplicates included */

	/* HashSpillSetSink's: given each partition's distinct hashes */
	HashSpillSink sink;
	void	   *sink_arg;

	/* HashSpillCount's or HashSpillSort's result, in order */
	bool		settled;
	LogicalTape *result;
	uint64		nresult;

	/* counted by HashSpillCountOnly: the partitions, frozen, are the result */
	bool		kept;

	/* reading back */
	int			reading;		/* partition being read, before settling */
	uint64		unread;			/* hashes left on it, or on "result" */
};

Size
HashSpillBudget(FunctionCallInfo fcinfo)
{
	AggState   *aggstate = CallingAggNode(fcinfo);

	if (aggstate == NULL)
		return 0;
	if (aggstate->aggstrategy == AGG_HASHED ||
		(aggstate->aggstrategy == AGG_MIXED &&
		 aggstate->curaggcontext == aggstate->hashcontext))
		return get_hash_memory_limit();
	return (Size) work_mem * 1024;
}

Size
HashSpillBufferHashes(Size budget)
{
	return Max(budget / 4 * 3 / sizeof(uint64), MIN_BUFFER_HASHES);
}

/* The widest split whose partitions take at most a quarter of budget. */
static int
SplitBits(Size budget)
{
	Size		partitions = budget / 4 / PARTITION_BYTES;
	int			bits = 1;

	while (bits < SPILL_MAX_BITS && ((Size) 2 << bits) <= partitions)
		bits++;
	return bits;
}

/* The partition of hash among 2^bits, by the bits below its top "shift". */
static inline uint64
PartitionOf(uint64 hash, int shift, int bits)
{
	Assert(shift >= 0 && bits >= 1 && shift + bits <= 64);
	return (hash << shift) >> (64 - bits);
}

/*
 * The tape functions allocate their buffers in the current memory context,
 * so every call is made in the spill's.
 */
static void
WriteHashes(LogicalTape *tape, const uint64 *hashes, Size n)
{
	LogicalTapeWrite(tape, unconstify(uint64 *, hashes), n * sizeof(uint64));
}

static void
ReadHashes(LogicalTape *tape, uint64 *hashes, Size n)
{
	size_t		bytes = LogicalTapeRead(tape, hashes, n * sizeof(uint64));

	if (bytes != n * sizeof(uint64))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from an aggregate's temporary file: read only %zu of %zu bytes",
						bytes, n * sizeof(uint64))));
}

/* The statistics of 2^bits partitions not written yet, in context. */
static PartStats *
NewPartStats(MemoryContext context, int bits)
{
	Size		nparts = (Size) 1 << bits;
	PartStats  *stats = MemoryContextAlloc(context, sizeof(PartStats) * nparts);

	for (Size p = 0; p < nparts; p++)
	{
		stats[p].written = 0;
		stats[p].min = PG_UINT64_MAX;
		stats[p].max = 0;
	}
	return stats;
}

/*
 * Appends hashes, which share their top "shift" bits, to the 2^bits tapes
 * of a split by their next bits, making tapes as they are first needed,
 * through the staging arrays, which are empty again on return.
 */
static void
WriteSplit(HashSpill *spill, LogicalTape **tapes, PartStats *stats,
		   int shift, int bits, const uint64 *hashes, Size n)
{
	int			staged[1 << SPILL_MAX_BITS];
	uint64		nparts = (uint64) 1 << bits;

	Assert(bits <= spill->split_bits);
	memset(staged, 0, sizeof(int) * nparts);
	for (Size i = 0; i < n; i++)
	{
		uint64		part = PartitionOf(hashes[i], shift, bits);
		uint64	   *stage = spill->staging + part * STAGE_HASHES;

		stats[part].min = Min(stats[part].min, hashes[i]);
		stats[part].max = Max(stats[part].max, hashes[i]);
		stage[staged[part]++] = hashes[i];
		if (staged[part] < STAGE_HASHES)
			continue;
		if (tapes[part] == NULL)
			tapes[part] = LogicalTapeCreate(spill->tapes);
		WriteHashes(tapes[part], stage, STAGE_HASHES);
		stats[part].written += STAGE_HASHES;
		staged[part] = 0;
	}
	for (uint64 part = 0; part < nparts; part++)
	{
		if (staged[part] == 0)
			continue;
		if (tapes[part] == NULL)
			tapes[part] = LogicalTapeCreate(spill->tapes);
		WriteHashes(tapes[part], spill->staging + part * STAGE_HASHES, staged[part]);
		stats[part].written += staged[part];
	}
}

/* Closes the file, as the state's memory (the tapes') is about to go. */
static void
CloseFile(Datum arg)
{
	HashSpill  *spill = (HashSpill *) DatumGetPointer(arg);

	if (spill->tapes != NULL)
		LogicalTapeSetClose(spill->tapes);
	spill->tapes = NULL;
}

HashSpill *
HashSpillCreate(FunctionCallInfo fcinfo, MemoryContext context, Size budget)
{
	HashSpill  *spill = MemoryContextAllocZero(context, sizeof(HashSpill));
	Size		nparts;

	spill->context = context;
	spill->split_bits = SplitBits(budget);
	nparts = (Size) 1 << spill->split_bits;
	spill->partitions = MemoryContextAllocZero(context, sizeof(LogicalTape *) * nparts);
	spill->stats = NewPartStats(context, spill->split_bits);
	spill->staging = MemoryContextAlloc(context, sizeof(uint64) * STAGE_HASHES * nparts);
	AggRegisterCallback(fcinfo, CloseFile, PointerGetDatum(spill));
	return spill;
}

void
HashSpillWrite(HashSpill *spill, const uint64 *hashes, Size n)
{
	MemoryContext old;

	/* reading a tape ends its writing */
	if (spill->settled || spill->read_raw)
		elog(ERROR, "aggregate state spilled hashes after reading them back");
	if (n == 0)
		return;
	old = MemoryContextSwitchTo(spill->context);
	if (spill->tapes == NULL)
	{
		PrepareTempTablespaces();	/* honour temp_tablespaces */
		spill->tapes = LogicalTapeSetCreate(true, NULL, -1);
	}
	WriteSplit(spill, spill->partitions, spill->stats, 0, spill->split_bits, hashes, n);
	spill->hashes_written += n;
	MemoryContextSwitchTo(old);
}

bool
HashSpillSettled(const HashSpill *spill)
{
	return spill->settled;
}

uint64
HashSpillWritten(const HashSpill *spill)
{
	return spill->hashes_written;
}

void
HashSpillSetSink(HashSpill *spill, HashSpillSink sink, void *arg)
{
	spill->sink = sink;
	spill->sink_arg = arg;
}

/*
 * Bits of the split of a partition of n hashes that share their top
 * "shift" bits: enough for parts of half a buffer each, within the budget
 * and the bits there are.
 */
static int
SplitOfPartition(const HashSpill *spill, uint64 n, int shift, Size room)
{
	int			bits = 1;

	while (bits < spill->split_bits && bits < 64 - shift && (n >> bits) > room / 2)
		bits++;
	return bits;
}

/*
 * A tape read to its end: closed, its blocks free for the tapes written
 * meanwhile, or, frozen, rewound for another pass, which gives its read
 * buffer back until that pass.
 */
static void
DoneReading(LogicalTape *tape, bool frozen)
{
	if (frozen)
		LogicalTapeRewindForRead(tape, BLCKSZ);
	else
		LogicalTapeClose(tape);
}

/*
 * Gives a partition's distinct hashes to the sink, if there is one, and
 * appends them to "out" in the order of their top bits, unless "out" is
 * NULL (a count only).  bf_distinct_hashes groups only results larger than
 * BF_UNGROUPED_DISTINCT_MAX.
 */
static void
WriteDistinct(HashSpill *spill, LogicalTape *out, uint64 *hashes, Size n)
{
	if (spill->sink != NULL && n > 0)
		spill->sink(spill->sink_arg, hashes, n);
	if (out == NULL)
		return;
	if (n <= BF_UNGROUPED_DISTINCT_MAX)
		bf_group_hashes(hashes, n);
	WriteHashes(out, hashes, n);
}

/*
 * Appends the distinct hashes of one partition of n hashes, which share
 * their top "shift" bits, to "out", in the order of their top bits, and
 * returns how many there are; with "out" NULL, only counts them.  The
 * partition's tape is closed once read, its blocks free for the tapes
 * written meanwhile, unless it is "frozen" (HashSpillCountOnly): then it
 * is rewound, its read buffer given back.  A partition that fits
 * in half the buffer is de-duplicated with the other half as scratch space;
 * a larger one as the buffer fills, split if it must be (see the file's
 * header).
 */
static uint64
CountPartition(HashSpill *spill, LogicalTape *tape, bool frozen, uint64 n, int shift,
			   uint64 *buffer, Size room, LogicalTape *out)
{
	LogicalTape **parts = NULL;
	PartStats  *stats = NULL;
	int			bits = 0;
	uint64		left = n;
	Size		held = 0;
	uint64		distinct = 0;

	check_stack_depth();
	LogicalTapeRewindForRead(tape, READ_BUFFER_BYTES);
	if (n <= room / 2)
	{
		ReadHashes(tape, buffer, n);
		DoneReading(tape, frozen);
		held = bf_distinct_hashes(buffer, n, buffer + n);
		WriteDistinct(spill, out, buffer, held);
		return held;
	}

	while (left > 0)
	{
		Size		take = (Size) Min((uint64) (room - held), left);

		CHECK_FOR_INTERRUPTS();
		ReadHashes(tape, buffer + held, take);
		held += take;
		left -= take;
		if (held < room)
			continue;
		held = bf_distinct_hashes(buffer, held, NULL);
		if (held <= room / 2)
			continue;

		/*
		 * Too many distinct hashes to go on: this partition is split by its
		 * next bits.  They differ, so not all 64 bits are shared yet.
		 */
		if (parts == NULL)
		{
			Assert(shift < 64);
			bits = SplitOfPartition(spill, n, shift, room);
			parts = palloc0(sizeof(LogicalTape *) << bits);
			stats = NewPartStats(CurrentMemoryContext, bits);
		}
		WriteSplit(spill, parts, stats, shift, bits, buffer, held);
		held = 0;
	}
	DoneReading(tape, frozen);
	held = bf_distinct_hashes(buffer, held, NULL);
	if (parts == NULL)
	{
		WriteDistinct(spill, out, buffer, held);
		return held;
	}

	WriteSplit(spill, parts, stats, shift, bits, buffer, held);
	for (uint64 p = 0; p < ((uint64) 1 << bits); p++)
		if (parts[p] != NULL)
			distinct += CountPartition(spill, parts[p], false, stats[p].written,
									   shift + bits, buffer, room, out);
	pfree(parts);
	pfree(stats);
	return distinct;
}

/*
 * Appends every hash of one partition, which the statistics describe, to
 * "out" in increasing order (see the file's header), and closes its tape.
 */
static void
SortPartition(HashSpill *spill, LogicalTape *tape, PartStats part,
			  uint64 *buffer, Size room, LogicalTape *out)
{
	LogicalTape **parts;
	PartStats  *stats;
	uint64		left = part.written;
	int			shift;
	int			bits;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (part.min == part.max)
	{
		/* one value, however many copies: its tape need not be read */
		LogicalTapeClose(tape);
		for (Size i = 0; i < Min(room, left); i++)
			buffer[i] = part.min;
		while (left > 0)
		{
			Size		take = (Size) Min((uint64) room, left);

			WriteHashes(out, buffer, take);
			left -= take;
		}
		return;
	}
	LogicalTapeRewindForRead(tape, READ_BUFFER_BYTES);
	if (left <= room / 2)
	{
		ReadHashes(tape, buffer, left);
		LogicalTapeClose(tape);
		qf_sort_u64(buffer, buffer + left, left);
		WriteHashes(out, buffer, left);
		return;
	}

	/* min and max differ, so the shared prefix leaves a bit to split by */
	shift = 63 - pg_leftmost_one_pos64(part.min ^ part.max);
	bits = SplitOfPartition(spill, part.written, shift, room);
	parts = palloc0(sizeof(LogicalTape *) << bits);
	stats = NewPartStats(CurrentMemoryContext, bits);
	while (left > 0)
	{
		Size		take = (Size) Min((uint64) room, left);

		CHECK_FOR_INTERRUPTS();
		ReadHashes(tape, buffer, take);
		WriteSplit(spill, parts, stats, shift, bits, buffer, take);
		left -= take;
	}
	LogicalTapeClose(tape);
	for (uint64 p = 0; p < ((uint64) 1 << bits); p++)
		if (parts[p] != NULL)
			SortPartition(spill, parts[p], stats[p], buffer, room, out);
	pfree(parts);
	pfree(stats);
}

/* How Settle settles the partitions. */
typedef enum SettleMode
{
	SETTLE_DISTINCT,			/* their distinct hashes onto the result tape */
	SETTLE_COUNT_ONLY,			/* a count; the partitions kept as they are */
	SETTLE_SORTED				/* all their hashes, sorted, onto the result */
} SettleMode;

/*
 * Settles every partition in order: its distinct hashes (CountPartition)
 * or all its hashes sorted (SortPartition) onto the result tape, or, with
 * SETTLE_COUNT_ONLY, its distinct hashes counted and the partition frozen,
 * to be read again.
 */
static uint64
SettleOnce(HashSpill *spill, uint64 *buffer, Size room, SettleMode mode)
{
	MemoryContext old;
	uint64		total = 0;

	if (spill->settled)
	{
		if (spill->kept && mode != SETTLE_COUNT_ONLY)
			elog(ERROR, "aggregate state asked for its distinct hashes after counting them only");
		return spill->nresult;
	}
	if (spill->read_raw)
		elog(ERROR, "aggregate state settled after reading its hashes back");
	spill->settled = true;
	spill->kept = mode == SETTLE_COUNT_ONLY;
	if (spill->tapes == NULL)
		return 0;
	Assert(room >= 2);
	old = MemoryContextSwitchTo(spill->context);
	if (!spill->kept)
		spill->result = LogicalTapeCreate(spill->tapes);
	for (int p = 0; p < (1 << spill->split_bits); p++)
	{
		LogicalTape *tape = spill->partitions[p];
		PartStats	part = spill->stats[p];

		if (tape == NULL)
			continue;
		if (mode == SETTLE_COUNT_ONLY)
		{
			/* read twice, now and to insert: frozen, its blocks stay */
			LogicalTapeFreeze(tape, NULL);
			total += CountPartition(spill, tape, true, part.written, spill->split_bits,
									buffer, room, NULL);
			continue;
		}
		spill->partitions[p] = NULL;	/* the settling closes it */
		if (mode == SETTLE_SORTED)
		{
			SortPartition(spill, tape, part, buffer, room, spill->result);
			total += part.written;
		}
		else
			total += CountPartition(spill, tape, false, part.written, spill->split_bits,
									buffer, room, spill->result);
		spill->stats[p].written = 0;
	}
	/* read as often as asked: its blocks are kept */
	if (total > 0 && !spill->kept)
		LogicalTapeFreeze(spill->result, NULL);
	MemoryContextSwitchTo(old);
	spill->nresult = total;
	return total;
}

/* SettleOnce, after which the sink, if any, is dropped: it serves one count. */
static uint64
Settle(HashSpill *spill, uint64 *buffer, Size room, SettleMode mode)
{
	uint64		total = SettleOnce(spill, buffer, room, mode);

	HashSpillSetSink(spill, NULL, NULL);
	return total;
}

uint64
HashSpillCount(HashSpill *spill, uint64 *buffer, Size room)
{
	return Settle(spill, buffer, room, SETTLE_DISTINCT);
}

uint64
HashSpillCountOnly(HashSpill *spill, uint64 *buffer, Size room)
{
	return Settle(spill, buffer, room, SETTLE_COUNT_ONLY);
}

uint64
HashSpillSort(HashSpill *spill, uint64 *buffer, Size room)
{
	return Settle(spill, buffer, room, SETTLE_SORTED);
}

void
HashSpillRewind(HashSpill *spill)
{
	spill->reading = -1;
	spill->unread = 0;
	if (spill->kept)
		return;					/* the frozen partitions, read from the first */
	if (spill->settled)
	{
		if (spill->nresult > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(spill->context);

			LogicalTapeRewindForRead(spill->result, BLCKSZ);
			MemoryContextSwitchTo(old);
		}
		spill->unread = spill->nresult;
	}
	else
		spill->read_raw = true;
}

Size
HashSpillRead(HashSpill *spill, uint64 *buffer, Size room)
{
	MemoryContext old = MemoryContextSwitchTo(spill->context);
	LogicalTape *tape = spill->result;
	Size		take;

	if (!spill->settled || spill->kept)
	{
		/*
		 * Each partition in turn: read once, its blocks freed, or, frozen,
		 * rewound for the next pass.
		 */
		while (spill->unread == 0)
		{
			if (spill->reading >= 0 && spill->partitions[spill->reading] != NULL)
			{
				if (spill->kept)
					DoneReading(spill->partitions[spill->reading], true);
				else
				{
					LogicalTapeClose(spill->partitions[spill->reading]);
					spill->partitions[spill->reading] = NULL;
				}
			}
			if (spill->reading + 1 >= (1 << spill->split_bits))
			{
				MemoryContextSwitchTo(old);
				return 0;
			}
			tape = spill->partitions[++spill->reading];
			if (tape == NULL)
				continue;
			LogicalTapeRewindForRead(tape, READ_BUFFER_BYTES);
			spill->unread = spill->stats[spill->reading].written;
		}
		tape = spill->partitions[spill->reading];
	}
	take = (Size) Min((uint64) room, spill->unread);
	if (take > 0)
		ReadHashes(tape, buffer, take);
	spill->unread -= take;
	MemoryContextSwitchTo(old);
	return take;
}
