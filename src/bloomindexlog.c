/*-------------------------------------------------------------------------
 *
 * bloomindexlog.c
 *	  The bloomfilter index's change log (bloomindex.h has its layout): its
 *	  pages at the build, the head page an insert appends its key's entry
 *	  to and the ring's turn to the next page, and the entries a copy made
 *	  at some WAL position lacks (bloom_index_changes).
 *
 * Why a log of key hashes in the index, and not the pages changed since a
 * position: a key changes one 64-byte block, but a page holds 126 of them,
 * so a copy brought up to date page by page would fetch some 8 kB per key
 * inserted, where an entry is 8 bytes of hash.  Why in the index and not
 * in the WAL itself (logical decoding): the log is written, replayed,
 * replicated and removed with the index, needs no replication slot that
 * holds WAL back, and a standby answers from it as it answers probes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomindex.h"

/*
 * Writes the log's npages empty pages after the index's other pages (the
 * metapage says where), then marks the end of the build in the metapage:
 * a copy made before it is of another index (REINDEX, TRUNCATE, VACUUM
 * FULL gave the index new pages), so the log cannot update it.
 */
void
WriteChangeLog(Relation index, uint32 npages)
{
	Buffer		metabuf;
	GenericXLogState *state;
	Page		page;
	BlockNumber first;

	metabuf = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	first = PageMeta(BufferGetPage(metabuf))->log.first_page;
	UnlockReleaseBuffer(metabuf);

	for (uint32 p = 0; p < npages; p++)
	{
		Buffer		buffer = NewIndexBuffer(index, MAIN_FORKNUM);

		CHECK_FOR_INTERRUPTS();
		if (BufferGetBlockNumber(buffer) != first + p)
			elog(ERROR, "bloomfilter index change log page %u was created as block %u",
				 first + p, BufferGetBlockNumber(buffer));
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
		InitIndexPage(page, 0);
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buffer);
	}

	metabuf = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, metabuf, 0);
	PageMeta(page)->log.built_at = GetXLogInsertRecPtr();
	PageMeta(page)->log.horizon = PageMeta(page)->log.built_at;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

static bool
LogPageHasRoom(Page page)
{
	return ((PageHeader) page)->pd_lower + sizeof(ChangeLogEntry) <=
		((PageHeader) page)->pd_upper;
}

/*
 * Makes the page after layout's head the head, unless another backend has
 * already moved the head on (then layout takes the metapage's).  The page
 * is cleared for its new entries; the newest position of those it held
 * becomes the horizon.  Called with a page of the filter locked: the
 * metapage comes after filter pages, and a log page after the metapage,
 * in every backend's locking order.
 */
static void
AdvanceLog(Relation index, IndexLayout *layout)
{
	Buffer		metabuf = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	BloomIndexLog *log;
	Buffer		buffer;
	GenericXLogState *state;
	Page		metapage;
	Page		page;
	uint32		next;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	log = &PageMeta(BufferGetPage(metabuf))->log;
	if (log->head != layout->log.head || log->npages != layout->log.npages)
	{
		layout->log = *log;
		UnlockReleaseBuffer(metabuf);
		return;
	}
	next = (log->head + 1) % log->npages;
	buffer = ReadBuffer(index, log->first_page + next);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);

	state = GenericXLogStart(index);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	page = GenericXLogRegisterBuffer(state, buffer, 0);
	log = &PageMeta(metapage)->log;
	if (PageEntryCount(page) > 0)
		log->horizon = Max(log->horizon, PageGetLSN(BufferGetPage(buffer)));
	InitIndexPage(page, 0);
	log->head = next;
	layout->log = *log;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buffer);
	UnlockReleaseBuffer(metabuf);
}

/*
 * The log's head page, locked exclusively, with room for one entry;
 * layout's head follows the log's.
 */
Buffer
LockLogHead(Relation index, IndexLayout *layout)
{
	for (;;)
	{
		Buffer		buffer = ReadBuffer(index, layout->log.first_page + layout->log.head);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (LogPageHasRoom(BufferGetPage(buffer)))
			return buffer;
		UnlockReleaseBuffer(buffer);
		AdvanceLog(index, layout);
	}
}

/*
 * Adds the key's entry to the locked head page (which LockLogHead found
 * with room); *entry_offset is where in the page it went.
 */
void
LogAppend(Page page, uint32 segment, uint64 hash, Size *entry_offset)
{
	ChangeLogEntry *entry = PageEntries(page) + PageEntryCount(page);

	entry->hash = hash;
	entry->before = PageGetLSN(page);
	entry->segment = segment;
	entry->unused = 0;
	((PageHeader) page)->pd_lower += sizeof(ChangeLogEntry);
	*entry_offset = (Size) ((char *) entry - (char *) page);
}

/*
 * Where the records before an insert position end: the position itself,
 * or, where it lies just past the header of a page no record has reached
 * yet, the page's start, since the header is not written until a record
 * is, and XLogFlush refuses a position past the WAL written.
 */
static XLogRecPtr
RecordsEndBy(XLogRecPtr position)
{
	if (XLogSegmentOffset(position, wal_segment_size) == SizeOfXLogLongPHD)
		return position - SizeOfXLogLongPHD;
	if (position % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		return position - SizeOfXLogShortPHD;
	return position;
}

/*
 * The position a copy made now is consistent with: every WAL record that
 * began before it has changed its pages already (an insert changes its
 * pages, under their locks, before it reserves its record's place), and
 * on a standby, every record replayed.  On a primary, the WAL up to it is
 * flushed before a client learns it: a crash loses the WAL not on disk,
 * and recovery, which keeps the timeline, would then give new records
 * positions the client was already told its copy had, so that no delta
 * from there would carry their keys.  It costs a flush only where WAL is
 * waiting for one (a transaction's that has not committed, or an
 * asynchronous commit's).  A standby replays only WAL it has on disk.
 */
XLogRecPtr
CurrentPosition(void)
{
	XLogRecPtr	position;

	if (RecoveryInProgress())
		return GetXLogReplayRecPtr(NULL);
	position = GetXLogInsertRecPtr();
	XLogFlush(RecordsEndBy(position));
	return position;
}

/* The build a copy of the index is of: its end's position; invalid if no log. */
XLogRecPtr
IndexBuild(Relation index)
{
	IndexLayout layout;

	ReadMeta(index, &layout);
	return layout.log.npages > 0 ? layout.log.built_at : InvalidXLogRecPtr;
}

/* A growing array of the entries found. */
typedef struct Changes
{
	uint64	   *hashes;
	uint32	   *segments;
	uint64		count;
	uint64		room;
} Changes;

static void
AddChange(Changes *changes, uint32 segment, uint64 hash)
{
	if (changes->count == changes->room)
	{
		changes->room *= 2;
		changes->hashes = repalloc_huge(changes->hashes, changes->room * sizeof(uint64));
		changes->segments = repalloc_huge(changes->segments, changes->room * sizeof(uint32));
	}
	changes->hashes[changes->count] = hash;
	changes->segments[changes->count] = segment;
	changes->count++;
}

static void
ReportCorruptLog(Relation index, BlockNumber page)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has a corrupted change log page %u",
					RelationGetRelationName(index), page)));
}

/* The entries of one log page whose records ended after since, by upto. */
static void
PageChangesSince(Relation index, BlockNumber pageno, XLogRecPtr since, XLogRecPtr upto,
				 Changes *changes)
{
	Buffer		buffer = ReadBuffer(index, pageno);
	Page		page;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageGetLSN(page) > since)
	{
		PageHeader header = (PageHeader) page;
		ChangeLogEntry *entries = PageEntries(page);
		uint32		count;

		if (header->pd_lower < MAXALIGN(SizeOfPageHeaderData) ||
			header->pd_lower > header->pd_upper)
			ReportCorruptLog(index, pageno);
		count = PageEntryCount(page);
		for (uint32 i = 0; i < count; i++)
		{
			XLogRecPtr	end = i + 1 < count ? entries[i + 1].before : PageGetLSN(page);

			if (entries[i].segment >= BF_MAX_SEGMENTS)
				ReportCorruptLog(index, pageno);
			if (end > since && end <= upto)
				AddChange(changes, entries[i].segment, entries[i].hash);
		}
	}
	UnlockReleaseBuffer(buffer);
}

/*
 * The entries that bring a copy consistent with since to upto, a position
 * the caller took before (so that every record begun before it has changed
 * its pages): those whose records ended after since and by upto.  Ending
 * by upto, not beginning before it: an entry whose record straddles upto
 * comes with the next call, from upto on, and no entry comes twice, which
 * would count its key twice in the copy.  (A key whose record ends after
 * upto committed after upto.)  The pages are read one at a time, no lock
 * held across them: an entry added meanwhile ended after upto, and one
 * cleared meanwhile moved the horizon, read last.  False if the log
 * cannot tell: there is none, since is older than the build or the
 * horizon, or build, the build the copy is of, is not this one.  The
 * position alone cannot tell the build: a copy made of another index after
 * this one was built (REINDEX CONCURRENTLY builds the new index while
 * copies of the old one are still made) is not older than the build, yet
 * its bits are not this index's, and a key this index takes no room for,
 * as its own segments hold it already, would be missing from such a copy.
 */
bool
ChangesSince(Relation index, XLogRecPtr since, XLogRecPtr upto, XLogRecPtr build,
			 uint64 **hashes, uint32 **segments, uint64 *count, uint32 *nsegments)
{
	IndexLayout before;
	IndexLayout after;
	Changes		changes;

	ReadMeta(index, &before);
	if (before.log.npages == 0 || since < before.log.built_at || since < before.log.horizon ||
		build != before.log.built_at)
		return false;
	changes.room = 64;
	changes.count = 0;
	changes.hashes = palloc(changes.room * sizeof(uint64));
	changes.segments = palloc(changes.room * sizeof(uint32));
	for (uint32 p = 0; p < before.log.npages; p++)
	{
		CHECK_FOR_INTERRUPTS();
		PageChangesSince(index, before.log.first_page + p, since, upto, &changes);
	}
	ReadMeta(index, &after);
	if (since < after.log.horizon || after.log.built_at != before.log.built_at)
		return false;
	for (uint64 i = 0; i < changes.count; i++)
	{
		if (changes.segments[i] >= after.header.nsegments)
			ReportCorruptLog(index, before.log.first_page);
	}
	*hashes = changes.hashes;
	*segments = changes.segments;
	*count = changes.count;
	*nsegments = after.header.nsegments;
	return true;
}
