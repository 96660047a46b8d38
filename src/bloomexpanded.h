/*-------------------------------------------------------------------------
 *
 * bloomexpanded.h
 *	  The expanded (in-memory) form of a bloom value (bloomexpanded.c),
 *	  which bloom_add and bloom_add_all modify in place when their caller
 *	  hands them a read-write pointer to it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_BLOOMEXPANDED_H
#define BF_BLOOMEXPANDED_H

#include "fmgr.h"

#include "bloomvalue.h"

/*
 * The filter argument argno as a value this call may change and return:
 * the argument itself when it is a read-write expanded value (its owner
 * handed it over: PL/pgSQL on PostgreSQL 18, or a nested call's result),
 * else a new expanded copy of it.  *result is the datum to return.  The
 * answer is where the expanded value keeps its flat value, so that adding
 * to a chain (BloomAddHashes), which may move it, repoints the value at
 * once, even should a later step fail.
 */
extern BF_HIDDEN Bloom **BloomArgForUpdate(FunctionCallInfo fcinfo, int argno,
										   Datum *result);

/*
 * The flat value inside an expanded bloom value, to read without copying
 * it; NULL when the datum is not expanded.
 */
extern BF_HIDDEN Bloom *ExpandedBloomFlat(Datum datum);

#endif							/* BF_BLOOMEXPANDED_H */
