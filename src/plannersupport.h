/*-------------------------------------------------------------------------
 *
 * plannersupport.h
 *	  What the planner support (plannersupport.c) tells other planner
 *	  code: which argument of a probe function is the filter, and of which
 *	  type.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PLANNERSUPPORT_H
#define BF_PLANNERSUPPORT_H

#include "bf_port.h"

/*
 * The filter's argument of one of this module's probe functions (by name,
 * and by the C code it runs): bloom_contains and qfilter_contains (0),
 * bloom_contained_by and qfilter_contained_by (1); -1 for any other
 * function, a user's function of the same name included.  Sets
 * *filter_type, if not NULL, to the name of the filter's type: "bloom" or
 * "qfilter".
 */
extern BF_HIDDEN int ProbeFilterArgument(Oid funcid, const char **filter_type);

#endif							/* BF_PLANNERSUPPORT_H */
