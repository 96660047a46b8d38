/*-------------------------------------------------------------------------
 *
 * largevalue.c
 *	  Memory for filters and buffers of megabytes: AdviseHugePages, which
 *	  asks for huge pages under a buffer; PallocLarge, an ordinary palloc
 *	  chunk so advised; and DetoastLarge, which reads a stored filter into
 *	  such a chunk.
 *
 * Why
 * ---
 * A large filter is probed at random blocks and its memory is touched all
 * over.  In 4kB pages, each probe may also miss the TLB, and the first
 * touch of each page of memory new to the process is a page fault.  A
 * parallel worker is always a new process: each one detoasts its own copy
 * of the filter, one fault per 4kB, and on a virtual machine a fault can
 * cost tens of microseconds (docs/performance.md).  Linux backs a region
 * with 2MB pages where asked to (madvise(MADV_HUGEPAGE); in the "madvise"
 * mode most distributions configure, nothing else is), one fault and one
 * TLB entry per 2MB instead of 512.  So a large allocation asks for the
 * huge pages wholly inside it.  The chunk is accounted for, freed and reset
 * like any other, and where the kernel declines (another platform, huge
 * pages off, none free) it is simply memory in small pages.  The advice
 * stays with the addresses: memory the allocator later hands out there may
 * come in huge pages too, which costs at most the 2MB pages that a large
 * filter's chunk once spanned.
 *
 * PostgreSQL's detoast allocates its own result, so DetoastLarge fetches a
 * stored filter's chunks into memory it allocated, as detoast would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "largevalue.h"

/* The smallest stored value DetoastLarge fetches itself. */
#define LARGE_VALUE_BYTES (2 * 1024 * 1024)

/*
 * Asks for the whole huge pages inside [start, start + size), untouched so
 * far.  A hint only, and a no-op where there are none.  Not for memory that
 * will be grown: madvise on part of a mapping splits it, and glibc's
 * realloc then can no longer move the mapping with mremap but copies it.
 */
void
AdviseHugePages(void *start, Size size)
{
#ifdef HUGE_PAGE_BYTES
	uintptr_t	first = TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) start);
	uintptr_t	end = TYPEALIGN_DOWN(HUGE_PAGE_BYTES, (uintptr_t) start + size);

	if (end > first)
		(void) madvise((void *) first, end - first, MADV_HUGEPAGE);
#else
	(void) start;
	(void) size;
#endif
}

/*
 * size bytes in the current context, not zeroed, in huge pages where they
 * span some (see the file's header).  The memory must not have been touched
 * for the advice to take effect, so it is given before the caller writes.
 */
void *
PallocLarge(Size size)
{
	void	   *chunk = palloc(size);

	AdviseHugePages(chunk, size);
	return chunk;
}

/*
 * The value, detoasted in the current context: a copy if copy is set or if
 * it had to be fetched, else the value itself where it is already whole.  A
 * value stored out of line and uncompressed, as large filters are, is
 * fetched into PallocLarge memory.
 */
struct varlena *
DetoastLarge(Datum value, bool copy)
{
	struct varlena *stored = (struct varlena *) DatumGetPointer(value);
	struct varatt_external pointer;
	struct varlena *result;
	Relation	toastrel;
	int32		size;

	if (!VARATT_IS_EXTERNAL_ONDISK(stored))
		return copy ? PG_DETOAST_DATUM_COPY(value) : PG_DETOAST_DATUM(value);
	VARATT_EXTERNAL_GET_POINTER(pointer, stored);
	size = VARATT_EXTERNAL_GET_EXTSIZE(pointer);
	/* too small for a huge page, or not the bytes themselves */
	if (VARATT_EXTERNAL_IS_COMPRESSED(pointer) || size < LARGE_VALUE_BYTES)
		return detoast_attr(stored);

	result = PallocLarge(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	toastrel = table_open(pointer.va_toastrelid, AccessShareLock);
	table_relation_fetch_toast_slice(toastrel, pointer.va_valueid, size, 0, size, result);
	table_close(toastrel, AccessShareLock);
	return result;
}
