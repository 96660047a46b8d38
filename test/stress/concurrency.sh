# concurrency.sh: part 1 of the stress tests, sourced by run.sh.
#
# Eight pgbench clients share four filter rows; each transaction is either
# a writer (bloom_add and its log row, one transaction) or a reader (a probe,
# then a re-probe of the keys last committed to the row).  Afterwards the log
# must match the filters exactly: no false negatives, exact inserted
# counters, values that survive validation.  Also defines the log checks the
# crash part repeats after each recovery.

CONCURRENCY_PORT=5511
CONCURRENCY_CLIENTS=8
# Per client, about half of them writes: some 1000 adds, each writing a new
# 25 kB filter, in a few seconds.
CONCURRENCY_TRANSACTIONS=250

# verify.sql's "name|value" lines, by name.
declare -A VERIFY

read_verify() {
	local name=$1 key value
	VERIFY=()
	while IFS='|' read -r key value; do
		[ -n "$key" ] && VERIFY[$key]=$value
	done < <(db_file "$name" "$STRESS_DIR/verify.sql")
}

# The log against the filters; <label> starts each check line.
check_filters_against_log() {
	local name=$1 label=$2 logged rows
	read_verify "$name"
	logged=${VERIFY[logged]:-?}
	rows=${VERIFY[filters]:-?}
	check "$label: ${VERIFY[missing]:-?} of $logged committed keys missing from their filter (false negatives)" \
		int_eq "${VERIFY[missing]:-x}" 0
	check "$label: bloom_info(f).inserted differs from the logged adds in ${VERIFY[miscounted]:-?} of $rows filters" \
		int_eq "${VERIFY[miscounted]:-x}" 0
	check "$label: ${VERIFY[invalid]:-?} of $rows filters differ from their f::bytea::bloom or f::text::bloom" \
		all_of int_eq "${VERIFY[invalid]:-x}" 0 -- int_eq "$rows" 4
	check "$label: readers found ${VERIFY[probe_misses]:-?} committed keys missing while writers ran" \
		int_eq "${VERIFY[probe_misses]:-x}" 0
}

# Whether two whole numbers differ by at most one.
within_one() {
	[[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && [ $(($1 - $2)) -le 1 ] && [ $(($2 - $1)) -le 1 ]
}

run_concurrency() {
	local name=concurrency out status processed failures writes expected
	local started=$SECONDS
	echo "# part 1: concurrency, $CONCURRENCY_CLIENTS clients on port $CONCURRENCY_PORT"
	if ! prepare_cluster "$name" $CONCURRENCY_PORT "$STRESS_DIR/schema.sql"; then
		not_ok "concurrency: cluster with the extension and schema set up"
		return
	fi

	out=$WORK/concurrency-pgbench.txt
	expected=$((CONCURRENCY_CLIENTS * CONCURRENCY_TRANSACTIONS))
	bench "$name" -c $CONCURRENCY_CLIENTS -j 2 -t $CONCURRENCY_TRANSACTIONS \
		-f "$STRESS_DIR/write.pgbench" -f "$STRESS_DIR/probe.pgbench" >"$out" 2>&1
	status=$?
	processed=$(bench_number "$out" "number of transactions actually processed")
	failures=$(bench_number "$out" "number of failed transactions")
	writes=$(bench_script_transactions "$out" write.pgbench)
	check "concurrency: pgbench -c $CONCURRENCY_CLIENTS ran ${processed:-?} of $expected transactions, exit status $status" \
		all_of int_eq "$status" 0 -- int_eq "${processed:-x}" "$expected"
	check "concurrency: pgbench reported ${failures:-?} failed transactions" \
		int_eq "${failures:-x}" 0
	[ "$status" -eq 0 ] || grep -E 'abort|ERROR' "$out" | head -n 5 | sed 's/^/# /'
	sed -n 's/^tps = \([0-9]*\).*/# pgbench: \1 transactions per second/p' "$out"

	read_verify "$name"
	# pgbench's per-script count is a statistic, seen once off by one from
	# the log on a fresh machine (-j 2); the exact invariant, inserted count
	# = log rows per filter, is checked against the filters just below.
	check "concurrency: the ${writes:-?} writer transactions pgbench counted left ${VERIFY[logged]:-?} log rows (within one)" \
		within_one "${writes:-x}" "${VERIFY[logged]:-y}"
	check_filters_against_log "$name" "concurrency"
	cluster_drop "$WORK/$name"
	echo "# part 1 took $((SECONDS - started)) s"
}
