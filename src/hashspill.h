/*-------------------------------------------------------------------------
 *
 * hashspill.h
 *	  The temporary file for the 64-bit hashes of an aggregate state that
 *	  outgrow its memory budget (hashspill.c): the budget itself, writing
 *	  hashes in partitions by their top bits, counting the distinct ones
 *	  (bloom_agg) or sorting them all (qfilter_agg) partition by partition,
 *	  and reading them back in order.
 *
 * The caller keeps its hashes in memory as long as they fit, and lends its
 * buffer to count them; this file owns the file.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_HASHSPILL_H
#define BF_HASHSPILL_H

#include "fmgr.h"

#include "bf_port.h"

typedef struct HashSpill HashSpill;

/*
 * Bytes of memory the calling aggregate's state may use for its hashes
 * before it spills: hash_mem (work_mem * hash_mem_multiplier) for a group
 * of a hashed GROUP BY, work_mem otherwise.  0 when the caller is not an
 * Agg node (a window aggregate), which cannot clean up a file: its state
 * never spills.
 */
extern BF_HIDDEN Size HashSpillBudget(FunctionCallInfo fcinfo);

/*
 * How many hashes a state with this budget keeps in memory: three quarters
 * of it.  The rest is for the buffers of the partitions it spills to.
 */
extern BF_HIDDEN Size HashSpillBufferHashes(Size budget);

/*
 * A spill, in context (the state's), for a state with the given budget in
 * bytes; its file is made at the first write.  The file is closed when the
 * calling aggregate resets that context, and by the resource owner on error.
 */
extern BF_HIDDEN HashSpill *HashSpillCreate(FunctionCallInfo fcinfo,
											MemoryContext context, Size budget);

/* Adds hashes, in any order. */
extern BF_HIDDEN void HashSpillWrite(HashSpill *spill, const uint64 *hashes, Size n);

/*
 * Counts the distinct hashes of everything written, using buffer (room for
 * "room" hashes) to load one partition at a time, and keeps them, grouped by
 * their top bits, to be read back.  Once counted, a spill takes no more
 * hashes; counting again only returns the count.
 */
extern BF_HIDDEN uint64 HashSpillCount(HashSpill *spill, uint64 *buffer, Size room);

/*
 * The same count for a caller that only inserts the hashes into a filter,
 * where a duplicate changes nothing: the distinct hashes are not written
 * out again, and reading back gives the hashes written, duplicates and all,
 * in the order of their top bits, as often as asked.  A spill counted so
 * cannot then be counted for its distinct hashes.
 */
extern BF_HIDDEN uint64 HashSpillCountOnly(HashSpill *spill, uint64 *buffer, Size room);

/*
 * The next count calls sink with the distinct hashes of each partition as
 * it settles it: over the count, every distinct hash written, once,
 * partition by partition.  The sink is dropped when the count ends; a
 * spill counted before calls nothing (HashSpillSettled).
 */
typedef void (*HashSpillSink) (void *arg, const uint64 *hashes, Size n);
extern BF_HIDDEN void HashSpillSetSink(HashSpill *spill, HashSpillSink sink, void *arg);

/* Whether the spill was counted or sorted: it takes no more hashes. */
extern BF_HIDDEN bool HashSpillSettled(const HashSpill *spill);

/* Hashes written so far, duplicates included. */
extern BF_HIDDEN uint64 HashSpillWritten(const HashSpill *spill);

/*
 * The same for a multiset: keeps every hash written, duplicates included,
 * in increasing order, and returns how many there are.  A spill is
 * counted or sorted, once.
 */
extern BF_HIDDEN uint64 HashSpillSort(HashSpill *spill, uint64 *buffer, Size room);

/*
 * Reads back from the start, up to room hashes per call, 0 at the end:
 * after HashSpillCount the distinct hashes in the order of their top bits,
 * after HashSpillCountOnly the hashes written in that order, after
 * HashSpillSort all of them in increasing order, as often as asked; before
 * any, once, the hashes written, duplicates and all.
 */
extern BF_HIDDEN void HashSpillRewind(HashSpill *spill);
extern BF_HIDDEN Size HashSpillRead(HashSpill *spill, uint64 *buffer, Size room);

#endif							/* BF_HASHSPILL_H */
