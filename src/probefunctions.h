/*-------------------------------------------------------------------------
 *
 * probefunctions.h
 *	  The C entry points of the probe functions (bloomfilter.c,
 *	  qfilter_sql.c), which the planner's probe table (plannersupport.c)
 *	  recognises by the code a function runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PROBEFUNCTIONS_H
#define BF_PROBEFUNCTIONS_H

#include "fmgr.h"

/* filter @> value: the filter is argument 0 */
extern PGDLLEXPORT Datum bloom_contains(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum qfilter_contains(PG_FUNCTION_ARGS);

/* value <@ filter: the filter is argument 1 */
extern PGDLLEXPORT Datum bloom_contained_by(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum qfilter_contained_by(PG_FUNCTION_ARGS);

#endif							/* BF_PROBEFUNCTIONS_H */
