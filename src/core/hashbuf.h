/*-------------------------------------------------------------------------
 *
 * hashbuf.h
 *	  The hash buffers of the self-sizing aggregates (pure core, see
 *	  hashbuf.c): removing duplicate 64-bit hashes, grouping them by their
 *	  top bits, and counting the distinct hashes of several grouped buffers
 *	  without merging them.
 *
 * Like bloom.h: no PostgreSQL headers, no allocation; callers pass the
 * buffers and any scratch space.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_HASHBUF_H
#define BF_HASHBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bf_port.h"

/* The widest split bf_distinct_hashes makes, and so the grouping it leaves. */
#define BF_MAX_GROUP_BITS 10

/* How many grouped buffers bf_count_distinct_grouped walks at once. */
#define BF_MAX_GROUPED_BUFFERS 64

/*
 * Largest number of distinct hashes that bf_distinct_hashes de-duplicates
 * with one table and leaves in no particular order; more come out grouped
 * by their top BF_MAX_GROUP_BITS bits (beyond those all its hashes share).
 */
#define BF_UNGROUPED_DISTINCT_MAX 4096

/*
 * Removes duplicate hashes in place and returns how many distinct ones are
 * left at the front.  A buffer of more than BF_UNGROUPED_DISTINCT_MAX
 * distinct hashes comes out grouped, so inserting it walks a filter's
 * blocks in order.  scratch, room for n hashes or NULL, makes a buffer
 * larger than the cache much faster.
 */
extern BF_HIDDEN size_t bf_distinct_hashes(uint64_t *hashes, size_t n,
										   uint64_t *scratch);

/*
 * The same, but the distinct hashes stay where the work left them: at the
 * front of hashes, or, after a split out of place, of scratch (hashes then
 * served as scratch in turn), which spares copying a large result back.
 * *placed says which.
 */
extern BF_HIDDEN size_t bf_distinct_hashes_placed(uint64_t *hashes, size_t n,
												  uint64_t *scratch,
												  uint64_t **placed);

/* How many top bits the hashes are grouped by (64 for fewer than two). */
extern BF_HIDDEN int bf_grouped_bits(const uint64_t *hashes, size_t n);

/* Orders hashes by their top BF_MAX_GROUP_BITS bits, in place or into dst. */
extern BF_HIDDEN void bf_group_hashes(uint64_t *hashes, size_t n);
extern BF_HIDDEN void bf_group_hashes_into(uint64_t *hashes, size_t n, uint64_t *dst);

/*
 * The number of distinct hashes among nbuffers de-duplicated buffers, each
 * grouped by its top "bits" bits, without merging them.  scratch has room
 * for "room" hashes; SIZE_MAX if that is too little or a buffer is not
 * grouped as promised.
 */
extern BF_HIDDEN size_t bf_count_distinct_grouped(const uint64_t *const *buffers,
												  const size_t *lengths,
												  int nbuffers, int bits,
												  uint64_t *scratch, size_t room);

#endif							/* BF_HASHBUF_H */
