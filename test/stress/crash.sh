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
	cluster_drop "$WORK/$name"
	echo "# part 2 took $((SECONDS - started)) s"
}
