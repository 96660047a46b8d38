/*
 * client_bench.c
 *	  bench/client.sh's and bench/node.sh's C half: nanoseconds per key of
 *	  the client library's probes of a cache-resident filter (100,000 int64
 *	  keys at 1%, 124 kB), one call per key and in batches, best of 5 runs
 *	  of 10,000,000 probes, half of them of present keys; and milliseconds
 *	  of bfc_from_bytes of a 12 MB filter (10,000,000 keys at 1%, 1,000,000
 *	  in it), the first and the best of 5, and the best of 5 of the same
 *	  bytes in format version 2 (1.0's, checked by its header and structure
 *	  only), in turn with it: what the body check costs the input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomfilter.h"

#define KEYS 100000
#define PROBES 10000000
#define RUNS 5

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A version 3 value's bytes as version 2: its header checksum alone (bloom.h). */
static uint8_t *
as_version_2(const uint8_t *bytes, size_t len)
{
	uint8_t    *v2 = malloc(len);
	uint8_t		covered[52];
	uint32_t	sum;

	memcpy(v2, bytes, len);
	v2[2] = 2;
	memcpy(covered, v2, 48);
	memcpy(covered + 48, v2 + 52, 4);
	sum = (uint32_t) XXH3_64bits(covered, sizeof(covered));
	for (int i = 0; i < 4; i++)
		v2[48 + i] = (uint8_t) (sum >> (8 * i));
	return v2;
}

static double
time_load(const uint8_t *bytes, size_t len)
{
	bfc_error	err;
	double		start = now();
	bfc_filter *copy = bfc_from_bytes(bytes, len, &err);
	double		elapsed = (now() - start) * 1e3;

	if (copy == NULL)
	{
		fprintf(stderr, "client_bench: bfc_from_bytes refused the filter\n");
		exit(1);
	}
	bfc_free(copy);
	return elapsed;
}

/* bfc_from_bytes of a 12 MB filter: the first (into memory new to the
 * process) into *first, the best of 5, and the best of 5 of its version 2
 * form into *best_v2, the two in turn. */
static double
load_ms(double *first, double *best_v2)
{
	bfc_error	err;
	bfc_filter *large = bfc_create(BFC_KIND_NUMBER, 10000000, 0.01, &err);
	const uint8_t *bytes;
	uint8_t    *v2;
	size_t		len;
	double		best = 1e9;

	for (int64_t i = 0; i < 1000000; i++)
		bfc_add_int64(large, i * 7, &err);
	bytes = bfc_bytes(large, &len);
	v2 = as_version_2(bytes, len);
	*best_v2 = 1e9;
	for (int run = 0; run < RUNS; run++)
	{
		double		elapsed = time_load(bytes, len);
		double		elapsed_v2 = time_load(v2, len);

		if (run == 0)
			*first = elapsed;
		if (elapsed < best)
			best = elapsed;
		if (elapsed_v2 < *best_v2)
			*best_v2 = elapsed_v2;
	}
	free(v2);
	bfc_free(large);
	return best;
}

int
main(void)
{
	bfc_error	err;
	bfc_filter *f = bfc_create(BFC_KIND_NUMBER, KEYS, 0.01, &err);
	int64_t    *probes = malloc(PROBES * sizeof(int64_t));
	uint8_t    *out = malloc(PROBES);
	double		best_single = 1e9;
	double		best_batch = 1e9;
	long		found = 0;
	double		load_first = 0;
	double		load_best;
	double		load_v2;

	for (int64_t i = 0; i < KEYS; i++)
		bfc_add_int64(f, i * 3, &err);
	/* present and absent keys, in an order the branch predictor cannot learn */
	for (int64_t i = 0; i < PROBES; i++)
		probes[i] = (int64_t) ((uint64_t) i * 2654435761u % (KEYS * 6));
	for (int run = 0; run < RUNS; run++)
	{
		double		start = now();
		double		elapsed;

		for (int64_t i = 0; i < PROBES; i++)
			found += bfc_contains_int64(f, probes[i], NULL);
		elapsed = (now() - start) / PROBES * 1e9;
		if (elapsed < best_single)
			best_single = elapsed;
		start = now();
		bfc_contains_int64_many(f, probes, PROBES, out, NULL);
		elapsed = (now() - start) / PROBES * 1e9;
		if (elapsed < best_batch)
			best_batch = elapsed;
	}
	printf("c_single_ns %.1f\nc_batch_ns %.1f\nfound %ld\n", best_single, best_batch, found);
	bfc_free(f);
	load_best = load_ms(&load_first, &load_v2);
	printf("c_load_ms %.1f\nc_load_first_ms %.1f\nc_load_v2_ms %.1f\n", load_best, load_first,
		   load_v2);
	return 0;
}
