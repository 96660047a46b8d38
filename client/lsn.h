/*-------------------------------------------------------------------------
 *
 * lsn.h
 *	  WAL positions as the server spells them (pg_lsn's text, "16/B374D848")
 *	  and as numbers, for the follower (follower.c), the followed file's
 *	  change log (filelog.c) and the CLI (lsn.c).  Internal to the client
 *	  library.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFC_LSN_H
#define BFC_LSN_H

#include <stdbool.h>
#include <stdint.h>

#include "bf_port.h"

/* Room for the longest position's text and its NUL ("FFFFFFFF/FFFFFFFF"). */
#define BFC_LSN_TEXT_SIZE 24

/* pg_lsn_in's syntax: two groups of 1 to 8 hex digits around a slash. */
extern BF_HIDDEN bool bfc_lsn_parse(const char *text, uint64_t *lsn);

/* pg_lsn_out's spelling into out (BFC_LSN_TEXT_SIZE bytes). */
extern BF_HIDDEN void bfc_lsn_format(uint64_t lsn, char *out);

#endif							/* BFC_LSN_H */
