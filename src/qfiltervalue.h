/*-------------------------------------------------------------------------
 *
 * qfiltervalue.h
 *	  The qfilter varlena and the helpers its SQL functions and aggregates
 *	  share (qfiltervalue.c): validation of bytes from outside, header access,
 *	  sizing with its user-facing errors, key kinds, and growing inserts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_QFILTERVALUE_H
#define BF_QFILTERVALUE_H

#include "fmgr.h"
#include "nodes/nodes.h"

#include "bloomvalue.h"
#include "keykind.h"
#include "qfilter.h"

/* A qfilter value is a varlena whose data is the core's serialised format. */
typedef struct varlena QFilter;

#define PG_GETARG_QFILTER_P(n)	((QFilter *) PG_DETOAST_DATUM(PG_GETARG_DATUM(n)))
#define PG_GETARG_QFILTER_P_COPY(n) ((QFilter *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(n)))

static inline uint8 *
QFilterData(QFilter *filter)
{
	return (uint8 *) VARDATA(filter);
}

/* A new, empty filter with the header's size, in the current context. */
extern BF_HIDDEN QFilter *QFilterAlloc(const QfHeader *header);

/* The header of (capacity, fpr); a bad pair is an ERROR 22023. */
extern BF_HIDDEN void QFilterSize(int64 capacity, double fpr, QfHeader *header);

/* Header of a value already in the database; a bad one is an ERROR XX001. */
extern BF_HIDDEN void QFilterReadHeader(QFilter *filter, QfHeader *header);
extern BF_HIDDEN void QFilterWriteHeader(QFilter *filter, const QfHeader *header);

/* Raises the ERROR for a status of an operation on filter values. */
extern BF_HIDDEN void QFilterReportStatus(QfStatus status, const QfHeader *header);

/*
 * Refuses a key whose kind differs from the filter's (a false negative
 * otherwise), and records the kind of the first key added.
 */
extern BF_HIDDEN void QFilterCheckKey(const QfHeader *header, const KeyType *key);
extern BF_HIDDEN void QFilterKeyIntoHeader(QfHeader *header, const KeyType *key);

/* A key's hash under the filter's seed: the one hashing routine, bloom's. */
extern BF_HIDDEN uint64 QFilterKeyHash(const QfHeader *header, const KeyType *key, Datum value);

/* A key's fingerprint in the filter: its hash scaled to the filter's range. */
extern BF_HIDDEN uint64 QFilterKeyFingerprint(const QfHeader *header, const KeyType *key,
											  Datum value);

/* Whether a fingerprint may be in filter: false for a filter never added to. */
extern BF_HIDDEN bool QFilterTestFingerprint(QFilter *filter, const QfHeader *header,
											 uint64 fingerprint);

/*
 * Inserts one fingerprint; a full filter grows into a new palloc'd value,
 * which is returned (the old one is freed if it was not the caller's).
 * ERROR 54000 once it cannot grow.
 */
extern BF_HIDDEN QFilter *QFilterInsert(QFilter *filter, QfHeader *header, uint64 fingerprint);

/*
 * Fingerprints in increasing order, read in pieces: next points *piece at
 * the next ones and returns how many, 0 at the end; restart goes back to
 * the first (a build that outgrew its filter starts again).
 */
typedef struct QfSortedSource
{
	Size		(*next) (void *arg, const uint64 **piece);
	void		(*restart) (void *arg);
	void	   *arg;
} QfSortedSource;

/*
 * A filter with params's parameters holding the n fingerprints of source
 * (the aggregates' final step), sized for their number.  It answers a
 * cancel between pieces.
 */
extern BF_HIDDEN QFilter *QFilterBuildFrom(const QfHeader *params, uint64 n,
										   const QfSortedSource *source);

/* The same from an array of n sorted fingerprints. */
extern BF_HIDDEN QFilter *QFilterBuildSorted(const QfHeader *params, const uint64 *fingerprints,
											 size_t n);

/*
 * A validated copy of bytes from outside (input functions, casts), or NULL
 * after a soft error reported to escontext.
 */
extern BF_HIDDEN QFilter *QFilterFromBytes(const uint8 *bytes, size_t len, int sqlstate,
										   Node *escontext, const char *message);

/* Two filters can be combined; else ERROR 22000 naming both. */
extern BF_HIDDEN void QFilterCheckCompatible(const QfHeader *a, const QfHeader *b);

/* The multiset sum of two filters (checked compatible here). */
extern BF_HIDDEN QFilter *QFilterUnion(QFilter *a, const QfHeader *a_header, QFilter *b,
									   const QfHeader *b_header);

#endif							/* BF_QFILTERVALUE_H */
