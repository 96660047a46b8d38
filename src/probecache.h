/*-------------------------------------------------------------------------
 *
 * probecache.h
 *	  What one call site of a SQL function remembers between calls
 *	  (probecache.c), for both filter types: the key type of its value
 *	  argument, the detoasted filter it probes, and the last header it
 *	  decoded.  Probes go through here so that a scan pays for a stored
 *	  filter once, not per row.  A filter type takes part through its
 *	  FilterReader: how its values are read, tested and probed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PROBECACHE_H
#define BF_PROBECACHE_H

#include "fmgr.h"

#include "keykind.h"

/*
 * How the extension reads the values of one filter type: one reader per
 * type, used by the probe cache (the scalar and array probes), the
 * planner's probe table (plannersupport.c) and the Bloom Filter Scan.  A
 * header is the type's decoded header (header_size bytes), which callers
 * keep for the filter they keep; the functions get it as the type's own
 * struct.  A new filter type implements one of these, its SQL functions,
 * and its line in the probe table.
 */
typedef struct FilterReader
{
	Size		header_size;	/* of the decoded header */

	/*
	 * Of the serialised header: two values of one length whose first
	 * raw_header_size bytes are equal decode to the same header.
	 */
	Size		raw_header_size;

	/* Decodes and checks filter's header; a corrupt value is an ERROR. */
	void		(*read_header) (struct varlena *filter, void *header);

	/* Refuses (ERROR) a key of a kind the filter cannot answer for. */
	void		(*check_key) (const void *header, const KeyType *key);

	/* Whether value may be in filter, whose key kind fits key. */
	bool		(*test) (struct varlena *filter, const void *header, const KeyType *key,
						 Datum value);

	/*
	 * Optional: the flat value inside an in-memory form of the type (an
	 * expanded value), to read where it is; NULL for any other datum, which
	 * is detoasted.
	 */
	struct varlena *(*in_place) (Datum datum);

	/*
	 * Optional: probes a stored value of value_bytes bytes, not compressed,
	 * by reading only slices of it (detoast_attr_slice).  Sets *result and
	 * returns true, or returns false to have the value detoasted whole.
	 */
	bool		(*probe_slices) (struct varlena *raw, Size value_bytes, const KeyType *key,
								 Datum value, bool *result);

	/*
	 * test in the three steps of a batched scan: the value's hash (or
	 * fingerprint), the prefetch of what testing it will read, the test.
	 */
	uint64		(*hash) (const void *header, const KeyType *key, Datum value);
	void		(*prefetch) (struct varlena *filter, const void *header, uint64 hash);
	bool		(*test_hash) (struct varlena *filter, const void *header, uint64 hash);
} FilterReader;

/* The two filter types: bloom (bloomprobe.c) and qfilter (qfiltervalue.c). */
extern BF_HIDDEN const FilterReader BloomReader;
extern BF_HIDDEN const FilterReader QFilterReader;

/* The key type of argument argno (or of values of typid) at this call site. */
extern BF_HIDDEN KeyType *CallSiteKeyOfArg(FunctionCallInfo fcinfo, int argno);
extern BF_HIDDEN KeyType *CallSiteKeyOfType(FunctionCallInfo fcinfo, Oid typid);

/*
 * The filter argument argno (*filter), detoasted at most once per query for
 * a stored or constant filter, and its decoded header, which stays valid
 * until the call site's next probe.
 */
extern BF_HIDDEN const void *CachedFilterArg(FunctionCallInfo fcinfo, const FilterReader *reader,
											int argno, struct varlena **filter);

/*
 * Whether the value argument may be in the filter argument: the probe
 * behind *_contains(filter, value), @> and <@.
 */
extern BF_HIDDEN bool ProbeValueArg(FunctionCallInfo fcinfo, const FilterReader *reader,
									int filter_arg, int value_arg);

/*
 * *_contains_all(filter, values[]) (stop_on false) and *_contains_any
 * (stop_on true), with the answers of x = ALL/ANY (array).
 */
extern BF_HIDDEN Datum ProbeArrayArg(FunctionCallInfo fcinfo, const FilterReader *reader,
									 bool stop_on);

#endif							/* BF_PROBECACHE_H */
