/*
 * rechecksum.c
 *	  Test helper of test/property/run.sh: gives mutated bloom values a
 *	  correct header checksum again.
 *
 * Almost every header mutation is caught by the header checksum alone, so
 * without this helper the mutation tests would only ever test the checksum.
 * Re-signing the mutated header lets the mutants reach every check that
 * comes after it (block count against length, empty filters with bits) and
 * turns some into filters the server must accept and handle.
 *
 * Reads lines "id<TAB>hex" (an integer and encode(value, 'hex')) and writes the same lines with bytes 48..51 replaced by the low 32
 * bits of XXH3-64 of bytes 0..47 (format version 1) or of bytes 0..47
 * followed by bytes 52..55 (later versions), little-endian, as bloom.h
 * specifies.
 * Values shorter than 52 bytes pass through unchanged.  Written against the
 * format description in bloom.h, independently of bloom.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define CHECKSUMMED_BYTES 48
#define CHECKSUM_OFFSET 48

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Re-signs the value whose hex digits are hex[0..len), in place. */
static int
resign_hex(char *hex, size_t len)
{
	uint8_t		header[CHECKSUM_OFFSET + 8];
	uint8_t		covered[CHECKSUMMED_BYTES + 4];
	uint32_t	checksum;
	static const char digits[] = "0123456789abcdef";

	if (len % 2 != 0)
		return -1;
	if (len / 2 < sizeof(header))
		return 0;
	for (size_t i = 0; i < sizeof(header); i++)
	{
		int			hi = hex_value(hex[2 * i]);
		int			lo = hex_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		header[i] = (uint8_t) (hi << 4 | lo);
	}
	memcpy(covered, header, CHECKSUMMED_BYTES);
	memcpy(covered + CHECKSUMMED_BYTES, header + CHECKSUM_OFFSET + 4, 4);
	checksum = (uint32_t) (header[2] == 1
						   ? XXH3_64bits(header, CHECKSUMMED_BYTES)
						   : XXH3_64bits(covered, sizeof(covered)));
	for (int i = 0; i < 4; i++)
	{
		uint8_t		byte = (uint8_t) (checksum >> (8 * i));

		hex[2 * (CHECKSUM_OFFSET + i)] = digits[byte >> 4];
		hex[2 * (CHECKSUM_OFFSET + i) + 1] = digits[byte & 15];
	}
	return 0;
}

int
main(void)
{
	char	   *line = NULL;
	size_t		capacity = 0;
	ssize_t		length;

	while ((length = getline(&line, &capacity, stdin)) > 0)
	{
		char	   *tab = strchr(line, '\t');
		size_t		hex_len;

		if (line[length - 1] == '\n')
			line[--length] = '\0';
		if (tab == NULL)
		{
			fprintf(stderr, "rechecksum: no tab in input line\n");
			return 1;
		}
		hex_len = (size_t) (line + length - (tab + 1));
		if (resign_hex(tab + 1, hex_len) != 0)
		{
			fprintf(stderr, "rechecksum: bad hex digits\n");
			return 1;
		}
		puts(line);
	}
	free(line);
	return ferror(stdout) ? 1 : 0;
}
