#!/bin/bash
# test/sqlsmith/run.sh: random queries (sqlsmith) against a database that
# holds every type, key kind and index of the installed extension; a
# backend crash or an internal error (XX000) raised by the extension's code
# is a failure.
#
# In a throwaway cluster of its own (port 5601, unix socket only), logging
# as JSON with each message's SQLSTATE and source file (log_error_verbosity
# verbose), as role smith, who is no superuser and owns schema.sql's
# objects:
#   1. the log check finds what it must: an internal error raised in the
#      extension's code (bloom_info's C function declared with a scalar
#      result) and a backend killed by SIGSEGV;
#   2. each case of regressions.sql, the queries earlier runs found, runs in
#      a transaction that is rolled back;
#   3. for each seed (below), sqlsmith --seed=SEED --max-queries=N in a
#      fresh copy of the database, with that seed's settings.
# After each, the server log since it began is read: a process that died
# of a signal (or exited with a code above 1), a PANIC, or an XX000 whose
# source file is one of src/*.c is a failure, printed with the seed and
# the query.  An XX000 from PostgreSQL's own files is shown as a "#" line,
# to be judged.  A seed whose sqlsmith does not finish in time (a query
# that ignores statement_timeout) fails too.
#
#   bash test/sqlsmith/run.sh                                  # 1-1.5 minutes
#   SQLSMITH_SEEDS="1 7" SQLSMITH_QUERIES=20000 bash test/sqlsmith/run.sh
#
# SQLSMITH_SEEDS picks the seeds (one not in the table below runs with the
# plain settings), SQLSMITH_QUERIES the number of queries for each.  Prints
# one "ok - ..." / "not ok - ..." line per check, "#" lines of context and,
# last, "N passed, N failed"; exits non-zero if a check failed.  Needs root
# and the extension installed (scripts/test.sh does both); installs
# sqlsmith and jq if they are missing.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5601
ROLE=smith
# sqlsmith's own statement_timeout is 1 s; a seed's whole run may take this
# long before it counts as hung.
SEED_TIMEOUT=${SQLSMITH_SEED_TIMEOUT:-150}

# The seeds: the number of queries, a name, and settings (ALTER DATABASE
# ... SET) so that random queries meet the extension's other paths: the
# batched scan prefetching every filter, parallel plans wherever a table is
# scanned (partial aggregates, serialize and combine, the leader's
# hand-over, the parallel batched scan), and with the batched scan and the
# hand-over off.  A parallel plan starts workers for each query, so those
# seeds run fewer.  parallel_setup_cost is not 0: at 0 sqlsmith's own
# catalog look-ups (one per function of the server) get parallel plans too
# and its start takes minutes.
PARALLEL="parallel_setup_cost=0.1 parallel_tuple_cost=0 min_parallel_table_scan_size=0
	max_parallel_workers_per_gather=2"
declare -A SEED_QUERIES=([1]=2500 [2]=1500 [3]=350 [4]=250 [5]=1500)
declare -A SEED_NAMES=(
	[1]="plain"
	[2]="every batched scan prefetching"
	[3]="parallel plans"
	[4]="parallel, no batched scan, no hand-over"
	[5]="no batched scan"
)
declare -A SEED_SETTINGS=(
	[1]=""
	[2]="bloomfilter.batched_scan_min_size=0"
	[3]="$PARALLEL bloomfilter.batched_scan_min_size=0"
	[4]="$PARALLEL bloomfilter.batched_scan=off bloomfilter.parallel_handover=off"
	[5]="bloomfilter.batched_scan=off"
)
SEEDS=${SQLSMITH_SEEDS:-1 2 3 4 5}

LOG_DIR=""
LOG_FILE=""

sql() {
	local db=$1
	shift
	cluster_sql "$WORK" -d "$db" "$@"
}

# as_smith DB PSQL_ARGUMENT...: psql as the role the random queries run as.
as_smith() {
	local db=$1
	shift
	PGOPTIONS="-c client_min_messages=warning" \
		"$PGBIN/psql" -X -q -At -h "$WORK" -p "$PORT" -U "$ROLE" -d "$db" "$@"
}

start() {
	make_workdir sqlsmith || return 1
	LOG_DIR=$WORK/log
	LOG_FILE=$LOG_DIR/postgresql.json
	# JSON log lines (one per message) with SQLSTATE and source file; the
	# whole query of a crashed backend in the postmaster's message.
	cluster_create "$WORK" "$PORT" -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
		-c autovacuum=off -c logging_collector=on -c log_destination=jsonlog \
		-c "log_directory='$LOG_DIR'" -c log_filename=postgresql.log \
		-c log_rotation_age=0 -c log_rotation_size=0 -c log_error_verbosity=verbose \
		-c track_activity_query_size=65536 -c restart_after_crash=on -c track_functions=all ||
		return 1
	wait_for_log || return 1
	# The module is loaded as each session starts, so that its planner
	# hooks are in place from sqlsmith's first query on.
	sql postgres -c "CREATE ROLE $ROLE LOGIN" \
		-c "ALTER ROLE $ROLE SET session_preload_libraries = 'bloomfilter'" \
		-c "CREATE DATABASE smith_template OWNER $ROLE" &&
		sql smith_template -c "CREATE EXTENSION bloomfilter" &&
		as_smith smith_template -v ON_ERROR_STOP=1 -c "SET client_min_messages = error" \
			-f "$HERE/schema.sql" &&
		sql smith_template -c "ANALYZE"
}

# -------------------------------------------------------------------------
# The server log

log_size() {
	stat -c %s "$LOG_FILE" 2>/dev/null || echo 0
}

# wait_for_log: waits until the server answers (it may be restarting after
# a crash) and a marker logged now is in the log file, so that everything
# logged before it is there too.
wait_for_log() {
	local marker="sqlsmith log marker $RANDOM$RANDOM"
	for _ in $(seq 1 120); do
		if sql postgres -c "DO \$\$BEGIN RAISE LOG '$marker'; END\$\$" >/dev/null 2>&1; then
			break
		fi
		sleep 0.5
	done
	for _ in $(seq 1 100); do
		grep -qF "$marker" "$LOG_FILE" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# the server did not answer, or its log did not show a marker, within a minute"
	return 1
}

# The extension's source files, as the log names them.
extension_files() {
	(cd "$REPO/src" && ls -- *.c core/*.c) | sed 's|.*/||' | jq -R . | jq -cs .
}

# findings OFFSET: the log's entries after byte OFFSET that are a failure,
# one JSON object per line: kind "crash" (a process died of a signal or
# exited with a code above 1, or a PANIC; query = what it was running) or
# "internal" (an XX000 from one of the extension's files), and "core" for
# an XX000 from any other file.
findings() {
	tail -c +"$(($1 + 1))" "$LOG_FILE" | jq -c --argjson ours "$EXTENSION_FILES" '
		def crash: (.backend_type == "postmaster"
				and (.message // "" | test("terminated by (signal|exception)|exited with exit code ([2-9]|[1-9][0-9]+)")))
			or .error_severity == "PANIC";
		select(crash or .state_code == "XX000")
		| {kind: (if crash then "crash" elif ((.file_name // "") as $f | $ours | index($f)) then "internal" else "core" end),
		   message, backend_type,
		   where: "\(.file_name // "?"):\(.file_line_num // "?") (\(.func_name // "?"))",
		   query: (if crash then (.detail // "" | sub("^Failed process was running: "; ""))
				   else (.statement // .internal_query // "") end)}' 2>/dev/null
}

# report FINDINGS_FILE WHAT: the findings as "#" lines, the query whole.
report() {
	local file=$1 what=$2
	jq -r --arg what "$what" '
		"# \(.kind)\(if .kind == "core" then " (an XX000 from PostgreSQL itself: judge it)" else "" end), \($what): \(.message)",
		"#   at \(.where), \(.backend_type // "?")",
		"#   query:",
		(.query | split("\n") | map("#     " + .) | .[])' "$file" | head -n 200
}

# judge STEP_OFFSET FINDINGS_FILE: 0 if no crash and no internal error of
# the extension since STEP_OFFSET (waiting for the log, and for the server
# should it be restarting).
judge() {
	wait_for_log >/dev/null
	findings "$1" >"$2"
	! grep -qE '"kind":"(crash|internal)"' "$2"
}

# -------------------------------------------------------------------------
# 1. The log check sees what it must

detector_check() {
	local offset pid found
	offset=$(log_size)
	sql postgres -c "CREATE DATABASE detector" &&
		sql detector -c "CREATE EXTENSION bloomfilter" \
			-c "CREATE FUNCTION scalar_info(bloom) RETURNS int AS 'bloomfilter', 'bloom_info' LANGUAGE C STRICT" ||
		return 1
	sql detector -c "SELECT scalar_info(bloom_empty(10))" >/dev/null 2>&1
	PGAPPNAME=sqlsmith_detector sql detector -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
	for _ in $(seq 1 50); do
		pid=$(sql postgres -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'sqlsmith_detector'")
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] && kill -SEGV "$pid"
	wait
	wait_for_log >/dev/null
	findings "$offset" >"$WORK/detector.json"
	sql postgres -c "DROP DATABASE detector" >/dev/null 2>&1
	found=$(jq -r 'select(.kind == "internal" and (.query | test("scalar_info"))
				or .kind == "crash" and (.message | test("signal 11")) and (.query | test("pg_sleep")))
			| .kind' "$WORK/detector.json" | sort -u | tr '\n' ' ')
	[ "$found" = "crash internal " ] && return 0
	echo "# found: ${found:-nothing}"
	sed 's/^/#   /' "$WORK/detector.json"
	return 1
}

# -------------------------------------------------------------------------
# 2. The cases earlier runs found

# regressions.sql holds cases separated by blank lines: "--" lines saying
# what it is and where it was found, then the statements.
replay_cases() {
	local case_file n=0 title offset
	mkdir -p "$WORK/cases" &&
		awk -v dir="$WORK/cases" 'BEGIN { RS = "" } {
			lines = split($0, line, "\n"); statements = 0
			for (i = 1; i <= lines; i++) if (line[i] !~ /^--/) statements++
			if (statements) { n++; printf "%s\n", $0 > (dir "/" sprintf("%03d", n) ".sql") } }' \
			"$HERE/regressions.sql" ||
		return 1
	sql postgres -c "CREATE DATABASE smith_replay TEMPLATE smith_template OWNER $ROLE" || return 1
	for case_file in "$WORK"/cases/*.sql; do
		[ -f "$case_file" ] || continue
		n=$((n + 1))
		title=$(grep -m 1 '^--' "$case_file" | sed 's/^-- *//')
		offset=$(log_size)
		{
			echo "SET statement_timeout = '20s';"
			echo "BEGIN;"
			cat "$case_file"
			echo ";"
			echo "ROLLBACK;"
		} | as_smith smith_replay >/dev/null 2>&1
		if judge "$offset" "$WORK/case.json"; then
			ok "regression case $n ($title): no crash, no internal error"
		else
			not_ok "regression case $n ($title): no crash, no internal error"
			grep -v '^--' "$case_file" | sed 's/^/#   /'
		fi
		report "$WORK/case.json" "regression case $n"
	done
	sql postgres -c "DROP DATABASE smith_replay" >/dev/null 2>&1
	[ "$n" -gt 0 ] || not_ok "regressions.sql holds cases"
}

# -------------------------------------------------------------------------
# 3. Random queries, seed by seed

# seed_database SEED DB: a fresh copy of the template with SEED's settings.
seed_database() {
	local seed=$1 db=$2 setting
	sql postgres -c "CREATE DATABASE $db TEMPLATE smith_template OWNER $ROLE" || return 1
	for setting in ${SEED_SETTINGS[$seed]:-}; do
		sql postgres -c "ALTER DATABASE $db SET ${setting%%=*} = '${setting#*=}'" || return 1
	done
}

# The extension's functions (those SQL can call: none of internal) that
# statistics saw called in DB (track_functions counts calls made through
# expressions and operators; not the type's I/O functions, nor the
# aggregates' support functions), or, with --all, all of them.
called_functions() {
	local db=$1 called="AND EXISTS (SELECT 1 FROM pg_stat_user_functions f WHERE f.funcid = p.oid AND f.calls > 0)"
	[ "${2:-}" = --all ] && { db=smith_template; called=""; }
	sql "$db" -c "SELECT p.oid::regprocedure FROM pg_proc p
		JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
			AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomfilter'
		WHERE p.prokind = 'f' AND NOT 'internal'::regtype = ANY (p.proargtypes::oid[] || p.prorettype)
		  $called"
}

# lost_connection DUMP ERR: the queries of DUMP during which sqlsmith lost
# its connection (its progress line on ERR has a "C" for each; the first
# of a row is the one running when the backend died, those after it found
# the server restarting), as "#" lines: the crashed backend's own last
# statement may be sqlsmith's ROLLBACK.
lost_connection() {
	local dump=$1 err=$2 numbers
	numbers=$(grep -E '^[.etSC]+$' "$err" | tr -d '\n' |
		awk '{ for (i = 1; i <= length($0); i++)
			if (substr($0, i, 1) == "C" && substr($0, i - 1, 1) != "C") print i }' | head -n 5)
	[ -n "$numbers" ] || return 0
	awk -v numbers=" $(echo "$numbers" | paste -sd ' ') " 'BEGIN { RS = ";\n" }
		index(numbers, " " NR " ") {
			print "# sqlsmith lost its connection during its query " NR ":"
			gsub(/\n/, "\n#     "); print "#     " $0 ";" }' "$dump" | head -n 200
}

# What sqlsmith's queries reached: how many name one of the extension's
# functions or types, or read a view that calls them.
extension_queries() {
	awk -v views="$VIEWS" 'BEGIN { RS = ";\n"; pattern = "public\\.(bloom|qfilter|" views ")" }
		$0 ~ pattern { n++ } END { print n + 0 }' "$1"
}

run_seed() {
	local seed=$1 db=smith_s$1 name=${SEED_NAMES[$1]:-plain} offset started status
	local queries_count=${SQLSMITH_QUERIES:-${SEED_QUERIES[$1]:-3000}}
	local dump=$WORK/queries.$seed.sql err=$WORK/sqlsmith.$seed.err
	if ! seed_database "$seed" "$db"; then
		not_ok "seed $seed ($name): its database"
		return
	fi
	offset=$(log_size)
	started=$SECONDS
	timeout -k 10 "$SEED_TIMEOUT" sqlsmith --target="host=$WORK port=$PORT dbname=$db user=$ROLE" \
		--seed="$seed" --max-queries="$queries_count" --exclude-catalog --dump-all-queries --verbose \
		>"$dump" 2>"$err"
	status=$?
	echo "# seed $seed ($name): $queries_count queries in $((SECONDS - started)) s," \
		"$(extension_queries "$dump") of them on the extension's functions, types or views;" \
		"$(sed -n 's/^error rate: /error rate /p' "$err" | tail -n 1)"
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		not_ok "seed $seed ($name): sqlsmith finished within $SEED_TIMEOUT s"
		echo "# still running:"
		sql postgres -c "SELECT pid, state, now() - query_start, query FROM pg_stat_activity
			WHERE usename = '$ROLE'" | sed 's/^/#   /'
	elif [ "$status" -ne 0 ]; then
		not_ok "seed $seed ($name): sqlsmith ran (exit $status)"
		tail -n 20 "$err" | sed 's/^/#   /'
	fi
	if judge "$offset" "$WORK/seed.json"; then
		ok "seed $seed ($name): no crash, no internal error in $queries_count random queries"
	else
		not_ok "seed $seed ($name): no crash, no internal error in $queries_count random queries"
		echo "# reproduce: SQLSMITH_SEEDS=$seed SQLSMITH_QUERIES=$queries_count bash test/sqlsmith/run.sh;" \
			"keep the query as a case of test/sqlsmith/regressions.sql"
	fi
	report "$WORK/seed.json" "seed $seed"
	lost_connection "$dump" "$err"
	called_functions "$db" >>"$WORK/called.txt"
	sql postgres -c "DROP DATABASE $db" >/dev/null 2>&1
}

# coverage: how many of the extension's functions the seeds called, and
# which they did not.
coverage() {
	local never
	[ -f "$WORK/called.txt" ] || return 0
	called_functions smith_template --all | sort -u >"$WORK/all.txt"
	sort -u "$WORK/called.txt" >"$WORK/called.sorted"
	never=$(comm -23 "$WORK/all.txt" "$WORK/called.sorted" | paste -sd ' ')
	echo "# the seeds called $(comm -12 "$WORK/all.txt" "$WORK/called.sorted" | wc -l) of the" \
		"extension's $(wc -l <"$WORK/all.txt") functions (counted by track_functions: not the" \
		"I/O and aggregate support functions)${never:+; not called: $never}"
}

main() {
	cleanup_on_exit
	if ! ensure_postgresql sqlsmith jq; then
		not_ok "PostgreSQL, sqlsmith and jq are installed"
		finish
	fi
	if ! extension_installed; then
		not_ok "the extension is installed for PostgreSQL $PG_MAJOR"
		finish
	fi
	echo "# PostgreSQL $PG_MAJOR, port $PORT; seeds $SEEDS"
	if ! check "throwaway cluster with the schema of every type and index (schema.sql)" start; then
		show_logs "$WORK/server.log"
		finish_timed
	fi
	EXTENSION_FILES=$(extension_files)
	VIEWS=$(sql smith_template -c "SELECT string_agg(viewname, '|') FROM pg_views WHERE schemaname = 'public'")
	check "the log check finds an internal error of the extension's code and a backend killed by signal 11" \
		detector_check
	replay_cases
	for seed in $SEEDS; do
		run_seed "$seed"
	done
	coverage
	finish_timed
}

main "$@"
