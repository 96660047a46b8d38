/*-------------------------------------------------------------------------
 *
 * hashbuf.c
 *	  The hash buffers of the self-sizing aggregates: de-duplication in
 *	  cache-sized buckets, grouping by top bits, and counting the distinct
 *	  hashes of several grouped buffers without merging them.  Part of the
 *	  pure core (see hashbuf.h): no PostgreSQL headers, no allocation.
 *
 * Why not sort
 * ------------
 * A self-sizing bloom_agg collects one 64-bit hash per row and needs two
 * things from them at the end: how many are distinct (to size the filter)
 * and an order that visits the filter's blocks roughly in sequence (so that
 * inserting does not miss the cache once per value).  Neither needs a full
 * sort.  A large buffer is split by its hashes' top bits into buckets small
 * enough for an open-addressing table that stays in the L1/L2 cache, and
 * each bucket is de-duplicated with that table.  The result comes out
 * grouped by its top bits, which is the filter's block order at a
 * granularity of a few blocks, because a block is picked by the hash's high
 * bits (bf_block_of).  A bucket of mostly distinct hashes, a key column's,
 * first tries a cheaper way: a bitmap of the hashes' next bits shows which
 * are certainly distinct, and only the few others go to a table.
 *
 * Hostile input
 * -------------
 * Hashes chosen to collide in the table make a probe sequence long; past
 * MAX_PROBES the bucket is split further or, when it is small, sorted with
 * a heapsort.  The work is therefore O(n log n) at worst, never quadratic.
 * Hashes chosen to share fingerprints cost a few passes more per bucket: a
 * bucket where many do goes to the table.
 *
 * Parallel plans
 * --------------
 * Each worker's buffer arrives de-duplicated and grouped by the widest split
 * (BF_MAX_GROUP_BITS).  The leader walks all buffers group by group at once
 * (bf_count_distinct_grouped), so their union is counted without building it.
 *
 *-------------------------------------------------------------------------
 */
#include "hashbuf.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define DISTINCT_TABLE_BITS 13	/* 8192 slots, 64 kB */
#define DISTINCT_TABLE_LIMIT (1 << (DISTINCT_TABLE_BITS - 1))	/* load <= 1/2 */

#if DISTINCT_TABLE_LIMIT != BF_UNGROUPED_DISTINCT_MAX
#error "hashbuf.h promises grouping beyond one table's worth of hashes"
#endif
/*
 * At most 1024 buckets per split: an out-of-place split writes one stream
 * per bucket, and 1024 of them stay within the L2 cache and the TLB, where
 * twice as many would not.  That is one split for up to 4M hashes.
 */
#define PARTITION_MAX_BITS BF_MAX_GROUP_BITS

/*
 * Rounds of the in-place split's swap loop (partition_hashes) before the
 * cycle takes the rest: random hashes need 14 to 16 at 0.3M to 3M, and each
 * round costs a pass over the buckets' bounds however few hashes it moves,
 * so the cap keeps chosen input at O(n) too.  No input searched for so far
 * needed more rounds than about log2 of its length, so the cycle hardly
 * ever runs: the fuzz suite builds the unit tests with a cap of one round
 * too, which leaves the cycle most of every split.
 */
#ifndef PARTITION_SWAP_ROUNDS
#define PARTITION_SWAP_ROUNDS 32
#endif

/*
 * A longer probe means hashes crowd the table (see drop_duplicates).  The
 * fuzz suite builds the unit tests with 1 too, so that what follows a
 * crowded table runs.
 */
#ifndef MAX_PROBES
#define MAX_PROBES 256
#endif

/*
 * The table's index is the bits below the shared prefix, multiplied by an
 * odd constant: the aggregates de-duplicate buffers whose front is an
 * earlier result, ordered by those very bits, and unmixed they would all
 * land in one stretch of the table.
 */
#define TABLE_MIX UINT64_C(0x9E3779B97F4A7C15)

/* A crowded table's buffer is sorted when it is at most this large. */
#define SORT_AT_MOST 65536

/*
 * Fingerprints (count_group_distinct, drop_duplicates_by_fingerprint): at
 * least 16 slots per hash (a bitmap's size is a power of two), so that at
 * most about one hash in 16 shares its fingerprint, and at most 2^18 bits
 * in a bitmap.  A bitmap is cheaper to clear and to fill than a table of
 * 64-bit hashes, and most hashes never need more than their bit.
 */
#define FINGERPRINT_SLOTS_LOG2 4
#define FINGERPRINT_MAX_BITS 18

/*
 * A bucket in which more than 1 / REPEATS_FOR_TABLE of the hashes repeat
 * a fingerprint goes to the table: most of them would be gathered anyway.
 * Random distinct hashes repeat one at most about once in 32.
 */
#define REPEATS_FOR_TABLE 8

/* The smallest b with 2^b >= n (n >= 1). */
static int
ceil_log2(size_t n)
{
	int			b = 0;

	while (((size_t) 1 << b) < n)
		b++;
	return b;
}

/* Bits of the fingerprints of n hashes: at least one 64-bit word's worth. */
static int
fingerprint_bits(size_t n)
{
	int			bits = ceil_log2(n) + FINGERPRINT_SLOTS_LOG2;

	return bits < 6 ? 6 : bits;
}

/*
 * Marks a fingerprint in seen, and in shared if seen already had it;
 * returns 1 in that case.  Without branches: whether a slot is taken is as
 * random as the hash.
 */
static BF_ALWAYS_INLINE size_t
mark_fingerprint(uint64_t *seen, uint64_t *shared, uint64_t fingerprint)
{
	uint64_t	bit = UINT64_C(1) << (fingerprint & 63);
	uint64_t	word = seen[fingerprint >> 6];

	shared[fingerprint >> 6] |= word & bit;
	seen[fingerprint >> 6] = word | bit;
	return (word & bit) != 0;
}

/* 1 if mark_fingerprint marked a fingerprint shared, else 0. */
static BF_ALWAYS_INLINE size_t
fingerprint_shared(const uint64_t *shared, uint64_t fingerprint)
{
	return (shared[fingerprint >> 6] >> (fingerprint & 63)) & 1;
}

/*
 * Drops duplicates from the front of a[0..n), compacting the distinct hashes
 * to a[0..*kept), until the table would hold more than DISTINCT_TABLE_LIMIT
 * of them.  Returns how many elements were consumed: n when all of a was
 * de-duplicated.  Every element of a shares its top "shift" bits, so the
 * table is indexed by the bits below them (mixed, see TABLE_MIX).  0 marks
 * an empty slot, so the hash 0 is tracked apart.
 *
 * A probe longer than MAX_PROBES also stops the table, and sets *crowded.
 * Uniform hashes at load 1/2 practically never get there; values chosen to
 * collide in the (mixed) index would, and would make the table quadratic.
 *
 * Inlined into each caller: called from two, GCC would no longer inline it
 * by itself, and the call costs a tenth of a bucket's time.
 */
static BF_ALWAYS_INLINE size_t
drop_duplicates(uint64_t *a, size_t n, int shift, uint64_t *table, size_t *kept,
				bool *crowded)
{
	const size_t limit = n < DISTINCT_TABLE_LIMIT ? n : DISTINCT_TABLE_LIMIT;
	const int	table_bits = ceil_log2(2 * limit) < 4 ? 4 : ceil_log2(2 * limit);
	const size_t mask = ((size_t) 1 << table_bits) - 1;
	bool		zero_seen = false;
	size_t		out = 0;
	size_t		i;

	*crowded = false;
	memset(table, 0, (mask + 1) * sizeof(uint64_t));
	for (i = 0; i < n; i++)
	{
		uint64_t	h = a[i];
		size_t		slot = (size_t) (((h << shift) * TABLE_MIX) >> (64 - table_bits));

		if (h == 0)
		{
			if (zero_seen)
				continue;
			if (out == limit)
				break;
			zero_seen = true;
		}
		else
		{
			size_t		probes = 0;

			while (table[slot] != 0 && table[slot] != h && probes++ < MAX_PROBES)
				slot = (slot + 1) & mask;
			if (table[slot] == h)
				continue;
			*crowded = table[slot] != 0;
			if (out == limit || *crowded)
				break;
			table[slot] = h;
		}
		a[out++] = h;
	}
	*kept = out;
	return i;
}

/*
 * The same for a bucket of mostly distinct hashes, n <= DISTINCT_TABLE_LIMIT
 * of them sharing their top "shift" bits, the way count_group_distinct
 * counts: a bitmap of each hash's next bits finds those whose fingerprint no
 * other has, which are distinct and stay, in order; the few that share a
 * fingerprint are gathered and de-duplicated with a small table, and follow
 * them.  Two passes without branches over a bucket the cache holds cost
 * less than probing the table for every hash, which mispredicts a branch
 * whenever a slot is taken.
 *
 * Returns false when more than 1 / REPEATS_FOR_TABLE of the hashes repeat a
 * fingerprint (many duplicates: the table is then faster), or when the
 * gathered hashes crowd the small table (chosen values), and leaves in
 * a[0..n) the same set of hashes for the table to take over, though not
 * the same multiset: the crowded table de-duplicated part of the gathered.
 * The table's memory serves as bitmaps, gathering room and small table:
 * with n <= 4096, at most 1024 words each, 1024 gathered and 2048 slots.
 */
static bool
drop_duplicates_by_fingerprint(uint64_t *a, size_t n, int shift, uint64_t *table,
							   size_t *kept)
{
	int			bits;
	size_t		words;
	uint64_t   *seen;
	uint64_t   *shared;
	uint64_t   *gathered;
	uint64_t   *small_table;
	int			down;
	uint64_t	mask;
	size_t		repeats = 0;
	size_t		out = 0;
	size_t		ngathered = 0;
	size_t		distinct_gathered;
	bool		crowded;

	if (n > DISTINCT_TABLE_LIMIT)
		return false;
	bits = fingerprint_bits(n);
	if (bits > 64 - shift)
		return false;
	words = (size_t) 1 << (bits - 6);
	seen = table;
	shared = seen + words;
	gathered = shared + words;
	small_table = gathered + n / REPEATS_FOR_TABLE * 2;
	down = 64 - shift - bits;
	mask = (UINT64_C(1) << bits) - 1;
	memset(seen, 0, 2 * words * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		repeats += mark_fingerprint(seen, shared, (a[i] >> down) & mask);
	if (repeats > n / REPEATS_FOR_TABLE)
		return false;
	if (repeats == 0)
	{
		*kept = n;
		return true;
	}

	/*
	 * A fingerprint shared by k hashes is k - 1 repeats, so at most
	 * 2 * repeats are gathered, within the room.  Writing every hash to the
	 * room's next slot may write one past its last: the small table's first
	 * slot, which drop_duplicates clears before it uses it.
	 */
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h = a[i];
		size_t		is_shared = fingerprint_shared(shared, (h >> down) & mask);

		gathered[ngathered] = h;
		ngathered += is_shared;
		a[out] = h;
		out += 1 - is_shared;
	}
	if (drop_duplicates(gathered, ngathered, shift, small_table, &distinct_gathered,
						&crowded) < ngathered)
	{
		memcpy(a + out, gathered, ngathered * sizeof(uint64_t));
		return false;
	}
	memcpy(a + out, gathered, distinct_gathered * sizeof(uint64_t));
	*kept = out + distinct_gathered;
	return true;
}

/*
 * The out-of-place split of a buffer larger than the L2 cache stages each
 * bucket's hashes in a 64-byte line of its own and writes whole lines with
 * non-temporal stores.  A scattered store into a buffer that large first
 * reads its line from memory (write-allocate) and evicts what the split is
 * reading; a whole-line streaming store does neither.  Smaller buffers stay
 * in the cache, where plain stores are faster.
 */
#define STREAM_SPLIT_FROM 131072
#if (1 << DISTINCT_TABLE_BITS) < (8 << PARTITION_MAX_BITS)
#error "the de-duplication table stages the split: it needs 8 slots per bucket"
#endif

#if defined(__SSE2__)
static void
scatter_streaming(const uint64_t *a, size_t n, int down, uint64_t mask,
				  uint64_t *dst, size_t *next, uint64_t (*lines)[8])
{
	/* positions q and q + 1 share a cache line unless (q + skew) % 8 == 7 */
	const size_t skew = ((uintptr_t) dst / sizeof(uint64_t)) & 7;
	size_t		first[1 << PARTITION_MAX_BITS];

	memcpy(first, next, sizeof(size_t) * (mask + 1));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h = a[i];
		uint64_t	b = (h >> down) & mask;
		size_t		q = next[b]++;

		lines[b][(q + skew) & 7] = h;
		if (((q + skew) & 7) != 7)
			continue;
		if (q >= first[b] + 7)
		{
			__m128i    *to = (__m128i *) (dst + q - 7);
			const __m128i *from = (const __m128i *) lines[b];

			_mm_stream_si128(to, _mm_loadu_si128(from));
			_mm_stream_si128(to + 1, _mm_loadu_si128(from + 1));
			_mm_stream_si128(to + 2, _mm_loadu_si128(from + 2));
			_mm_stream_si128(to + 3, _mm_loadu_si128(from + 3));
		}
		else					/* the line the bucket shares with the one before */
			for (size_t r = first[b]; r <= q; r++)
				dst[r] = lines[b][(r + skew) & 7];
	}
	_mm_sfence();				/* streaming stores are weakly ordered */

	/* Each bucket's last line, unless it was full. */
	for (uint64_t b = 0; b <= mask; b++)
	{
		size_t		end = next[b];
		size_t		in_line = (end + skew) & 7;
		size_t		from = end >= first[b] + in_line ? end - in_line : first[b];

		for (size_t r = from; r < end; r++)
			dst[r] = lines[b][(r + skew) & 7];
	}
}
#endif

/*
 * Splits a[0..n) into 2^bits buckets by the bits below the top "shift" ones,
 * into dst (out of place) or in place when dst is NULL.  bounds[b] gets
 * bucket b's end.  Out of place is faster on a buffer larger than the
 * cache: it streams, where in place each hash is read and written twice.
 * staging, 64 bytes per bucket, if given, lets a large split stream.
 */
static void
partition_hashes(uint64_t *a, size_t n, int shift, int bits, uint64_t *dst,
				 size_t *bounds, uint64_t (*staging)[8])
{
	size_t		next[1 << PARTITION_MAX_BITS];
	const int	nbuckets = 1 << bits;
	const int	down = 64 - shift - bits;
	const uint64_t mask = (uint64_t) nbuckets - 1;
	size_t		position = 0;

	memset(next, 0, sizeof(size_t) * nbuckets);
	for (size_t i = 0; i < n; i++)
		next[(a[i] >> down) & mask]++;
	for (int b = 0; b < nbuckets; b++)
	{
		size_t		count = next[b];

		next[b] = position;
		position += count;
		bounds[b] = position;
	}

	if (dst != NULL)
	{
#if defined(__SSE2__)
		if (staging != NULL && n >= STREAM_SPLIT_FROM)
		{
			scatter_streaming(a, n, down, mask, dst, next, staging);
			return;
		}
#else
		(void) staging;
#endif
		for (size_t i = 0; i < n; i++)
			dst[next[(a[i] >> down) & mask]++] = a[i];
		return;
	}

	/*
	 * In place, first in rounds: each position of a bucket not yet settled
	 * swaps its hash with the next free slot of the hash's own bucket, which
	 * settles that slot, and the loop moves on to the next position without
	 * waiting for what came back.  The slots touched are independent, so a
	 * buffer larger than the cache has many of their misses in flight at
	 * once; the cycle below waits for each miss before it knows the next
	 * address.  Every swap settles a slot, so the rounds do at most n swaps
	 * in all; the few hashes a capped number of rounds leaves unsettled go
	 * to the cycle, which starts from the same state (next[b] = the end of
	 * bucket b's settled front).
	 */
	for (int round = 0; round < PARTITION_SWAP_ROUNDS; round++)
	{
		bool		unsettled = false;

		for (int b = 0; b < nbuckets; b++)
		{
			const size_t end = bounds[b];

			for (size_t i = next[b]; i < end; i++)
			{
				uint64_t	v = a[i];
				size_t		slot = next[(v >> down) & mask]++;

				a[i] = a[slot];
				a[slot] = v;
			}
			unsettled |= next[b] < end;
		}
		if (!unsettled)
			return;
	}

	/* American flag sort: cycle each misplaced hash to its bucket. */
	for (int b = 0; b < nbuckets; b++)
	{
		while (next[b] < bounds[b])
		{
			uint64_t	v = a[next[b]];
			int			digit = (int) ((v >> down) & mask);

			while (digit != b)
			{
				uint64_t	displaced = a[next[digit]];

				a[next[digit]++] = v;
				v = displaced;
				digit = (int) ((v >> down) & mask);
			}
			a[next[b]++] = v;
		}
	}
}

static void
sift_down(uint64_t *a, size_t root, size_t n)
{
	uint64_t	v = a[root];

	for (;;)
	{
		size_t		child = 2 * root + 1;

		if (child >= n)
			break;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[child] <= v)
			break;
		a[root] = a[child];
		root = child;
	}
	a[root] = v;
}

/*
 * Sorts and de-duplicates a[0..n) in place: the fallback for hashes that
 * crowd the table, at a guaranteed n log n (heapsort: no allocation, no
 * quadratic worst case).
 */
static size_t
sort_unique(uint64_t *a, size_t n)
{
	size_t		kept = 0;

	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t end = n; end-- > 1;)
	{
		uint64_t	top = a[0];

		a[0] = a[end];
		a[end] = top;
		sift_down(a, 0, end);
	}
	for (size_t i = 0; i < n; i++)
		if (kept == 0 || a[i] != a[kept - 1])
			a[kept++] = a[i];
	return kept;
}

/*
 * De-duplicates a[0..n), all of whose hashes share their top "shift" bits,
 * and returns how many distinct ones are left at the front.  "expected" is
 * the size the caller's partitioning made buckets on average (0 at the top).
 *
 * The table is tried first where it is likely to settle the buffer in one
 * pass, or costs little when it does not: a small buffer, a large one at the
 * top (a column of few distinct values), and a bucket much larger than
 * expected (a value repeated many times).  A small buffer tries its
 * fingerprints before the table, unless "fingerprints" is false: the bucket
 * before it had many duplicates, and so, most likely, has this one.  Else,
 * or when the table fills up, the buffer is split by its next bits into
 * buckets expected to fit the table, and each is de-duplicated in turn.
 * With scratch (room for n) the split is out of place, and the bucket's
 * own slice of a serves as scratch one level down.  A table crowded by
 * hashes that collide in its index, which only chosen values do, gives up:
 * a small rest is sorted, a large one split further.
 *
 * The recursion ends: every split consumes at least one bit; hashes sharing
 * 52 or more top bits take at most 4096 = DISTINCT_TABLE_LIMIT distinct
 * values, so there the table, always tried, never fills; and hashes sharing
 * all 64 are one value.
 *
 * With "placed" (the top level only), the distinct hashes of an out-of-place
 * split are left at the front of scratch, and *placed says which buffer
 * holds them; the lower levels always leave theirs in a.
 */
static size_t
distinct_level(uint64_t *a, size_t n, int shift, size_t expected,
			   uint64_t *scratch, uint64_t *table, uint64_t **placed,
			   bool fingerprints)
{
	size_t		bounds[1 << PARTITION_MAX_BITS];
	uint64_t   *parts;
	size_t		kept = 0;
	size_t		start = 0;
	uint64_t   *out = a;
	int			bits;

	if (placed != NULL)
		*placed = a;
	if (shift == 64)			/* all equal */
		return n == 0 ? 0 : 1;
	if (n <= DISTINCT_TABLE_LIMIT || shift > 64 - DISTINCT_TABLE_BITS ||
		(expected == 0 ? n >= 16 * DISTINCT_TABLE_LIMIT : n > 4 * expected))
	{
		bool		crowded;
		size_t		consumed;

		if (fingerprints && drop_duplicates_by_fingerprint(a, n, shift, table, &kept))
			return kept;
		consumed = drop_duplicates(a, n, shift, table, &kept, &crowded);
		if (consumed == n)
			return kept;
		/* The distinct front stays; the rest moves up to join it. */
		if (kept < consumed)
			memmove(a + kept, a + consumed, (n - consumed) * sizeof(uint64_t));
		n = kept + (n - consumed);
		if (crowded && n <= SORT_AT_MOST)
			return sort_unique(a, n);
	}

	/*
	 * The top level always splits as wide as it can, so that every large
	 * result is grouped by BF_MAX_GROUP_BITS bits (bf_count_distinct_grouped).
	 */
	bits = ceil_log2((n + DISTINCT_TABLE_LIMIT / 2 - 1) / (DISTINCT_TABLE_LIMIT / 2));
	if (bits < 1)
		bits = 1;
	if (expected == 0 || bits > PARTITION_MAX_BITS)
		bits = PARTITION_MAX_BITS;
	if (bits > 64 - shift)
		bits = 64 - shift;
	/* the table is free while the split runs: 8192 slots, 64 bytes per bucket */
	partition_hashes(a, n, shift, bits, scratch, bounds, (uint64_t (*)[8]) table);
	parts = scratch != NULL ? scratch : a;
	if (placed != NULL)
		out = *placed = parts;
	kept = 0;
	for (int b = 0; b < (1 << bits); b++)
	{
		size_t		len = bounds[b] - start;
		size_t		distinct = distinct_level(parts + start, len, shift + bits,
											  n >> bits,
											  scratch != NULL ? a + start : NULL,
											  table, NULL, fingerprints);

		/* kept <= start: the bucket's survivors move down, never up. */
		memmove(out + kept, parts + start, distinct * sizeof(uint64_t));
		kept += distinct;
		start = bounds[b];
		/*
		 * Duplicates in a bucket predict as many in the next.  Its repeated
		 * fingerprints are its duplicates and the fingerprints random
		 * hashes share, so this stops short of REPEATS_FOR_TABLE.
		 */
		fingerprints = len - distinct <= len / (2 * REPEATS_FOR_TABLE);
	}
	return kept;
}

/*
 * The top bits that all hashes share are skipped: splitting on them would
 * put everything in one bucket, and indexing the table by them would put
 * everything in one slot.  The aggregates' buckets are such buffers.
 */
size_t
bf_distinct_hashes_placed(uint64_t *hashes, size_t n, uint64_t *scratch,
						  uint64_t **placed)
{
	uint64_t	table[1 << DISTINCT_TABLE_BITS];
	uint64_t	differ = 0;

	*placed = hashes;
	/* Random hashes differ in the top bit at once: no need to read on. */
	for (size_t i = 1; i < n && (differ >> 63) == 0; i++)
		differ |= hashes[i] ^ hashes[0];
	if (differ == 0)
		return n == 0 ? 0 : 1;
	return distinct_level(hashes, n, bf_leading_zeros(differ), 0, scratch, table, placed,
						  true);
}

size_t
bf_distinct_hashes(uint64_t *hashes, size_t n, uint64_t *scratch)
{
	uint64_t   *placed;
	size_t		distinct = bf_distinct_hashes_placed(hashes, n, scratch, &placed);

	if (placed != hashes)
		memcpy(hashes, placed, distinct * sizeof(uint64_t));
	return distinct;
}

/* How many top bits the hashes are grouped by: the most whose order never decreases. */
int
bf_grouped_bits(const uint64_t *hashes, size_t n)
{
	int			bits = 64;

	/* Without branches: a descent is as likely as not inside a group. */
	for (size_t i = 1; i < n; i++)
	{
		unsigned	shared = (unsigned) bf_leading_zeros((hashes[i - 1] ^ hashes[i]) | 1);
		unsigned	descent = 0u - (unsigned) (hashes[i - 1] > hashes[i]);
		int			limit = (int) ((shared & descent) | (64u & ~descent));

		bits = limit < bits ? limit : bits;
	}
	return bits;
}

/*
 * Counting one group's distinct hashes does not need a table of them: a
 * bitmap of their next bits (a fingerprint) finds every hash whose
 * fingerprint no other hash of the group has, and those are distinct; only
 * the few that share a fingerprint are gathered and de-duplicated (see
 * FINGERPRINT_SLOTS_LOG2).  Two bitmaps of at most 32 kB take groups of up
 * to 16,384 hashes; a larger group is gathered and de-duplicated whole.
 */

/*
 * The distinct hashes among buffers[b][from[b], to[b]), all of which share
 * their top "shift" bits.  scratch has room for "room" hashes; SIZE_MAX if
 * that is too little.
 */
static size_t
count_group_distinct(const uint64_t *const *buffers, const size_t *from, const size_t *to,
					 int nbuffers, int shift, uint64_t *scratch, size_t room)
{
	uint64_t	seen[1 << (FINGERPRINT_MAX_BITS - 6)];
	uint64_t	shared[1 << (FINGERPRINT_MAX_BITS - 6)];
	size_t		n = 0;
	size_t		fingerprints = 0;
	size_t		shared_fingerprints = 0;
	size_t		gathered = 0;
	int			bits;
	int			down;
	uint64_t	mask;
	size_t		words;

	for (int b = 0; b < nbuffers; b++)
		n += to[b] - from[b];
	if (n == 0)
		return 0;
	bits = fingerprint_bits(n);
	if (bits > FINGERPRINT_MAX_BITS || bits > 64 - shift)
	{
		if (n > room)
			return SIZE_MAX;
		for (int b = 0; b < nbuffers; b++)
		{
			memcpy(scratch + gathered, buffers[b] + from[b],
				   (to[b] - from[b]) * sizeof(uint64_t));
			gathered += to[b] - from[b];
		}
		return bf_distinct_hashes(scratch, n, NULL);
	}
	down = 64 - shift - bits;
	mask = (UINT64_C(1) << bits) - 1;
	words = (size_t) 1 << (bits - 6);
	memset(seen, 0, words * sizeof(uint64_t));
	memset(shared, 0, words * sizeof(uint64_t));

	for (int b = 0; b < nbuffers; b++)
		for (size_t i = from[b]; i < to[b]; i++)
			fingerprints += 1 - mark_fingerprint(seen, shared, (buffers[b][i] >> down) & mask);
	/* few words hold a shared fingerprint; popcount may be a library call */
	for (size_t w = 0; w < words; w++)
		if (shared[w] != 0)
			shared_fingerprints += bf_popcount64(shared[w]);
	if (shared_fingerprints == 0)
		return fingerprints;

	for (int b = 0; b < nbuffers; b++)
		for (size_t i = from[b]; i < to[b]; i++)
		{
			if (fingerprint_shared(shared, (buffers[b][i] >> down) & mask))
			{
				if (gathered == room)
					return SIZE_MAX;
				scratch[gathered++] = buffers[b][i];
			}
		}
	return fingerprints - shared_fingerprints + bf_distinct_hashes(scratch, gathered, NULL);
}

/*
 * Counts the distinct hashes of several buffers together without merging
 * them, when each is grouped by its top "bits" bits (bf_grouped_bits):
 * group by group, with count_group_distinct.  Returns SIZE_MAX when the
 * hashes of a group that share fingerprints do not fit in room hashes, or
 * when a buffer turns out not to be grouped: its cursor then stops at the
 * first hash whose group is lower than the one before and never reaches the
 * end.  Checking that here, rather than with bf_grouped_bits first, spares
 * the parallel leader a pass over every hash.
 */
size_t
bf_count_distinct_grouped(const uint64_t *const *buffers, const size_t *lengths,
						  int nbuffers, int bits, uint64_t *scratch, size_t room)
{
	size_t		cursor[BF_MAX_GROUPED_BUFFERS] = {0};
	size_t		from[BF_MAX_GROUPED_BUFFERS];
	size_t		distinct = 0;

	if (nbuffers > BF_MAX_GROUPED_BUFFERS || bits < 1 || bits > PARTITION_MAX_BITS)
		return SIZE_MAX;
	for (uint64_t group = 0; group < (UINT64_C(1) << bits); group++)
	{
		size_t		in_group;

		for (int b = 0; b < nbuffers; b++)
		{
			from[b] = cursor[b];
			while (cursor[b] < lengths[b] && buffers[b][cursor[b]] >> (64 - bits) == group)
				cursor[b]++;
		}
		in_group = count_group_distinct(buffers, from, cursor, nbuffers, bits, scratch, room);
		if (in_group == SIZE_MAX)
			return SIZE_MAX;
		distinct += in_group;
	}
	for (int b = 0; b < nbuffers; b++)
		if (cursor[b] != lengths[b])
			return SIZE_MAX;
	return distinct;
}

/* Orders hashes by their top BF_MAX_GROUP_BITS bits, in place. */
void
bf_group_hashes(uint64_t *hashes, size_t n)
{
	size_t		bounds[1 << PARTITION_MAX_BITS];

	partition_hashes(hashes, n, 0, PARTITION_MAX_BITS, NULL, bounds, NULL);
}

/* The same, out of place into dst (room for n): much faster for many. */
void
bf_group_hashes_into(uint64_t *hashes, size_t n, uint64_t *dst)
{
	size_t		bounds[1 << PARTITION_MAX_BITS];
	uint64_t	staging[8 << PARTITION_MAX_BITS];

	partition_hashes(hashes, n, 0, PARTITION_MAX_BITS, dst, bounds,
					 (uint64_t (*)[8]) staging);
}
