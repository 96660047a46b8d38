/*-------------------------------------------------------------------------
 *
 * plannersupport.h
 *	  What the planner support (plannersupport.c) tells other planner
 *	  code: which argument of a probe function is the filter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PLANNERSUPPORT_H
#define BF_PLANNERSUPPORT_H

#include "bf_port.h"

/*
 * The filter's argument of bloom_contains (0) or bloom_contained_by (1),
 * by the function's name; -1 for any other function.
 */
extern BF_HIDDEN int BloomProbeFilterArgument(Oid funcid);

#endif							/* BF_PLANNERSUPPORT_H */
