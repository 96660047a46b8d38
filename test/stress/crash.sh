# crash.sh: part 2 of the stress tests, sourced by run.sh.
#
# The concurrency workload runs in the background while the server is
# killed with "pg_ctl stop -m immediate" (no shutdown checkpoint), then
# restarted through crash recovery.  The added_log rows that survive were
# committed together with their bloom_add, so each key must be in its filter
# and every inserted counter must match the log.  Three rounds on one
# cluster, each crashing on top of the last recovery.

CRASH_PORT=5512
CRASH_ROUNDS=3
CRASH_CLIENTS=8
# Bounds pgbench should the crash not end it; the crash comes much earlier.
CRASH_BENCH_SECONDS=30

recoveries_logged() {
	grep -c 'automatic recovery in progress' "$WORK/$1/server.log"
}

# True when pgbench was still running at the crash and the server came
# back through its <recoveries>th crash recovery.
crash_and_recover() {
	local name=$1 bench_pid=$2 recoveries=$3 alive=no
	kill -0 "$bench_pid" 2>/dev/null && alive=yes
	cluster_stop "$WORK/$name" immediate >/dev/null 2>&1
	wait_background "$bench_pid"
	[ $alive = yes ] && cluster_restart "$WORK/$name" >/dev/null 2>&1 &&
		int_eq "$(recoveries_logged "$name")" "$recoveries"
}

# pgbench ends when the crash drops its connections; until then no
# statement may have failed.
check_bench_until_crash() {
	local out=$1 round=$2 processed failures errors aborted
	processed=$(bench_number "$out" "number of transactions actually processed")
	failures=$(bench_number "$out" "number of failed transactions")
	errors=$(grep -c "^ERROR:" "$out")
	aborted=$(grep -c "client [0-9]* aborted" "$out")
	check "crash round $round: pgbench completed ${processed:-?} transactions, ${failures:-?} failed, $errors ERROR messages, then $aborted of $CRASH_CLIENTS clients lost their server" \
		all_of int_eq "${failures:-x}" 0 -- int_eq "$errors" 0 -- int_gt "${processed:-x}" 0
}

crash_round() {
	local name=$1 round=$2 before after bench_pid out seconds=$((1 + $2))
	before=$(db "$name" "SELECT count(*) FROM added_log")
	out=$WORK/crash-pgbench-$round.txt
	bench_background "$name" "$out" -c $CRASH_CLIENTS -j 2 -T $CRASH_BENCH_SECONDS \
		-f "$STRESS_DIR/write.pgbench@3" -f "$STRESS_DIR/probe.pgbench@1"
	bench_pid=$!
	# A different moment in each round.
	sleep $seconds
	check "crash round $round: server stopped with -m immediate after $seconds s of pgbench writes, came back through crash recovery" \
		crash_and_recover "$name" "$bench_pid" "$round"
	check_bench_until_crash "$out" "$round"
	after=$(db "$name" "SELECT count(*) FROM added_log")
	check "crash round $round: committed keys in added_log after recovery: $after, up from $before" \
		int_gt "$after" "$before"
	check_filters_against_log "$name" "crash round $round"
}

# A copy of an index takes the WAL position it is consistent with; were
# that position not on disk, a crash would end recovery before it and new
# records would take positions the copy was already told it had: a key
# committed after the restart would then come in no delta from there.  The
# copy is taken while another transaction's WAL sits in the WAL buffers
# (the WAL writer asleep), then the server is killed.
crash_copy_position() {
	local name=$1 copy=$WORK/crash-copy.csv writer answer i
	db "$name" "ALTER SYSTEM SET wal_writer_delay = '10s'" >/dev/null
	db "$name" "SELECT pg_reload_conf();
		CREATE TABLE copy_keys (k bigint);
		CREATE INDEX copy_keys_guard ON copy_keys USING bloomfilter (k) WITH (capacity = 100000);
		INSERT INTO copy_keys SELECT generate_series(1, 1000);
		CREATE TABLE copy_ballast (x int, y text);
		CHECKPOINT;" >/dev/null
	rm -f "$copy"
	"$PGBIN/psql" -X -q -h "$WORK/$name" -p "$(cluster_port "$WORK/$name")" -U postgres -d "$DBNAME" \
		>/dev/null 2>&1 <<-SQL &
		BEGIN;
		INSERT INTO copy_ballast SELECT g, repeat('x', 100) FROM generate_series(1, 5000) g;
		\copy (SELECT lsn, filter, timeline, build FROM bloom_index_snapshot('copy_keys_guard')) TO '$copy' CSV
		SELECT pg_sleep(60);
	SQL
	writer=$!
	track_background $writer
	for i in $(seq 1 300); do
		[ -s "$copy" ] && break
		sleep 0.1
	done
	cluster_stop "$WORK/$name" immediate >/dev/null 2>&1
	wait_background $writer
	cluster_restart "$WORK/$name" >/dev/null 2>&1
	db "$name" "ALTER SYSTEM RESET wal_writer_delay" >/dev/null
	answer=$(db "$name" "SELECT pg_reload_conf();
		INSERT INTO copy_keys VALUES (5000002);
		CREATE TABLE copy_copies (lsn pg_lsn, filter bloom, timeline bigint, build pg_lsn);
		COPY copy_copies FROM '$copy' CSV;
		SELECT c.reload OR bloom_apply_changes(s.filter, c.delta) @> 5000002::bigint
		FROM copy_copies s, bloom_index_changes('copy_keys_guard', s.lsn, s.timeline, s.build) c;" | tail -n 1)
	check "crash: a copy taken while WAL was in the buffers, synced after the crash, has a key committed after it (or reloads)" \
		test "$answer" = t || echo "# the sync answered: $answer"
}

run_crash() {
	local name=crash round started=$SECONDS
	echo "# part 2: crash recovery, $CRASH_ROUNDS rounds on port $CRASH_PORT"
	if ! prepare_cluster "$name" $CRASH_PORT "$STRESS_DIR/schema.sql"; then
		not_ok "crash: cluster with the extension and schema set up"
		return
	fi
	for round in $(seq 1 $CRASH_ROUNDS); do
		crash_round "$name" "$round"
	done
	crash_copy_position "$name"
	cluster_drop "$WORK/$name"
	echo "# part 2 took $((SECONDS - started)) s"
}
