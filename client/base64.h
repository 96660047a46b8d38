/*-------------------------------------------------------------------------
 *
 * base64.h
 *	  The base64 of the text form "bloom:..." (base64.c), accepting exactly
 *	  what the server's decoder accepts.  Internal to the client library.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFC_BASE64_H
#define BFC_BASE64_H

#include <stddef.h>
#include <stdint.h>

#include "bf_port.h"

/* Characters for len bytes, and room for the bytes of len characters. */
static inline size_t
bfc_base64_encoded_length(size_t len)
{
	return (len + 2) / 3 * 4;
}

static inline size_t
bfc_base64_decoded_room(size_t len)
{
	return len / 4 * 3 + 3;
}

/* Writes bfc_base64_encoded_length(len) characters, no NUL. */
extern BF_HIDDEN void bfc_base64_encode(const uint8_t *bytes, size_t len, char *out);

/*
 * Decodes into out (room for bfc_base64_decoded_room(len) bytes); the
 * number of bytes, or -1 where the server's decoder fails.
 */
extern BF_HIDDEN int64_t bfc_base64_decode(const char *text, size_t len, uint8_t *out);

#endif							/* BFC_BASE64_H */
