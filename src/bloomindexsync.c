/*-------------------------------------------------------------------------
 *
 * bloomindexsync.c
 *	  Copies of a bloomfilter index that follow it: bloom_index_snapshot
 *	  (the filter and the WAL position it is consistent with),
 *	  bloom_index_changes (what a copy made at a position lacks, as a
 *	  delta in the core's format, delta.h) and bloom_apply_changes (a
 *	  delta applied to a bloom value, as the clients apply it).
 *
 * A position is a WAL position on a timeline.  A copy made on another
 * timeline than the server's is made anew: after a failover, WAL
 * positions past the old primary's last one name other records on the new
 * timeline, and a copy may hold keys the new primary never got, or lack
 * keys it got at positions the copy believes it has seen.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "funcapi.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"

#include "bloomindex.h"
#include "delta.h"

/* The timeline positions are on: inserted into, or replayed on a standby. */
static TimeLineID
CurrentTimeline(void)
{
	TimeLineID	timeline;

	if (RecoveryInProgress())
	{
		GetXLogReplayRecPtr(&timeline);
		return timeline;
	}
	return GetWALInsertionTimeLine();
}

PG_FUNCTION_INFO_V1(bloom_index_snapshot);
/*
 * bloom_index_snapshot(index): the index as bloom_index_filter copies it,
 * the position it is consistent with (every key whose insert began before
 * it is in the copy), the position's timeline, and the build the copy is
 * of (NULL for a partitioned index or one without a change log).
 */
Datum
bloom_index_snapshot(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	TimeLineID	timeline = CurrentTimeline();
	XLogRecPtr	position = CurrentPosition();
	XLogRecPtr	build = InvalidXLogRecPtr;
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {0};

	desc = ResultRowDesc(fcinfo);
	if (index->rd_rel->relkind != RELKIND_PARTITIONED_INDEX)
		build = IndexBuild(index);
	values[1] = PointerGetDatum(IndexUnionSnapshot(index));
	values[0] = LSNGetDatum(position);
	values[2] = Int64GetDatum((int64) timeline);
	values[3] = LSNGetDatum(build);
	nulls[3] = XLogRecPtrIsInvalid(build);
	index_close(index, NoLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/*
 * The delta of count entries: their hashes grouped by segment (a run per
 * segment that has any, in segment order), for a filter of header's
 * parameters that has nsegments segments.
 */
static bytea *
DeltaOf(const BfHeader *header, uint32 nsegments, const uint64 *hashes,
		const uint32 *segments, uint64 count)
{
	uint64		per_segment[BF_MAX_SEGMENTS] = {0};
	uint32		nruns = 0;
	size_t		len;
	bytea	   *delta;
	BfDeltaWriter writer;

	for (uint64 i = 0; i < count; i++)
		per_segment[segments[i]]++;
	for (uint32 s = 0; s < nsegments; s++)
		nruns += per_segment[s] > 0;
	len = bf_delta_bytes(nruns, count);
	if (len > MaxAllocHugeSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the changes are too large to send")));
	delta = palloc_extended(VARHDRSZ + len, MCXT_ALLOC_HUGE);
	bf_delta_start(&writer, (uint8 *) VARDATA(delta), header, nsegments);
	for (uint32 s = 0; s < nsegments; s++)
	{
		if (per_segment[s] == 0)
			continue;
		for (uint64 i = 0; i < count; i++)
		{
			if (segments[i] == s)
				bf_delta_add(&writer, s, hashes[i]);
		}
	}
	len = bf_delta_finish(&writer);
	SET_VARSIZE(delta, VARHDRSZ + len);
	return delta;
}

/*
 * The changes of one index (not a partitioned one) since a position, as
 * a delta; NULL where the copy must be made anew.
 */
static bytea *
IndexChangesSince(Relation index, XLogRecPtr since, XLogRecPtr upto, XLogRecPtr build)
{
	IndexLayout layout;
	uint64	   *hashes;
	uint32	   *segments;
	uint64		count;
	uint32		nsegments;

	if (!ChangesSince(index, since, upto, build, &hashes, &segments, &count, &nsegments))
		return NULL;
	ReadMeta(index, &layout);
	return DeltaOf(&layout.header, nsegments, hashes, segments, count);
}

/*
 * Whether a copy claims a position this primary has not reached.  A
 * standby may lag behind the primary a copy was made on, and then the copy
 * waits for it; a primary's position never goes back while it runs, and a
 * crash cannot take back a position it gave out (CurrentPosition), so one
 * behind the copy was restored from a backup and started on the same
 * timeline: the records it writes from here take positions the copy was
 * told it had, and no delta would carry their keys.
 */
static bool
AheadOfPrimary(XLogRecPtr since, XLogRecPtr position)
{
	return !RecoveryInProgress() && since > position;
}

PG_FUNCTION_INFO_V1(bloom_index_changes);
/*
 * bloom_index_changes(index, since, since_timeline, since_build): upto,
 * reload and delta.
 * reload is true (and delta NULL) where a copy consistent with since
 * cannot be brought up to date from the index's change log: then the
 * caller takes a new snapshot.  Otherwise delta, applied to such a copy,
 * gives one holding every key whose inserting transaction committed
 * before upto.  upto is never beyond the server's own position: a
 * position it gives out is one it has reached.  A since ahead of a standby
 * (a copy made on a primary, asked of a standby that lags) gets an empty
 * delta and the standby's position: the copy holds all the standby has
 * replayed and more, so it is kept, and that is all upto says; ahead of a
 * primary, it reloads (AheadOfPrimary).
 */
Datum
bloom_index_changes(PG_FUNCTION_ARGS)
{
	Relation	index;
	XLogRecPtr	since;
	TimeLineID	timeline;
	XLogRecPtr	position;
	bytea	   *delta = NULL;
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {0};

	/* not strict: no index, no answer; no since, timeline or build, reload */
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	index = OpenIndexForReading(PG_GETARG_OID(0));
	since = PG_ARGISNULL(1) ? InvalidXLogRecPtr : PG_GETARG_LSN(1);
	timeline = CurrentTimeline();
	position = CurrentPosition();
	desc = ResultRowDesc(fcinfo);
	if (index->rd_rel->relkind != RELKIND_PARTITIONED_INDEX &&
		!PG_ARGISNULL(1) && !PG_ARGISNULL(2) && !PG_ARGISNULL(3) &&
		PG_GETARG_INT64(2) == (int64) timeline && !AheadOfPrimary(since, position))
		delta = IndexChangesSince(index, since, position, PG_GETARG_LSN(3));
	values[0] = LSNGetDatum(position);
	values[1] = BoolGetDatum(delta == NULL);
	values[2] = PointerGetDatum(delta);
	nulls[2] = delta == NULL;
	values[3] = Int64GetDatum((int64) timeline);
	index_close(index, NoLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

PG_FUNCTION_INFO_V1(bloom_apply_changes);
/*
 * bloom_apply_changes(filter, delta): the copy brought up to date, as the
 * client library applies a delta.  A damaged delta is refused as damaged
 * data (XX001); one of another index, or for a copy it cannot apply to
 * (another build, more segments), as a wrong argument (22023): the caller
 * takes a new snapshot.
 */
Datum
bloom_apply_changes(PG_FUNCTION_ARGS)
{
	Bloom	   *bloom = PG_GETARG_BLOOM_P(0);
	bytea	   *delta = PG_GETARG_BYTEA_PP(1);
	BfHeader	header;
	size_t		new_len;
	BfStatus	status;
	Bloom	   *result;

	/* the whole copy, body check included: the pass costs what the apply does */
	status = bf_validate(BloomData(bloom), BloomDataLen(bloom), &header, &BackendSizingMemo);
	if (status != BF_OK)
		ReportCorruptValue(status);
	status = bf_delta_check(BloomData(bloom), BloomDataLen(bloom), &header,
							(const uint8 *) VARDATA_ANY(delta), VARSIZE_ANY_EXHDR(delta),
							&new_len, &BackendSizingMemo);
	if (status == BF_ERR_DELTA_MISMATCH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the changes are not of this filter"),
				 errdetail("They were taken from an index of other parameters, or of another build than the filter's copy."),
				 errhint("Take a new copy with bloom_index_snapshot.")));
	if (status == BF_ERR_TOO_LARGE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the filter would grow beyond the largest bloom value"),
				 errdetail("%s.", bf_status_message(status))));
	if (status != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the changes are corrupted"),
				 errdetail("%s.", bf_status_message(status))));
	if (new_len > BF_MAX_VALUE_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the filter would grow beyond the largest bloom value")));
	result = palloc_extended(VARHDRSZ + new_len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(result, VARHDRSZ + new_len);
	memcpy(BloomData(result), BloomData(bloom), BloomDataLen(bloom));
	bf_delta_apply(BloomData(result), BloomDataLen(bloom), new_len, &header,
				   (const uint8 *) VARDATA_ANY(delta), VARSIZE_ANY_EXHDR(delta),
				   &BackendSizingMemo, &InterruptibleSlices);
	PG_RETURN_BLOOM_P(result);
}
