#!/bin/bash
# Runs the tests of bloomfilter and ends with "N passed, N failed":
#   0. the build itself: a compiler warning counts as a failure;
#   1. the wall around the pure core (src/core includes no PostgreSQL
#      header) and its unit tests (plain cc, no PostgreSQL);
#   2. the pg_regress suite (test/sql) and the isolation specs (test/specs),
#      in a throwaway cluster (pg_virtualenv);
#   3. the suites under test/*/run.sh, each of which starts its own servers
#      and ends with its own "N passed, N failed" line.
# Steps 2 and 3 run two at a time (TEST_JOBS, 1 for one by one), each
# shown as one block when it ends, with its time; stress and package run
# alone, package last.  The whole run's time is the line before the last.
#
#   bash scripts/test.sh            # everything (what CI runs); 8 minutes
#                                   # on 2 cores at load 2, 12 at load 4-5
#   bash scripts/test.sh --quick    # unit tests, pg_regress without its large
#                                   # cases, docs, property, stats, upgrade;
#                                   # about 1 minute on a built tree
#
# The full run adds pg_regress's multi-second cases (REGRESS_LARGE in the
# Makefile) and the fuzz, dump, sync, sqlsmith, client, node, live, fdw,
# stress and package suites.  The large cases run here only, once: the
# package build and autopkgtest run the Makefile's REGRESS, which leaves
# them out.
#
# Installs the missing Debian packages first (for pg_config's PostgreSQL
# major, or the distribution's default on a fresh machine), builds and
# installs the extension, and builds the client once for the suites that
# use it.  SUITES overrides the list of test/*/run.sh suites (started in
# its order); FUZZ_SECONDS (default 60) bounds the fuzzing run.
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

# make's jobs: one per core.  The suites side by side (below): TEST_JOBS,
# 2 unless told (what was measured: a 2-core machine).
make_jobs=$(nproc 2>/dev/null || echo 2)
jobs=${TEST_JOBS:-2}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=2

if ! ensure_build_tools; then
	echo "0 passed, 1 failed"
	exit 1
fi
# The compiler's messages are kept: a warning counts as a failure below.
build_log=$(mktemp)
if ! { make -s -j"$make_jobs" with_llvm=no >/dev/null && make -s with_llvm=no install >/dev/null; } 2>"$build_log"; then
	cat "$build_log"
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

# The suites start in this order, the longest first, so that the two
# running side by side end near each other; stress and package run alone
# (below), package last: it reinstalls the extension from a .deb and back.
if [ -n "$quick" ]; then
	SUITES=${SUITES-property docs upgrade stats}
	REGRESS_LARGE=""
else
	SUITES=${SUITES-fuzz dump sync sqlsmith client node property live docs fdw upgrade stats stress package}
	REGRESS_LARGE=large
fi

passed=0
failed=0
log=$(mktemp -d)

# Adds a suite's counts, taken from its own "N passed, N failed" line.
count_suite() {
	local name=$1 output=$2 elapsed=${3:-} line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$output" | tail -n 1)
	if [ -z "$line" ]; then
		echo "== $name: no result line; counted as one failure${elapsed:+ ($elapsed s)}"
		failed=$((failed + 1))
		return
	fi
	echo "== $name: $line${elapsed:+ ($elapsed s)}"
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

# One result line per core: bloom's, qfilter's, then the deltas'; the
# three built at once.
# three built at once (one by one, each with its own messages, should that
# fail).
units_built=""
make -s -j"$make_jobs" test/unit/test_bloom test/unit/test_qfilter test/unit/test_delta \
	>"$log/unit-build.txt" 2>&1 && units_built=yes
for core in bloom qfilter delta; do
	echo "== $core core unit tests"
	if [ -n "$units_built" ]; then
		cp "$log/unit-build.txt" "$log/unit-$core.txt"
	else
		make -s "test/unit/test_$core" >"$log/unit-$core.txt" 2>&1
	fi &&
		"test/unit/test_$core" >>"$log/unit-$core.txt" 2>&1
	grep -v '^ok' "$log/unit-$core.txt"
	count_suite "$core core unit tests" "$log/unit-$core.txt"
done

# The client library and the CLI, built once here for the suites that use
# them (client, live, sync, docs): their own `make client` finds it built, and two
# of them never build it at once.  A failure is theirs to report.
case " $SUITES " in
	*" client "* | *" live "* | *" sync "* | *" docs "*)
		make -s -j"$make_jobs" client >/dev/null 2>&1
		;;
esac

# ---------------------------------------------------------------------
# pg_regress and the suites, side by side
#
# Each suite starts its own servers on ports of its own (test/README.md),
# in its own temporary directory, so that most of them share nothing and
# run two at a time ($TEST_JOBS, default 2):
# most spend their time in one backend, in a client or in a sleep, which
# leaves the other core idle.  A suite's output goes to its own log and is
# shown when it ends, whole for a failed suite, as one block: its "not ok"
# lines, then its "== NAME: N passed, N failed (T s)" line.  Those that
# must run alone wait until nothing else runs and hold the machine: stress,
# whose checks measure throughput, and package, which moves the `make
# install` copy aside, installs the .deb and purges it (last, since it
# leaves the make-installed copy as it found it).

# pg_regress prints "test NAME ... ok" up to PostgreSQL 15 and TAP lines
# ("ok 1 - NAME", "not ok 2 - NAME") from 16 on.
report_regress() {
	local elapsed=$1 ok bad
	echo "== pg_regress${REGRESS_LARGE:+ (with $REGRESS_LARGE)}"
	grep -E '^(test| ?ok| ?not ok)|tests? (passed|failed)' "$log/pg_regress.txt"
	ok=$(grep -cE '^(test .* \.\.\. ok|ok [0-9]+ )' "$log/pg_regress.txt")
	bad=$(grep -cE '^(test .* \.\.\. FAILED|not ok [0-9]+ )' "$log/pg_regress.txt")
	if [ $((ok + bad)) -eq 0 ]; then
		cat "$log/pg_regress.txt"
		bad=1
	fi
	if [ "$bad" -gt 0 ]; then
		# the Makefile runs them in its build directory
		[ -f build/regression.diffs ] && head -n 200 build/regression.diffs
		[ -f build/output_iso/regression.diffs ] && head -n 200 build/output_iso/regression.diffs
	fi
	echo "$ok passed, $bad failed" >"$log/regress-count.txt"
	count_suite "pg_regress" "$log/regress-count.txt" "$elapsed"
}

# Shows a suite's result and counts its result line.
report_suite() {
	local name=$1 elapsed=$2
	echo "== $name"
	grep -E '^not ok' "$log/$name.txt"
	if grep -qE '^not ok' "$log/$name.txt" || ! tail -n 1 "$log/$name.txt" | grep -qE '^[0-9]+ passed, 0 failed$'; then
		tail -n 40 "$log/$name.txt"
	fi
	count_suite "$name" "$log/$name.txt" "$elapsed"
}

# The jobs running: NAME by pid, and when each started.
declare -A job_of job_started
running=0

# start_job NAME: pg_regress or test/NAME/run.sh (with the fuzzing budget
# for fuzz) in the background, its output in $log/NAME.txt, in a process
# group of its own (setsid), which stop_jobs can end whole.
start_job() {
	local name=$1 command
	case $name in
		pg_regress)
			command=(pg_virtualenv -v "$PG_MAJOR" -t make -s with_llvm=no installcheck
				REGRESS_LARGE="$REGRESS_LARGE")
			;;
		fuzz)
			command=(bash "test/$name/run.sh" "${FUZZ_SECONDS:-60}")
			;;
		*)
			command=(bash "test/$name/run.sh")
			;;
	esac
	setsid "${command[@]}" >"$log/$name.txt" 2>&1 </dev/null &
	job_of[$!]=$name
	job_started[$name]=$SECONDS
	running=$((running + 1))
}

# wait_job: waits for the next job to end, and reports it.
wait_job() {
	local pid name
	wait -n -p pid
	name=${job_of[$pid]}
	unset "job_of[$pid]"
	running=$((running - 1))
	if [ "$name" = pg_regress ]; then
		report_regress $((SECONDS - job_started[$name]))
	else
		report_suite "$name" $((SECONDS - job_started[$name]))
	fi
}

# An interrupt or a TERM ends the suites running, with what each runs
# (psql, pgbench: a suite's trap waits for its command), before this run
# exits; each suite cleans up after itself on TERM.  Background jobs
# ignore SIGINT, hence TERM.
stop_jobs() {
	local pid
	trap - INT TERM
	for pid in "${!job_of[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
	done
	wait
	rm -rf "$log"
	exit 130
}
trap stop_jobs INT TERM

for name in pg_regress $SUITES; do
	case " stress package " in
		*" $name "*)
			while [ "$running" -gt 0 ]; do wait_job; done
			start_job "$name"
			wait_job
			;;
		*)
			while [ "$running" -ge "$jobs" ]; do wait_job; done
			start_job "$name"
			;;
	esac
done
while [ "$running" -gt 0 ]; do wait_job; done

rm -rf "$log"
echo "== the whole run: $SECONDS s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
