/*-------------------------------------------------------------------------
 *
 * handover.h
 *	  The parallel leader's in-memory hand-over of its own partial
 *	  aggregate state (handover.c), behind the setting
 *	  bloomfilter.parallel_handover.
 *
 * The API is four calls: whether a state may be handed over (and to whom),
 * registering it for a message that only names it, claiming it back from
 * such a message, and defining the setting at module load.  The state is an
 * opaque pointer: this file knows plans, not aggregates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_HANDOVER_H
#define BF_HANDOVER_H

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/plannodes.h"

#include "bf_port.h"

/* Defines bloomfilter.parallel_handover; called by _PG_init. */
extern BF_HIDDEN void HandOverDefineSettings(void);

/* Whether the calling aggregate is ungrouped (no GROUP BY): one state. */
extern BF_HIDDEN bool UngroupedAggregate(FunctionCallInfo fcinfo);

/*
 * The aggregate that the state being serialised by this call may be handed
 * to within this process, or NULL (setting off, a worker, or any plan shape
 * but Partial Aggregate -> Gather -> Finalize Aggregate, all ungrouped).
 */
extern BF_HIDDEN const Plan *HandOverConsumer(FunctionCallInfo fcinfo);

/*
 * Registers state, which lives in context, for consumer, and returns the
 * message that names it: first_byte, then this process and a token.  The
 * registration ends when context is reset.
 */
extern BF_HIDDEN bytea *HandOver(void *state, MemoryContext context,
								 const Plan *consumer, uint8 first_byte);

/*
 * The state a message names (read past its first byte), if this process
 * registered it for the aggregate calling; an ERROR otherwise.
 */
extern BF_HIDDEN void *HandedOver(StringInfo buf, FunctionCallInfo fcinfo);

#endif							/* BF_HANDOVER_H */
