/*-------------------------------------------------------------------------
 *
 * largevalue.h
 *	  Memory for filters of megabytes (largevalue.c): allocations whose
 *	  whole huge pages are backed by huge pages, and the detoast of a
 *	  stored filter into such memory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_LARGEVALUE_H
#define BF_LARGEVALUE_H

#include "fmgr.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "bf_port.h"

/* The size of a transparent huge page on x86-64 and 4kB-page arm64. */
#ifdef MADV_HUGEPAGE
#define HUGE_PAGE_BYTES ((uintptr_t) 2 * 1024 * 1024)
#endif

extern BF_HIDDEN void AdviseHugePages(void *start, Size size);
extern BF_HIDDEN void *PallocLarge(Size size);
extern BF_HIDDEN struct varlena *DetoastLarge(Datum value, bool copy);

#endif							/* BF_LARGEVALUE_H */
