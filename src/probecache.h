/*-------------------------------------------------------------------------
 *
 * probecache.h
 *	  What one call site of a SQL function remembers between calls
 *	  (probecache.c): the key type of its value argument, the detoasted
 *	  filter it probes, and the last header it decoded.  Probes go through
 *	  here so that a scan pays for a stored filter once, not per row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PROBECACHE_H
#define BF_PROBECACHE_H

#include "fmgr.h"

#include "bloomvalue.h"

/*
 * The identity checks behind the caches, for qfilter's probes too: whether
 * a TOAST pointer names the stored value (relid, valueid), and whether
 * argument argno is a Const of the call's expression.
 */
extern BF_HIDDEN bool SameStoredValue(const struct varatt_external *pointer, Oid relid,
									  Oid valueid);
extern BF_HIDDEN bool ArgIsConst(FmgrInfo *flinfo, int argno);

/* The key type of argument argno (or of values of typid) at this call site. */
extern BF_HIDDEN KeyType *CallSiteKeyOfArg(FunctionCallInfo fcinfo, int argno);
extern BF_HIDDEN KeyType *CallSiteKeyOfType(FunctionCallInfo fcinfo, Oid typid);

/*
 * The filter argument argno, detoasted at most once per query for a stored
 * or constant filter, with its decoded header.
 */
extern BF_HIDDEN Bloom *ProbeFilterArg(FunctionCallInfo fcinfo, int argno,
									   BfHeader *header);

/* Whether the value argument may be in the filter argument. */
extern BF_HIDDEN bool ProbeValueArg(FunctionCallInfo fcinfo, int filter_arg,
									int value_arg);

#endif							/* BF_PROBECACHE_H */
