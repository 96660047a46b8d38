/*
 * chase.c: the memory-latency floor of a Bloom filter probe.
 *
 * A probe of a blocked filter reads one random 64-byte block.  Once the
 * filter is larger than the caches, that read costs one memory access that
 * nothing in the probe can avoid; this program measures that cost on the
 * machine at hand, so the benchmark can judge the probe's overhead against
 * the hardware rather than against a fixed number.
 *
 * The buffer (same size as the filter, allocated with malloc like a
 * detoasted value) is cut into 64-byte lines linked into one random cycle
 * (Sattolo's algorithm).  Each load's address comes from the previous load,
 * so the hardware can neither prefetch nor overlap the loads: the time per
 * step is the latency of one random access.
 *
 * A scan does not probe in a quiet machine: between two probes it reads the
 * next row, and the table streaming through the caches evicts the filter's
 * lines.  With STREAM, each step also reads STREAM bytes of a sequential
 * pass over a buffer much larger than the caches, as a table scan reading
 * STREAM bytes per row does, and the time of that pass alone, measured
 * apart, is subtracted: what remains is the latency of the filter's load
 * under the scan's traffic.
 *
 * Usage: chase BYTES [STREAM]   prints the median ns per load over rounds.
 *
 * With --insert, the floor of an insert instead: bloom_agg's fixed form
 * and bloom_add_all add hashes to a filter of BYTES in batches, each one a
 * read-modify-write of a random 64-byte block, independent of the others
 * and prefetched a few places ahead (bf_add_hashes).  This does the same to
 * a buffer of BYTES, setting 7 bits of a random block per insert, from a
 * buffer of random values read in order, as the aggregate reads its hashes.
 *
 * Usage: chase --insert BYTES     prints the median ns per insert.
 *
 * With --touch, the cost of memory new to the process (a parallel worker's
 * copy of a filter, a filter allocated where the allocator kept nothing):
 * the first write to each 4 kB of BYTES of new memory, in 4 kB pages and
 * then asked for huge pages (madvise, as src/largevalue.c does).
 *
 * Usage: chase --touch BYTES      prints the median ns per 4 kB, small
 *                                 pages then huge pages.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE_BYTES 64
#define ROUNDS 7
#define CALIBRATION_STEPS 100000
#define ROUND_NS 1e8			/* about 0.1 s per round */

typedef struct Line
{
	struct Line *next;
	char		pad[LINE_BYTES - sizeof(struct Line *)];
} Line;

/* splitmix64: a fixed seed keeps the cycle the same from run to run. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Links the lines into a single cycle through all of them, in random order. */
static void
link_random_cycle(Line *lines, size_t nlines)
{
	size_t	   *order = malloc(nlines * sizeof(size_t));
	uint64_t	state = 42;

	if (order == NULL)
	{
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < nlines; i++)
		order[i] = i;
	/* Sattolo: swapping only with earlier slots yields one n-cycle. */
	for (size_t i = nlines - 1; i > 0; i--)
	{
		size_t		j = next_random(&state) % i;
		size_t		tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
	for (size_t i = 0; i < nlines; i++)
		lines[i].next = &lines[order[i]];
	free(order);
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The table a scan reads: much larger than any cache, read in order. */
#define STREAM_BUFFER_BYTES ((size_t) 512 << 20)

static uint64_t *stream;
static size_t stream_words;
static size_t stream_at;
static uint64_t stream_sum;

/* Follows the chain for steps loads, reading stream_step words of the
 * stream after each; returns where it ended. */
static Line *
chase(Line *start, long steps, size_t stream_step)
{
	Line	   *p = start;

	for (long i = 0; i < steps; i++)
	{
		p = p->next;
		for (size_t w = 0; w < stream_step; w++)
		{
			stream_sum += stream[stream_at];
			if (++stream_at == stream_words)
				stream_at = 0;
		}
	}
	return p;
}

#define INSERT_VALUES (1 << 20)
#define INSERT_AHEAD 32			/* bf_add_hashes's distance */
#define INSERT_BITS 7			/* k at the default rate, 0.01 */

/* The block of a value, by multiply and shift as the filter picks one. */
static inline uint64_t *
block_of(uint64_t *blocks, size_t nblocks, uint64_t v)
{
	return &blocks[(size_t) (((unsigned __int128) v * nblocks) >> 64) * 8];
}

/* Sets INSERT_BITS bits of the block value picks, for each of n values. */
static void
insert_all(uint64_t *blocks, size_t nblocks, const uint64_t *values, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	v = values[i];
		uint64_t   *block;

		if (i + INSERT_AHEAD < n)
			__builtin_prefetch(block_of(blocks, nblocks, values[i + INSERT_AHEAD]), 1);
		block = block_of(blocks, nblocks, v);
		for (int b = 0; b < INSERT_BITS; b++)
		{
			unsigned	bit = (v >> (b * 9 + 1)) & 511;

			block[bit / 64] |= UINT64_C(1) << (bit % 64);
		}
	}
}

static int compare_doubles(const void *a, const void *b);

/* --insert: the median ns per insert into a buffer of bytes. */
static int
insert_floor(size_t bytes)
{
	size_t		nblocks = bytes / LINE_BYTES;
	uint64_t   *blocks = calloc(nblocks, LINE_BYTES);
	uint64_t   *values = malloc(INSERT_VALUES * sizeof(uint64_t));
	uint64_t	state = 42;
	uint64_t	sum = 0;
	double		ns[ROUNDS];

	if (blocks == NULL || values == NULL)
	{
		perror("malloc");
		return 1;
	}
	for (size_t i = 0; i < INSERT_VALUES; i++)
		values[i] = next_random(&state);
	insert_all(blocks, nblocks, values, INSERT_VALUES);	/* warm caches and TLB */
	for (int r = 0; r < ROUNDS; r++)
	{
		double		start = now_ns();

		insert_all(blocks, nblocks, values, INSERT_VALUES);
		ns[r] = (now_ns() - start) / INSERT_VALUES;
	}
	qsort(ns, ROUNDS, sizeof(double), compare_doubles);
	for (size_t i = 0; i < nblocks * 8; i += 4096)
		sum += blocks[i];
	printf("%.2f\n", ns[ROUNDS / 2]);
	fprintf(stderr, "checksum %llu\n", (unsigned long long) sum);
	return 0;
}

#define PAGE_BYTES 4096
#define HUGE_BYTES ((size_t) 2 << 20)

/* ns per 4 kB to write once to each page of bytes of new memory. */
static double
touch_new_memory(size_t bytes, bool huge)
{
	size_t		mapped = bytes + HUGE_BYTES;
	char	   *region = mmap(NULL, mapped, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char	   *start;
	double		begin;
	double		ns;

	if (region == MAP_FAILED)
	{
		perror("mmap");
		exit(1);
	}
	/* the huge pages' alignment for both, so that only the advice differs */
	start = (char *) (((uintptr_t) region + HUGE_BYTES - 1) & ~(uintptr_t) (HUGE_BYTES - 1));
#ifdef MADV_HUGEPAGE
	if (huge)
		(void) madvise(start, bytes, MADV_HUGEPAGE);
#endif
	begin = now_ns();
	for (size_t at = 0; at < bytes; at += PAGE_BYTES)
		start[at] = 1;
	ns = (now_ns() - begin) / (bytes / PAGE_BYTES);
	munmap(region, mapped);
	return ns;
}

static int compare_doubles(const void *a, const void *b);

/* --touch: the median over rounds of each kind of page. */
static int
touch_floor(size_t bytes)
{
	double		small[ROUNDS];
	double		huge[ROUNDS];

	for (int r = 0; r < ROUNDS; r++)
	{
		small[r] = touch_new_memory(bytes, false);
		huge[r] = touch_new_memory(bytes, true);
	}
	qsort(small, ROUNDS, sizeof(double), compare_doubles);
	qsort(huge, ROUNDS, sizeof(double), compare_doubles);
	printf("%.0f %.0f\n", small[ROUNDS / 2], huge[ROUNDS / 2]);
	return 0;
}

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	size_t		bytes;
	size_t		stream_step = 0;
	size_t		nlines;
	Line	   *lines;
	Line	   *p;
	double		ns[ROUNDS];
	double		start;
	long		steps;

	if (argc == 3 && strcmp(argv[1], "--insert") == 0 &&
		(bytes = strtoull(argv[2], NULL, 10)) >= 2 * LINE_BYTES)
		return insert_floor(bytes);
	if (argc == 3 && strcmp(argv[1], "--touch") == 0 &&
		(bytes = strtoull(argv[2], NULL, 10)) >= PAGE_BYTES)
		return touch_floor(bytes);
	if (argc < 2 || argc > 3 || (bytes = strtoull(argv[1], NULL, 10)) < 2 * LINE_BYTES)
	{
		fprintf(stderr, "usage: chase BYTES [STREAM] | chase --insert BYTES | chase --touch BYTES\n");
		return 2;
	}
	if (argc == 3)
		stream_step = (strtoull(argv[2], NULL, 10) + sizeof(uint64_t) - 1) / sizeof(uint64_t);
	nlines = bytes / LINE_BYTES;
	lines = malloc(nlines * sizeof(Line));
	stream_words = stream_step > 0 ? STREAM_BUFFER_BYTES / sizeof(uint64_t) : 1;
	stream = malloc(stream_words * sizeof(uint64_t));
	if (lines == NULL || stream == NULL)
	{
		perror("malloc");
		return 1;
	}
	for (size_t w = 0; w < stream_words; w++)
		stream[w] = w;
	link_random_cycle(lines, nlines);

	/* One full lap first, so the measured rounds start from warm caches and TLB. */
	p = chase(lines, (long) nlines, stream_step);

	/*
	 * Rounds of a fixed duration rather than a fixed count: a cached buffer
	 * needs many steps to be timed precisely, an uncached one few.
	 */
	start = now_ns();
	p = chase(p, CALIBRATION_STEPS, stream_step);
	steps = (long) (ROUND_NS / ((now_ns() - start) / CALIBRATION_STEPS + 0.1));
	if (steps < CALIBRATION_STEPS)
		steps = CALIBRATION_STEPS;
	for (int r = 0; r < ROUNDS; r++)
	{
		start = now_ns();
		p = chase(p, steps, stream_step);
		ns[r] = (now_ns() - start) / steps;
	}
	qsort(ns, ROUNDS, sizeof(double), compare_doubles);
	/* Printing where the chain ended keeps the compiler from dropping it. */
	printf("%.2f\n", ns[ROUNDS / 2]);
	fprintf(stderr, "ended at line %zu (stream sum %llu)\n", (size_t) (p - lines),
			(unsigned long long) stream_sum);
	return 0;
}
