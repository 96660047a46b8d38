/*-------------------------------------------------------------------------
 *
 * unit_check.h
 *	  What the core's unit tests (test_bloom.c, test_qfilter.c,
 *	  test_delta.c) share: one "ok"/"not ok" line per check, and the counts
 *	  their last line reports.  Each test is one program that includes this
 *	  once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int	passed;
static int	failed;

static void
check(int ok, const char *what)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
}

/* The last line, "N passed, N failed", and the program's exit status. */
static int
unit_result(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}

#endif							/* UNIT_CHECK_H */
