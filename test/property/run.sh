#!/bin/bash
# test/property/run.sh: hostile-input (mutation) tests and no-false-negative
# property tests of the installed bloomfilter extension, at the SQL level,
# in a throwaway cluster of its own, of pg_config's PostgreSQL major.
#
#   1. mutants.sql + fuzz.sql: thousands of damaged filters through text
#      input, text COPY, the bytea cast and binary COPY; each must be an
#      error with the path's SQLSTATE or a filter that works.
#   2. values.sql, build.sql, parallel.sql, check.sql: every key type, every
#      path that carries a filter (aggregates serial and parallel, bloom_add,
#      bloom_add_all, unions, text/bytea/COPY round trips, pg_dump and
#      pg_restore); every added value must still be found.
#   3. scan_differential.sql: random queries with the batched filter scan
#      on and off must give the same rows, order and errors.  By hand, other
#      seeds and longer runs: SCAN_DIFF_SEED, SCAN_DIFF_QUERIES,
#      SCAN_DIFF_SECONDS (the time limit), SCAN_DIFF_FIRST (the first
#      query's number: SCAN_DIFF_FIRST=N SCAN_DIFF_QUERIES=1 makes query N
#      of the seed alone).
#   4. the server never crashed.
#
# Prints one "ok - ..."/"not ok - ..." line per check and, last,
# "N passed, N failed"; exits non-zero if anything failed.  Needs root (to
# run the cluster as the postgres user) and the extension installed.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
PORT=5521

# files/: where the server writes and reads COPY files.
start_cluster() {
	make_workdir property && cluster_dir "$WORK/files" || return 1
	# fsync off: a crash of this cluster loses nothing of value
	cluster_create "$WORK" "$PORT" -c fsync=off -c synchronous_commit=off -c full_page_writes=off
}

sql() {
	cluster_sql "$WORK" "$@"
}

# Counts the ok/not ok lines of a stage's output and shows them; a stage
# that stopped on an error is one more failure.
run_stage() {
	local name=$1 status
	shift
	sql "$@" >"$WORK/stage.out" 2>"$WORK/stage.err"
	status=$?
	count_checks "$WORK/stage.out"
	if [ "$status" -ne 0 ]; then
		not_ok "$name stopped with an error"
		sed 's/^/#   /' "$WORK/stage.err" | tail -n 20
		return 1
	fi
	grep -v '^NOTICE' "$WORK/stage.err" | sed 's/^/#   /'
	return 0
}

# Mutants whose header checksum was made right again, so that they get
# past the checksum to the checks behind it.
forge_checksums() {
	sql -d fuzz -c "COPY (SELECT id, encode(bytes, 'hex') FROM prop_mutant
		WHERE class IN ('field', 'header-flip', 'huge') AND substr(bytes, 1, 2) = 'BF'
		  AND note !~ 'checksum|byte (48|49|50|51) ') TO STDOUT" |
		"$WORK/rechecksum" |
		sql -d fuzz -c "COPY prop_forged_raw FROM STDIN"
}

mutation_tests() {
	sql -c "CREATE DATABASE fuzz" &&
		sql -d fuzz -c "CREATE EXTENSION bloomfilter" &&
		run_stage "building the mutants" -d fuzz -f "$HERE/mutants.sql" &&
		gcc -O2 -Wall -o "$WORK/rechecksum" "$HERE/rechecksum.c" &&
		forge_checksums ||
		{ not_ok "mutation tests could not be set up"; return; }
	run_stage "mutation tests" -d fuzz -v dir="$WORK/files" -f "$HERE/fuzz.sql"
	sql -c "DROP DATABASE fuzz"
	rm -rf "$WORK/files"/*
}

dump_and_restore() {
	"$PGBIN/pg_dump" -Fc -h "$WORK" -p "$PORT" -U postgres -d prop -f "$WORK/prop.dump" \
		2>"$WORK/dump.err" &&
		sql -c "CREATE DATABASE restored" &&
		"$PGBIN/pg_restore" --exit-on-error -h "$WORK" -p "$PORT" -U postgres -d restored \
			"$WORK/prop.dump" 2>>"$WORK/dump.err"
}

property_tests() {
	sql -c "CREATE DATABASE prop" &&
		sql -d prop -c "CREATE EXTENSION bloomfilter" &&
		run_stage "building the value tables" -d prop -f "$HERE/values.sql" &&
		run_stage "building the filters" -d prop -v dir="$WORK/files" -f "$HERE/build.sql" &&
		run_stage "building the parallel filters" -d prop -f "$HERE/parallel.sql" ||
		{ not_ok "property tests could not be set up"; return; }
	if dump_and_restore; then
		ok "pg_dump -Fc of the filters and pg_restore into a fresh database"
	else
		not_ok "pg_dump -Fc of the filters and pg_restore into a fresh database"
		sed 's/^/#   /' "$WORK/dump.err" | tail -n 20
	fi
	run_stage "checking the filters" -d prop -v restored=0 -f "$HERE/check.sql"
	if sql -l | grep -q '^restored|'; then
		run_stage "checking the restored filters" -d restored -v restored=1 -f "$HERE/check.sql"
	fi
}

# The batched scan's differential test, in a database of its own.  A
# WARNING (a buffer pin or another resource left behind) fails it too.
scan_differential() {
	local knobs=()
	[ -n "${SCAN_DIFF_SEED:-}" ] && knobs+=(-v seed="$SCAN_DIFF_SEED")
	[ -n "${SCAN_DIFF_FIRST:-}" ] && knobs+=(-v first="$SCAN_DIFF_FIRST")
	[ -n "${SCAN_DIFF_QUERIES:-}" ] && knobs+=(-v queries="$SCAN_DIFF_QUERIES")
	[ -n "${SCAN_DIFF_SECONDS:-}" ] && knobs+=(-v seconds="$SCAN_DIFF_SECONDS")
	sql -c "CREATE DATABASE scandiff" &&
		sql -d scandiff -c "CREATE EXTENSION bloomfilter" ||
		{ not_ok "the scan differential test could not be set up"; return; }
	run_stage "the scan differential test" -d scandiff "${knobs[@]}" -f "$HERE/scan_differential.sql" &&
		if grep -q 'WARNING' "$WORK/stage.err"; then
			not_ok "the scan differential test: the server warned"
		fi
	sql -c "DROP DATABASE scandiff"
}

# A crashed backend does not change the postmaster's start time or pid
# (it only reinitialises), so the log is the decisive check.
server_survived() {
	local start_time=$1 pid=$2
	if [ "$(sql -c 'SELECT pg_postmaster_start_time()')" = "$start_time" ]; then
		ok "postmaster start time unchanged"
	else
		not_ok "postmaster start time changed: the server restarted"
	fi
	if [ "$(head -n 1 "$WORK/data/postmaster.pid")" = "$pid" ]; then
		ok "postmaster pid unchanged"
	else
		not_ok "postmaster pid changed"
	fi
	if grep -qE 'terminated by signal|terminated by exception|PANIC|TRAP:' "$WORK/server.log"; then
		not_ok "a server process crashed"
		grep -E 'terminated by signal|terminated by exception|PANIC|TRAP:' "$WORK/server.log" |
			head -n 5 | sed 's/^/#   /'
	else
		ok "no server process was terminated by a signal"
	fi
}

main() {
	local start_time pid
	cleanup_on_exit
	# gcc and xxhash.h build rechecksum.c; ensure_postgresql also sets PGBIN.
	ensure_postgresql gcc libc6-dev libxxhash-dev ||
		{ not_ok "installing PostgreSQL, gcc and libxxhash-dev"; finish_timed; }
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	start_cluster || { not_ok "starting a throwaway cluster on port $PORT"; finish_timed; }
	start_time=$(sql -c 'SELECT pg_postmaster_start_time()')
	pid=$(head -n 1 "$WORK/data/postmaster.pid")

	mutation_tests
	property_tests
	scan_differential
	server_survived "$start_time" "$pid"
	finish_timed
}

main "$@"
