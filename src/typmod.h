/*-------------------------------------------------------------------------
 *
 * typmod.h
 *	  The type modifiers of bloom and qfilter columns (typmod.c):
 *	  bloom(capacity, fpr[, growth]) and qfilter(capacity, fpr).
 *
 * A modifier is one int32, so its parameters are kept as decimal mantissas
 * and exponents: a capacity of at most four significant digits (1000000,
 * 1500, 8191), a rate of at most two (0.01, 0.025, 0.001), a growth of 2 to
 * 16.  The rate decodes to the double that its decimal literal gives, so a
 * filter built with bloom_empty(1000000, 0.01) matches bloom(1000000, 0.01)
 * exactly.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_TYPMOD_H
#define BF_TYPMOD_H

#include "fmgr.h"
#include "nodes/nodes.h"
#include "utils/array.h"

#include "bf_port.h"

typedef struct FilterTypmod
{
	int64		capacity;
	double		fpr;
	int32		growth;			/* 0: a filter of fixed size */
} FilterTypmod;

/*
 * The modifier of a column of type typname from its parameters as typed,
 * two, or three where takes_growth; ERROR 22023 for parameters it cannot
 * keep.  The caller checks them as the type's constructor would, after.
 */
extern BF_HIDDEN int32 FilterTypmodIn(ArrayType *parameters, const char *typname,
									  bool takes_growth, FilterTypmod *decoded);

extern BF_HIDDEN void FilterTypmodDecode(int32 typmod, FilterTypmod *decoded);

/*
 * The column's type modifier an input or receive function is called with
 * (a literal, or COPY into a bloom(capacity, fpr) column), -1 for none.
 */
extern BF_HIDDEN int32 InputFunctionTypmod(FunctionCallInfo fcinfo);

/* "(capacity,fpr[,growth])", or "" for no modifier. */
extern BF_HIDDEN char *FilterTypmodOut(int32 typmod);

/*
 * Whether a filter of these parameters is a value of the column's type:
 * if not, ERROR 22023 naming both and hinting at how to build one that
 * is (a soft error where escontext takes one: false).
 */
extern BF_HIDDEN bool FilterFitsTypmod(int32 typmod, const char *typname, uint64 capacity,
									   double fpr, int32 growth, Node *escontext);

#endif							/* BF_TYPMOD_H */
