/*-------------------------------------------------------------------------
 *
 * plannersupport.h
 *	  What the planner support (plannersupport.c) tells other planner
 *	  code: which argument of a probe function is the filter, and the
 *	  reader of its type.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PLANNERSUPPORT_H
#define BF_PLANNERSUPPORT_H

#include "bf_port.h"
#include "probecache.h"

/*
 * The reader of the filter one of this module's probe functions takes (by
 * the C code it runs), and the filter's argument in *filter_arg:
 * bloom_contains and qfilter_contains (0), bloom_contained_by and
 * qfilter_contained_by (1); NULL for any other function, a user's function
 * of the same name included.
 */
extern BF_HIDDEN const FilterReader *ProbeFunctionReader(Oid funcid, int *filter_arg);

/* A reader as a plan can carry it, and back (plans cross processes). */
extern BF_HIDDEN int FilterReaderId(const FilterReader *reader);
extern BF_HIDDEN const FilterReader *FilterReaderOfId(int id);

#endif							/* BF_PLANNERSUPPORT_H */
