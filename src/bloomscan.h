/*-------------------------------------------------------------------------
 *
 * bloomscan.h
 *	  The batched filter scan (bloomscan.c): a custom scan that probes a
 *	  large bloom filter for many rows at once.  Its one entry point
 *	  defines its settings and installs it at module load.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_BLOOMSCAN_H
#define BF_BLOOMSCAN_H

#include "bf_port.h"

/*
 * Defines bloomfilter.batched_scan and bloomfilter.batched_scan_min_size,
 * registers the scan and installs its planner hook; called by _PG_init.
 */
extern BF_HIDDEN void BloomScanInit(void);

#endif							/* BF_BLOOMSCAN_H */
