/*-------------------------------------------------------------------------
 *
 * bloomindex.h
 *	  The bloomfilter index access method: a Bloom filter of one key column
 *	  that PostgreSQL keeps current on every insert, WAL-logged (generic
 *	  WAL), and the SQL functions that probe, snapshot and describe it.
 *	  Here: its page layout, options and caches, and what its files share.
 *
 * The index is a bloom value cut into pages: page 0 is the metapage (the
 * value's header, as bloom.h writes it, and where each segment's pages
 * start), and each segment's 64-byte blocks fill the pages after it,
 * BLOCKS_PER_PAGE to a page; the change log's ring of pages follows the
 * build's segments (BloomIndexLog), and segments added later follow it.
 * By default the value is a chain (the option growth, 2): when its last
 * segment has taken its capacity, an insert appends a segment growth times
 * larger at half the rate (GrowIfFull), so the index keeps its target rate
 * however much the table grows.  With growth = 0 it is one fixed-size
 * filter, which overfills as a stored one does.
 *
 * A key's hash picks one block of the last segment (bf_block_of), so an
 * insert locks and logs one page, and writers of other pages never wait on
 * it (it also reads its block of each older segment, as a key the chain
 * holds already takes no room); its WAL record is that block and the
 * page's insert counter, and the key's entry in the change log (LogInsert).
 * Probes test every segment.  The snapshot (bloom_index_filter)
 * lays the segments out as the value they are: the same bits, so the same
 * answers.
 *
 * The planner never uses the index for scans: it has no scan functions, so
 * no path can be built on it.  Probes go through bloom_index_contains.
 *
 * One file per phase: bloomindex.c (the handler, options, cost estimate),
 * bloomindexutils.c (pages, the metapage, keys, the filter the options ask
 * for), bloomindexbuild.c, bloomindexinsert.c (its WAL record, growth),
 * bloomindexvacuum.c, bloomindexlog.c (the change log); for the SQL
 * functions, bloomindexopen.c (who may read an index, which indexes
 * answer), bloomindexcopy.c (copies tied to a view of the data),
 * bloomindexfuncs.c (the entry points) and bloomindexsync.c (copies that
 * follow the index).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_BLOOMINDEX_H
#define BF_BLOOMINDEX_H

#include "access/amapi.h"
#include "access/xlogdefs.h"
#include "common/relpath.h"
#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"

#include "bloomvalue.h"
#include "keykind.h"

#define BLOOM_INDEX_MAGIC		0x424C4958	/* "BLIX" */
/*
 * Version 3 added the change log (below); a version 2 index, built before,
 * has none and is read as one built with changelog = 0.  A module older
 * than version 3 refuses a version 3 index rather than insert into it
 * without logging the keys, which would hide them from the copies that
 * follow the log.
 */
#define BLOOM_INDEX_VERSION		3
#define BLOOM_INDEX_VERSION_NO_LOG 2
#define BLOOM_INDEX_METAPAGE	0

/* Where a segment's blocks are, and what the build put in it. */
typedef struct BloomIndexSegment
{
	BlockNumber first_page;
	uint32		nblocks;
	uint8		k;
	uint8		unused[7];
	uint64		built;			/* values the build put in this segment */
} BloomIndexSegment;

/*
 * The change log: the hashes of the keys inserts added, so that a copy of
 * the index made at one WAL position can be brought up to a later one
 * (bloom_index_changes) by what changed, not by a new copy.  It is a ring
 * of npages pages after the build's segments; an insert appends its key's
 * entry to the page at head in the same WAL record that sets the key's
 * bits, so no copy can see the bits without the entry or the entry without
 * the bits having been logged with it.  When head is full, the next page
 * of the ring is cleared and becomes head; horizon is the newest position
 * of an entry cleared so, and a copy older than it must be made anew.
 * npages is 0 where there is no log: an unlogged or temporary index (its
 * pages carry no WAL positions), changelog = 0, or a version 2 index.
 */
typedef struct BloomIndexLog
{
	BlockNumber first_page;
	uint32		npages;
	uint32		head;			/* ring position of the page being filled */
	uint32		unused;
	XLogRecPtr	built_at;		/* the build's end: older copies are another index's */
	XLogRecPtr	horizon;
} BloomIndexLog;

/*
 * One entry of a log page, from the page's first byte of contents on:
 * pd_lower marks the end of the entries.  before is the page's LSN before
 * the entry was added: the end of the WAL record of the entry before it
 * (the record that added an entry is the next one to change the page), so
 * that an entry's own record ends at the next entry's before, the last
 * one's at the page's LSN.
 */
typedef struct ChangeLogEntry
{
	uint64		hash;
	XLogRecPtr	before;
	uint32		segment;
	uint32		unused;
} ChangeLogEntry;

#define LOG_ENTRIES_PER_PAGE \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomIndexOpaque))) / sizeof(ChangeLogEntry))

/* What the metapage holds after its page header. */
typedef struct BloomIndexMeta
{
	uint32		magic;
	uint32		version;
	uint8		header[BF_HEADER_SIZE]; /* inserted = keys added by the build */
	uint32		vacuumed;		/* a VACUUM has counted the live rows since */
	uint32		unused;
	uint64		dead_at_vacuum; /* keys added minus live rows, at that VACUUM */
	BloomIndexSegment segments[BF_MAX_SEGMENTS];	/* header's nsegments */
	BloomIndexLog log;			/* version 3 on */
} BloomIndexMeta;

/* The metapage as read: the value's header, its segments' places, its log. */
typedef struct IndexLayout
{
	BfHeader	header;
	BloomIndexSegment segments[BF_MAX_SEGMENTS];
	BloomIndexLog log;
} IndexLayout;

/* The special space of every page: keys added there since the build (0 on log pages). */
typedef struct BloomIndexOpaque
{
	uint64		inserted;
} BloomIndexOpaque;

#define BLOCKS_PER_PAGE \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomIndexOpaque))) / BF_BLOCK_BYTES)

/* Options: WITH (capacity = ..., fpr = ..., growth = ..., changelog = ...). */
typedef struct BloomIndexOptions
{
	int32		vl_len_;
	int			capacity;		/* 0: from the table's size */
	double		fpr;
	int			growth;			/* 0: one segment of fixed size */
	int			changelog;		/* keys the change log keeps at least; 0: none */
} BloomIndexOptions;

#define DEFAULT_INDEX_GROWTH 2
#define DEFAULT_INDEX_CHANGELOG 65536
#define MAX_INDEX_CHANGELOG (16 * 1024 * 1024)

/*
 * The smallest capacity a build from the table's size picks.  A chain that
 * grows by doubling holds up to twice its keys' worth of segments, each at
 * a tighter rate; an index started small on an empty table would end some
 * two times larger (and slower to insert into, with more segments to ask)
 * than one built after the load.  Starting at a million keys, an index on
 * a new table that fills to that takes one segment.  The price is the
 * floor's size for an index of a small table, which a capacity option
 * avoids.
 */
#define MIN_AUTO_CAPACITY 1000000

/*
 * What inserts keep in the index's relcache entry (rd_amcache): the key
 * type and the metapage.  Setting them up takes catalog lookups and a
 * metapage read, several times the cost of the insert itself, and single-
 * row INSERTs would pay it per row; the relcache entry lasts until the
 * index changes (REINDEX, ALTER INDEX), which resets rd_amcache.  A new
 * segment does not reset it: an insert that finds its cached last segment
 * full rereads the metapage (GrowIfFull), and until then keys going to an
 * older segment are still found, as probes test every segment.
 */
typedef struct InsertCache
{
	KeyType		key;
	IndexLayout layout;
	bool		cannot_grow;	/* the chain is as long as it can be */
	bool		near_full;		/* a page of the last segment held its share */
} InsertCache;

/*
 * A backend's copy of one index, made under a view of the data (ProbeView,
 * bloomindexcopy.c).
 */
typedef struct IndexCopy
{
	Oid			indexoid;
	uint64		view;
	uint64		probes;			/* under view, through the pages */
	Bloom	   *bloom;			/* NULL until the probes pay for it */
	BfHeader	header;
	struct IndexCopy *next;
} IndexCopy;

/*
 * Pages: the contents and special space of the index's pages, and where a
 * hash falls.
 */

static inline BloomIndexMeta *
PageMeta(Page page)
{
	return (BloomIndexMeta *) PageGetContents(page);
}

static inline uint8 *
PageBlocks(Page page)
{
	return (uint8 *) PageGetContents(page);
}

static inline BloomIndexOpaque *
PageOpaque(Page page)
{
	return (BloomIndexOpaque *) PageGetSpecialPointer(page);
}

static inline uint32
SegmentPages(const BloomIndexSegment *segment)
{
	return (segment->nblocks + BLOCKS_PER_PAGE - 1) / BLOCKS_PER_PAGE;
}

static inline ChangeLogEntry *
PageEntries(Page page)
{
	return (ChangeLogEntry *) PageGetContents(page);
}

static inline uint32
PageEntryCount(Page page)
{
	return (((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
		sizeof(ChangeLogEntry);
}

/* Which page, and which block of it, a hash falls in within a segment. */
static inline void
BlockOfHash(const BloomIndexSegment *segment, uint64 hash, BlockNumber *page, uint32 *slot)
{
	uint32		block = bf_block_of(hash, segment->nblocks);

	*page = segment->first_page + block / BLOCKS_PER_PAGE;
	*slot = block % BLOCKS_PER_PAGE;
}

/* bloomindex.c */

/* Defines the index's options (WITH (capacity, fpr, growth)); called by _PG_init. */
extern void BloomIndexDefineOptions(void);

/* bloomindexutils.c */

/* One segment's pages, new, WAL-logged whole (bits NULL: zeroes). */
extern BF_HIDDEN void WriteSegmentPages(Relation index, ForkNumber fork,
										const BloomIndexSegment *segment,
										const uint8 *bits);

/*
 * The metapage's header and segments, from a locked metapage page, or read
 * from the index; anything inconsistent is corruption.
 */
extern BF_HIDDEN void DecodeMeta(Relation index, Page page, IndexLayout *result);
extern BF_HIDDEN void ReadMeta(Relation index, IndexLayout *layout);

/* Bytes of the index as a bloom value (bloom_index_filter). */
extern BF_HIDDEN size_t IndexValueLength(const IndexLayout *layout);

/* Whether one of the first count segments may hold the hash. */
extern BF_HIDDEN bool SegmentsHold(Relation index, const IndexLayout *layout, uint32 count,
								   uint64 hash);

/* The key type of the index's column, refused like any filter key. */
extern BF_HIDDEN KeyType *IndexKeyType(Relation index, KeyType *key, MemoryContext mcxt);

/* The options, and an empty filter as they ask. */
extern BF_HIDDEN double OptionFpr(Relation index);
extern BF_HIDDEN uint32 OptionLogPages(Relation index);
extern BF_HIDDEN Bloom *EmptyIndexFilter(Relation heap, Relation index, KeyType *key,
										 BfHeader *header);

/* A new empty page of fork with contents bytes in use, locked. */
extern BF_HIDDEN Buffer NewIndexBuffer(Relation index, ForkNumber fork);
extern BF_HIDDEN void InitIndexPage(Page page, Size contents);

/* An unlogged index's init fork page to the WAL, which GenericXLog skips. */
extern BF_HIDDEN void LogInitForkPage(Buffer buffer, ForkNumber fork);

/* bloomindexlog.c */

/* The change log's pages, after those of a new index. */
extern BF_HIDDEN void WriteChangeLog(Relation index, uint32 npages);

/*
 * Appending an insert's entry: the head page locked with room for it (and
 * the layout's head updated), then the entry added to the page; LogAppend
 * says what to log: the bytes it changed.
 */
extern BF_HIDDEN Buffer LockLogHead(Relation index, IndexLayout *layout);
extern BF_HIDDEN void LogAppend(Page page, uint32 segment, uint64 hash, Size *entry_offset);

/* The position copies are made at: WAL inserted, or replayed on a standby. */
extern BF_HIDDEN XLogRecPtr CurrentPosition(void);

/*
 * The build copies of the index are of (invalid where there is no log), and
 * the entries that bring a copy of build from since to upto (a position
 * taken before), into hashes and segments (palloc'd, *count of them);
 * false if the log cannot tell (a copy must be made anew).
 */
extern BF_HIDDEN XLogRecPtr IndexBuild(Relation index);
extern BF_HIDDEN bool ChangesSince(Relation index, XLogRecPtr since, XLogRecPtr upto,
								   XLogRecPtr build, uint64 **hashes, uint32 **segments,
								   uint64 *count, uint32 *nsegments);

/* bloomindexbuild.c */

/* A new index from a bloom value: metapage, segments, log_pages of log. */
extern BF_HIDDEN void WriteIndex(Relation index, ForkNumber fork, Bloom *bloom,
								 uint32 log_pages);
extern BF_HIDDEN IndexBuildResult *bloomindex_build(Relation heap, Relation index,
													IndexInfo *indexInfo);
extern BF_HIDDEN void bloomindex_buildempty(Relation index);

/* bloomindexinsert.c */

/* Keys this backend has added to bloomfilter indexes (see ProbeView). */
extern BF_HIDDEN uint64 own_index_writes;

extern BF_HIDDEN bool bloomindex_insert(Relation index, Datum *values, bool *isnull,
										ItemPointer ht_ctid, Relation heap,
										IndexUniqueCheck checkUnique, bool indexUnchanged,
										IndexInfo *indexInfo);

/* bloomindexvacuum.c */

extern BF_HIDDEN IndexBulkDeleteResult *bloomindex_bulkdelete(IndexVacuumInfo *info,
															  IndexBulkDeleteResult *stats,
															  IndexBulkDeleteCallback callback,
															  void *callback_state);
extern BF_HIDDEN IndexBulkDeleteResult *bloomindex_vacuumcleanup(IndexVacuumInfo *info,
																 IndexBulkDeleteResult *stats);

/* What the last VACUUM recorded: whether there was one, and the dead keys. */
extern BF_HIDDEN void ReadDeadKeys(Relation index, bool *vacuumed, uint64 *dead);

/* bloomindexopen.c */

/*
 * A bloomfilter index opened for a caller who may read it (and may be a
 * partitioned one), or one leaf of it; and the leaves that answer.
 */
extern BF_HIDDEN Relation OpenIndexForReading(Oid indexoid);
extern BF_HIDDEN Relation OpenCheckedIndex(Oid indexoid);
extern BF_HIDDEN List *LeafIndexes(Relation index);

/* bloomindexcopy.c */

/* Transactions this backend has ended: a call site's checks last one. */
extern BF_HIDDEN uint64 ended_transactions;

/* The index as a bloom value; of a partitioned one, its partitions' union. */
extern BF_HIDDEN Bloom *IndexSnapshot(Relation index);
extern BF_HIDDEN Bloom *IndexUnionSnapshot(Relation index);

/*
 * The view the active snapshot gives (0: none), the backend's copy of an
 * index under it, and the copy made once the probes pay for it.
 */
extern BF_HIDDEN uint64 CurrentViewId(void);
extern BF_HIDDEN IndexCopy *CopyUnderView(Oid indexoid, uint64 view);
extern BF_HIDDEN void CopyIfWorthIt(IndexCopy *copy, Relation index,
									const IndexLayout *layout);

#endif							/* BF_BLOOMINDEX_H */
