#!/bin/bash
# Runs the tests of bloomfilter and ends with "N passed, N failed":
#   0. the build itself: a compiler warning counts as a failure;
#   1. the wall around the pure core (src/core includes no PostgreSQL
#      header) and its unit tests (plain cc, no PostgreSQL);
#   2. the pg_regress suite (test/sql) and the isolation specs (test/specs),
#      in a throwaway cluster (pg_virtualenv);
#   3. the suites under test/*/run.sh, each of which starts its own servers
#      and ends with its own "N passed, N failed" line.
#
#   bash scripts/test.sh            # everything (what CI runs); 5-10 minutes
#   bash scripts/test.sh --quick    # unit tests, pg_regress without its large
#                                   # cases, docs, property, stats; under 4 minutes
#
# The full run adds pg_regress's multi-second cases (REGRESS_LARGE in the
# Makefile) and the fuzz, fdw, stress, dump, client, live, node, sqlsmith and package suites.  The large cases
# run here only, once: the package build and autopkgtest run the Makefile's
# REGRESS, which leaves them out.
#
# Installs the missing Debian packages first (for pg_config's PostgreSQL
# major, or the distribution's default on a fresh machine), builds and
# installs the extension.  SUITES overrides the list of test/*/run.sh
# suites; FUZZ_SECONDS (default 60) bounds the fuzzing run.
set -u
cd "$(dirname "$0")/.."
. test/lib.sh

case ${1:-} in
	--quick)
		quick=yes
		;;
	'')
		quick=""
		;;
	*)
		echo "usage: bash scripts/test.sh [--quick]" >&2
		exit 2
		;;
esac

if ! ensure_build_tools; then
	echo "0 passed, 1 failed"
	exit 1
fi
# The compiler's messages are kept: a warning counts as a failure below.
build_log=$(mktemp)
if ! { make -s with_llvm=no >/dev/null && make -s with_llvm=no install >/dev/null; } 2>"$build_log"; then
	cat "$build_log"
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

# The package suite reinstalls the extension from a .deb and back: keep it last.
if [ -n "$quick" ]; then
	SUITES=${SUITES-docs property stats upgrade}
	REGRESS_LARGE=""
else
	SUITES=${SUITES-fuzz property stats docs upgrade fdw stress sync dump client live node sqlsmith package}
	REGRESS_LARGE=large
fi

passed=0
failed=0
log=$(mktemp -d)

# Adds a suite's counts, taken from its own "N passed, N failed" line.
count_suite() {
	local name=$1 output=$2 line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$output" | tail -n 1)
	if [ -z "$line" ]; then
		echo "== $name: no result line; counted as one failure"
		failed=$((failed + 1))
		return
	fi
	echo "== $name: $line"
	passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
	failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}

# A build warning on one PostgreSQL major is often an error on the next.
echo "== build warnings"
cat "$build_log"
if grep -q 'warning:' "$build_log"; then
	echo "0 passed, 1 failed" >"$log/build-count.txt"
else
	echo "1 passed, 0 failed" >"$log/build-count.txt"
fi
rm -f "$build_log"
count_suite "build warnings" "$log/build-count.txt"

# The core builds with plain cc because it includes no PostgreSQL header:
# one check, failed by any file of src/core that names one or that does not
# compile with src/core as its only include directory (no PostgreSQL's).
echo "== src/core includes no PostgreSQL header"
grep -rln 'postgres.h\|postgres_fe.h\|fmgr.h' src/core >"$log/core-wall.txt"
for source in src/core/*.c; do
	cc -fsyntax-only -Wall -Werror -I src/core "$source" >>"$log/core-wall.txt" 2>&1 ||
		echo "$source does not compile with -I src/core alone" >>"$log/core-wall.txt"
done
if [ -s "$log/core-wall.txt" ]; then
	cat "$log/core-wall.txt"
	echo "0 passed, 1 failed" >"$log/core-wall-count.txt"
else
	echo "1 passed, 0 failed" >"$log/core-wall-count.txt"
fi
count_suite "src/core includes no PostgreSQL header" "$log/core-wall-count.txt"

# One result line per core: bloom's, qfilter's, then the deltas'.
for core in bloom qfilter delta; do
	echo "== $core core unit tests"
	make -s "test/unit/test_$core" >"$log/unit-$core.txt" 2>&1 &&
		"test/unit/test_$core" >>"$log/unit-$core.txt" 2>&1
	grep -v '^ok' "$log/unit-$core.txt"
	count_suite "$core core unit tests" "$log/unit-$core.txt"
done

# pg_regress prints "test NAME ... ok" up to PostgreSQL 15 and TAP lines
# ("ok 1 - NAME", "not ok 2 - NAME") from 16 on.
echo "== pg_regress${REGRESS_LARGE:+ (with $REGRESS_LARGE)}"
pg_virtualenv -v "$PG_MAJOR" -t make -s with_llvm=no installcheck REGRESS_LARGE="$REGRESS_LARGE" \
	>"$log/regress.txt" 2>&1
grep -E '^(test| ?ok| ?not ok)|tests? (passed|failed)' "$log/regress.txt"
ok=$(grep -cE '^(test .* \.\.\. ok|ok [0-9]+ )' "$log/regress.txt")
bad=$(grep -cE '^(test .* \.\.\. FAILED|not ok [0-9]+ )' "$log/regress.txt")
if [ $((ok + bad)) -eq 0 ]; then
	cat "$log/regress.txt"
	bad=1
fi
if [ "$bad" -gt 0 ]; then
	# the Makefile runs them in its build directory
	[ -f build/regression.diffs ] && head -n 200 build/regression.diffs
	[ -f build/output_iso/regression.diffs ] && head -n 200 build/output_iso/regression.diffs
fi
echo "$ok passed, $bad failed" >"$log/regress-count.txt"
count_suite "pg_regress" "$log/regress-count.txt"

# Runs test/NAME/run.sh and counts its result line.
run_suite() {
	local name=$1
	shift
	echo "== $name"
	bash "test/$name/run.sh" "$@" >"$log/$name.txt" 2>&1
	grep -E '^not ok' "$log/$name.txt"
	if grep -qE '^not ok' "$log/$name.txt" || ! tail -n 1 "$log/$name.txt" | grep -qE '^[0-9]+ passed, 0 failed$'; then
		tail -n 40 "$log/$name.txt"
	fi
	count_suite "$name" "$log/$name.txt"
}

for suite in $SUITES; do
	if [ "$suite" = fuzz ]; then
		run_suite fuzz "${FUZZ_SECONDS:-60}"
	else
		run_suite "$suite"
	fi
done

rm -rf "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
