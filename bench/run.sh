#!/bin/bash
# bench/run.sh: measures bloomfilter's performance contract (DESIGN.md) and
# prints one table with a PASS/FAIL per target.
#
#   bash bench/run.sh [N]        N = rows probed and aggregated (default 3000000)
#
# Run as root on Debian after the extension is built and installed.  It
# installs the Debian packages it needs (test/lib.sh), starts a throwaway
# cluster of pg_config's PostgreSQL major (unix socket only, port 5541) under
# a temporary directory, loads the data (bench/setup.sql) and removes
# everything when it ends, also on failure.
#
# Every target is a ratio against a baseline measured in the same run, so a
# slow or busy machine shifts both sides alike.  The queries of a comparison
# run round-robin (A B A B ...) after one untimed warm-up pass, and each side
# is the median of its runs, timed by psql's \timing as a client sees it.
# The ratio a target applies to is the median of the per-pass ratios (see
# paired_ratio); the ratio of the two medians is printed next to it.
#
# Environment (optional): BENCH_RUNS timed runs per query (default 9, at
# least 5), BENCH_POINT_RUNS runs of the single-row probes (default 200),
# BENCH_LARGE_KEYS keys of the large filter (default min(3000000, N)),
# BENCH_CPU the CPU that runs the single-process comparisons (default 0;
# "none" leaves them to the scheduler), BENCH_SECTIONS the measurements to
# run, by function name (default all: "probe_small probe_large aggregation
# batch_adds point_probe accuracy"), for a short run on a shared machine,
# BENCH_RETAIN_MEMORY=yes to start the server with freed memory kept (below).
#
# Why pin: on a shared virtual machine the CPUs need not be alike (on the
# one this was written on, one ran the same scan 1.6 times slower than the
# other, depending on the hour), and a backend the scheduler moves between
# them mixes two machines into one median.  Pinned, both sides of a ratio
# run on the same CPU.  The parallel comparison is not pinned: it needs
# every CPU.
# The PL/pgSQL loop of item 5 takes seconds per run and always gets 5 runs.
#
# Why keep freed memory (BENCH_RETAIN_MEMORY=yes): glibc gives a freed
# chunk larger than its mmap threshold (at most 32 MB) back to the kernel,
# and a virtual machine whose host takes back the memory its guest frees
# makes that expensive twice: the next allocation faults its pages in again
# from the host, and the host may have reclaimed other memory of the guest
# meanwhile, shared_buffers included, which the next statement faults in
# too.  On the machine this was written on, sum(id) over 3M rows took
# 105 ms, and 185-325 ms right after a statement that allocated and freed
# 60 MB; so a statement's time depended on the one run before it.  With
# the thresholds raised (GLIBC_TUNABLES), a backend reuses the memory it
# freed and a comparison measures the statements' own work.  Off by
# default: the stock allocator is what servers run with.
set -u

N=${1:-3000000}
RUNS=${BENCH_RUNS:-9}
# A script that sources this one may accept fewer (bench/scan.sh).
MIN_RUNS=${MIN_RUNS:-5}
ALL_SECTIONS="probe_small probe_large aggregation batch_adds point_probe accuracy"
SECTIONS=${BENCH_SECTIONS:-$ALL_SECTIONS}
CPU=${BENCH_CPU:-0}
PIN=yes
POINT_RUNS=${BENCH_POINT_RUNS:-200}
RETAIN_MEMORY=${BENCH_RETAIN_MEMORY:-no}
RETAIN_TUNABLES="GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912"
PORT=5541
SMALL_KEYS=300000
# The large filter has one key per user, 3,000,000 in the contract.  It is
# capped at N so that the users table never outgrows the requests it serves
# (the hash join's build/probe balance stays that of the full run) and a
# small N stays quick; below N = 3000000 the output says it was scaled.
LARGE_KEYS=${BENCH_LARGE_KEYS:-$((N < 3000000 ? N : 3000000))}
ADD_KEYS=20000
# A buffer the L1 cache holds: inserting into it costs instructions only.
CACHED_INSERT_BYTES=32000
# A forced parallel plan with 2 workers (also bench/ab.sh).
# Room for the self-sizing bloom_agg's hashes: 8 bytes per distinct value.
AGG_WORK_MEM="SET work_mem = '$((N * 8 / 1048576 + 16))MB';"
FORCE_PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# The package installer and the PostgreSQL version (ensure_postgresql sets PGBIN).
. "$BENCH_DIR/../test/lib.sh"
WORK=
PASSED=0
FAILED=0

# ---------------------------------------------------------------------------
# Setup and teardown
# ---------------------------------------------------------------------------

die() {
	echo "run.sh: $*" >&2
	exit 1
}

check_arguments() {
	[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 10000 ] || die "N must be an integer >= 10000, got '$N'"
	[[ $RUNS =~ ^[0-9]+$ ]] && [ "$RUNS" -ge "$MIN_RUNS" ] ||
		die "BENCH_RUNS must be >= $MIN_RUNS, got '$RUNS'"
	[ "$CPU" = none ] || { [[ $CPU =~ ^[0-9]+$ ]] && [ "$CPU" -lt "$(nproc)" ]; } ||
		die "BENCH_CPU must be a CPU number below $(nproc) or none, got '$CPU'"
	[[ $POINT_RUNS =~ ^[0-9]+$ ]] && [ "$POINT_RUNS" -ge 5 ] || die "BENCH_POINT_RUNS must be >= 5"
	[[ $LARGE_KEYS =~ ^[0-9]+$ ]] && [ "$LARGE_KEYS" -ge 1000 ] || die "BENCH_LARGE_KEYS must be >= 1000"
	[ "$RETAIN_MEMORY" = yes ] || [ "$RETAIN_MEMORY" = no ] ||
		die "BENCH_RETAIN_MEMORY must be yes or no, got '$RETAIN_MEMORY'"
	local section
	for section in $SECTIONS; do
		[[ " $ALL_SECTIONS " == *" $section "* ]] ||
			die "BENCH_SECTIONS: no measurement '$section' (there are: $ALL_SECTIONS)"
	done
	[ "$(id -u)" = 0 ] || die "run as root (it installs packages and runs the cluster as postgres)"
}

# Installs the Debian packages that are missing (a fresh machine has none of
# hll, and possibly no compiler for the latency program) and sets PGBIN.
ensure_prerequisites() {
	set_pg_major || die "no PostgreSQL version to benchmark"
	ensure_postgresql "postgresql-$PG_MAJOR-hll" gcc libc6-dev ||
		die "could not install postgresql-$PG_MAJOR-hll, gcc and libc6-dev"
	extension_installed ||
		die "the bloomfilter extension is not installed: run make && make install first"
}

# Stops the cluster and removes its directory; the EXIT trap, so it also runs
# after an error or an interrupt.
cleanup() {
	[ -n "$WORK" ] || return
	if [ -f "$WORK/data/postmaster.pid" ]; then
		(cd "$WORK" && su postgres -c "$PGBIN/pg_ctl -D '$WORK/data' -m immediate -w stop" >/dev/null 2>&1)
	fi
	rm -rf "$WORK"
}

# A cluster of our own: trust authentication over a private unix socket (no
# TCP, so nothing else on the machine can clash with it or reach it).
start_cluster() {
	WORK=$(mktemp -d /tmp/bloombench.XXXXXX) || die "mktemp failed"
	chmod 755 "$WORK"
	# The postgres user owns what the server writes: data, socket and log.
	mkdir "$WORK/data" "$WORK/sock" "$WORK/log" &&
		chown postgres: "$WORK/data" "$WORK/sock" "$WORK/log" &&
		chmod 700 "$WORK/data" || die "cannot create directories in $WORK"
	cd "$WORK" || die "cannot enter $WORK"
	su postgres -c "$PGBIN/initdb -D '$WORK/data' -U postgres -A trust -E UTF8 --locale=C --no-sync" \
		>"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log"; die "initdb failed"; }
	# shared_buffers holds every table, so the scans measure CPU and caches,
	# not the disk.  Durability is off because the cluster is thrown away;
	# autovacuum is off so that no background work lands in a timing.
	cat >>"$WORK/data/postgresql.conf" <<-EOF
		port = $PORT
		listen_addresses = ''
		unix_socket_directories = '$WORK/sock'
		shared_buffers = 1GB
		max_parallel_workers_per_gather = 0
		jit = off
		autovacuum = off
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		max_wal_size = 8GB
		checkpoint_timeout = 1h
	EOF
	su postgres -c "$([ "$RETAIN_MEMORY" = yes ] && echo "$RETAIN_TUNABLES ")$PGBIN/pg_ctl -D '$WORK/data' -l '$WORK/log/server.log' -w start" >/dev/null 2>&1 ||
		{ tail -n 20 "$WORK/log/server.log"; die "the cluster did not start"; }
	PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK/sock" -p "$PORT" -U postgres)
	"${PSQL[@]}" -d postgres -c "CREATE DATABASE bench" || die "CREATE DATABASE failed"
	PSQL+=(-d bench)
}

# The latency program, compiled for this machine.
build_chase() {
	gcc -O2 -o "$WORK/chase" "$BENCH_DIR/chase.c" || die "could not compile chase.c"
}

load_data() {
	"${PSQL[@]}" -v n="$N" -v small_keys="$SMALL_KEYS" -v large_keys="$LARGE_KEYS" \
		-f "$BENCH_DIR/setup.sql" >/dev/null || die "loading the data failed"
}

# One value from a query, unaligned.
sql_value() {
	"${PSQL[@]}" -A -t -c "$1" || die "query failed: $1"
}

# ---------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------

# QUERY[label] is timed.  SETTINGS[label] runs untimed before each run of it,
# after RESET ALL, so a comparison's queries never see each other's settings.
# PREPARE[label] runs once per session before the first run (fetching the
# text of a filter into a psql variable, for instance).  COMMAND[label] is a
# shell command that prints a measurement itself (the latency program); it
# takes its turn among the queries, so that it sees the same machine.
declare -A QUERY SETTINGS PREPARE COMMAND

define_queries() {
	local probe="SELECT count(*) FROM requests r WHERE"
	QUERY[base]="$probe r.user_id <> 0"
	QUERY[probe_small]="$probe bloom_contains((SELECT f FROM filters WHERE name = 'small'), r.user_id)"
	QUERY[probe_small_literal]="$probe bloom_contains(:'small_text'::bloom, r.user_id)"
	PREPARE[probe_small_literal]="SELECT f::text AS small_text FROM filters WHERE name = 'small' \\gset"
	QUERY[join_small]="$probe EXISTS (SELECT 1 FROM users_small u WHERE u.id = r.user_id)"
	SETTINGS[join_small]="SET work_mem = '4MB';"
	QUERY[probe_large]="$probe bloom_contains((SELECT f FROM filters WHERE name = 'large'), r.user_id)"
	QUERY[join_large]="$probe EXISTS (SELECT 1 FROM users_large u WHERE u.id = r.user_id)"
	SETTINGS[join_large]="SET work_mem = '4MB';"

	# Results are reduced to their size: sending a multi-megabyte filter to
	# the client as text would time the output function, not the aggregate.
	QUERY[agg_sum]="SELECT sum(id) FROM t"
	QUERY[agg_bloom]="SELECT pg_column_size(bloom_agg(id)) FROM t"
	QUERY[agg_bloom_fixed]="SELECT pg_column_size(bloom_agg(id, $N, 0.01)) FROM t"
	QUERY[agg_hll]="SELECT pg_column_size(hll_add_agg(hll_hash_bigint(id))) FROM t"
	QUERY[agg_array]="SELECT pg_column_size(array_agg(id)) FROM t"
	# The self-sizing form keeps its hashes within work_mem and spills the
	# rest; the contract is for hashes that fit (8 bytes per distinct value),
	# so the aggregates get room for them.  A spilling run is measured apart.
	SETTINGS[agg_bloom]=$AGG_WORK_MEM
	SETTINGS[agg_bloom_fixed]=$AGG_WORK_MEM
	QUERY[agg_spill]=${QUERY[agg_bloom]}
	SETTINGS[agg_spill]="SET work_mem = '4MB';"
	QUERY[agg_serial]=${QUERY[agg_bloom]}
	SETTINGS[agg_serial]=$AGG_WORK_MEM
	QUERY[agg_parallel]=${QUERY[agg_bloom]}
	SETTINGS[agg_parallel]="$FORCE_PARALLEL $AGG_WORK_MEM"
	QUERY[agg_serial_fixed]=${QUERY[agg_bloom_fixed]}
	SETTINGS[agg_serial_fixed]=$AGG_WORK_MEM
	QUERY[agg_parallel_fixed]=${QUERY[agg_bloom_fixed]}
	SETTINGS[agg_parallel_fixed]=${SETTINGS[agg_parallel]}
	QUERY[sum_serial]=${QUERY[agg_sum]}
	QUERY[sum_parallel]=${QUERY[agg_sum]}
	SETTINGS[sum_parallel]=$FORCE_PARALLEL

	local keys="ARRAY(SELECT g::bigint FROM generate_series(1, $ADD_KEYS) g)"
	QUERY[add_all_big]="SELECT pg_column_size(bloom_add_all(f, $keys)) FROM filters WHERE name = 'add_big'"
	QUERY[add_all_small]="SELECT pg_column_size(bloom_add_all(f, $keys)) FROM filters WHERE name = 'add_small'"
	QUERY[add_loop_big]="SELECT pg_column_size(add_loop(f, $ADD_KEYS)) FROM filters WHERE name = 'add_big'"
	# The same rows and keys with nothing added: the stored value read whole
	# (the cast to bytea is binary, get_byte detoasts), the array built.
	QUERY[fetch_big]="SELECT get_byte(f::bytea, 0), array_length($keys, 1) FROM filters WHERE name = 'add_big'"
	QUERY[fetch_small]="SELECT get_byte(f::bytea, 0), array_length($keys, 1) FROM filters WHERE name = 'add_small'"

	QUERY[point_probe]="SELECT bloom_contains(f, 42) FROM filters WHERE name = 'big'"
	# get_byte needs the whole value: a full fetch.  length(f::bytea) is not
	# one: octet_length reads the size from the TOAST pointer.
	QUERY[point_fetch]="SELECT get_byte(f::bytea, 0) FROM filters WHERE name = 'big'"
	QUERY[point_length]="SELECT length(f::bytea) FROM filters WHERE name = 'big'"
	# Input of the 12 MB value (bytea::bloom: the whole value checked and
	# copied once) against its fetch and one copy, which is what an input
	# that checked the header alone cost.
	QUERY[input_big]="SELECT get_byte(f::bytea::bloom::bytea, 0) FROM filters WHERE name = 'big'"
	QUERY[copy_big]="SELECT get_byte(f::bytea || '\\x'::bytea, 0) FROM filters WHERE name = 'big'"
}

# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------

# The labels after the pass number, in reverse order on odd passes.  In a
# fixed order, two copies of one build compared by bench/ab.sh differed by
# 4% on the fixed form, in favour of the copy that ran second: a query that
# always follows another inherits the state that one leaves (freed memory,
# warm pages).  Reversing every other pass spreads that over both sides.
pass_order() {
	local pass=$1
	shift
	if ((pass % 2 == 0)); then
		echo "$@"
	else
		printf '%s\n' "$@" | tac | tr '\n' ' '
	fi
}

# Runs the queries named in the arguments round-robin in one session: one
# untimed warm-up pass, then $runs timed passes (pass_order).  Appends
# "label ms" lines to $WORK/times.  Alternating spreads the drifts of a
# shared machine over all sides of a comparison instead of letting them fall
# on one.
measure() {
	local runs=$1 label pass
	shift
	{
		echo '\o /dev/null'
		if [ "$PIN" = yes ] && [ "$CPU" != none ]; then
			echo "\\copy (SELECT pg_backend_pid()) TO '$WORK/backend.pid'"
			echo "\\! taskset -p -c $CPU \$(cat '$WORK/backend.pid') >/dev/null"
		fi
		echo '\timing off'
		for label in "$@"; do
			echo "${PREPARE[$label]:-}"
		done
		for ((pass = 0; pass <= runs; pass++)); do
			for label in $(pass_order "$pass" "$@"); do
				echo "\\echo @ $pass $label"
				if [ -n "${COMMAND[$label]:-}" ]; then
					echo "\\! ${COMMAND[$label]} 2>/dev/null | sed 's/^/Value: /'"
					continue
				fi
				echo "RESET ALL; ${SETTINGS[$label]:-}"
				echo '\timing on'
				echo "${QUERY[$label]};"
				echo '\timing off'
			done
		done
	} >"$WORK/measure.sql"
	"${PSQL[@]}" -f "$WORK/measure.sql" >"$WORK/measure.out" || die "measuring $* failed"
	MEASURE_CALL=$((MEASURE_CALL + 1))
	# Pass 0 is the warm-up.  Each time is tagged with the call, so that a
	# label timed in two calls (base) is summarised per call.
	awk -v call="$MEASURE_CALL" '$1 == "@" { pass = $2; label = $3; next }
		 ($1 == "Time:" || $1 == "Value:") && pass > 0 { print label, $2, call }' \
		"$WORK/measure.out" >>"$WORK/times"
}
MEASURE_CALL=0

# A label's timings from the latest measure call that timed it, in order.
latest_times() {
	awk -v label="$1" '$1 == label { if ($3 != call) { call = $3; n = 0 } v[++n] = $2 }
		END { for (i = 1; i <= n; i++) print v[i] }' "$WORK/times"
}

# The median of a list of numbers on stdin, or nan for none.
median_of_input() {
	sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) print "nan";
			  else if (NR % 2) print v[(NR + 1) / 2];
			  else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The median of a label's timings (its latest measure call), in ms.
median() {
	latest_times "$1" | median_of_input
}

# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

# Arithmetic and comparisons on decimals, which bash does not have.
calc() {
	awk "BEGIN { printf \"%.6g\", $1 }"
}

# A number for the table: a few significant digits, no exponent.
fmt() {
	awk -v x="$1" 'BEGIN {
		if (x == "nan" || x == "") { print "-"; exit }
		a = x < 0 ? -x : x
		if (a >= 100) printf "%.0f", x
		else if (a >= 10) printf "%.1f", x
		else if (a >= 0.1) printf "%.2f", x
		else printf "%.4f", x }'
}

# Sets VERDICT to PASS or FAIL of value against a target such as "<= 1.3",
# ">= 4" or "0.9-1.1" (a range), or to "-" for no target, and counts it.  A
# variable rather than output: a $(...) subshell would lose the counts.
verdict() {
	local value=$1 target=$2
	if [ -z "$target" ]; then
		VERDICT=-
		return
	fi
	VERDICT=$(awk -v v="$value" -v t="$target" 'BEGIN {
		if (v == "nan") ok = 0
		else if (t ~ /^<= /) ok = v + 0 <= substr(t, 4) + 0
		else if (t ~ /^>= /) ok = v + 0 >= substr(t, 4) + 0
		else { split(t, r, "-"); ok = v + 0 >= r[1] + 0 && v + 0 <= r[2] + 0 }
		print ok ? "PASS" : "FAIL" }')
	if [ "$VERDICT" = PASS ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
}

# a / b, or nan when either is missing or b is zero.
ratio_of() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "nan" || b == "nan" || a == "" || b == "" || b + 0 == 0) print "nan"
		else printf "%.6g", a / b }'
}

# The median, over the passes of their latest measure call, of label $1's
# time divided by label $2's in the same pass.  measure runs a pass's
# queries back to back, so a slow spell of the machine, which lasts seconds,
# mostly slows both sides of a pass alike; the ratio of two medians instead
# compares whichever of the machine's speeds each median happened to fall on.
paired_ratio() {
	paste -d' ' <(latest_times "$1") <(latest_times "$2") |
		awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | median_of_input
}

ROW_FORMAT='%-2s %-40s %10s  %-34s %10s  %7s  %7s  %-11s %s\n'

table_header() {
	# shellcheck disable=SC2059
	printf "$ROW_FORMAT" '#' 'measurement' 'median' 'baseline' 'median' 'ratio' 'medians' 'target' 'result'
	printf '%s\n' "$(printf '%.0s-' {1..137})"
}

# One row whose target applies to the ratio value / baseline, computed
# from the two medians (a derived value has no passes to pair).
ratio_row() {
	local num=$1 what=$2 value=$3 unit=$4 base_what=$5 base=$6 target=$7 ratio
	ratio=$(ratio_of "$value" "$base")
	verdict "$ratio" "$target"
	# shellcheck disable=SC2059
	printf "$ROW_FORMAT" "$num" "$what" "$(fmt "$value") $unit" "$base_what" "$(fmt "$base") $unit" \
		"$(fmt "$ratio")" "$(fmt "$ratio")" "$target" "$VERDICT"
}

# One row of two timed labels: the target applies to the median of their
# per-pass ratios (paired_ratio); the ratio of their medians is shown next
# to it.
paired_row() {
	local num=$1 what=$2 label=$3 unit=$4 base_what=$5 base_label=$6 target=$7
	local value base ratio
	value=$(median "$label") base=$(median "$base_label")
	ratio=$(paired_ratio "$label" "$base_label")
	verdict "$ratio" "$target"
	# shellcheck disable=SC2059
	printf "$ROW_FORMAT" "$num" "$what" "$(fmt "$value") $unit" "$base_what" "$(fmt "$base") $unit" \
		"$(fmt "$ratio")" "$(fmt "$(ratio_of "$value" "$base")")" "$target" "$VERDICT"
}

# One row whose target applies to the value itself; the baseline, if any,
# is shown for scale.
value_row() {
	local num=$1 what=$2 value=$3 unit=$4 base_what=$5 base=$6 target=$7 ratio=- base_shown=-
	if [ "$base" != - ]; then
		ratio=$(fmt "$(ratio_of "$value" "$base")")
		base_shown="$(fmt "$base") $unit"
	fi
	verdict "$value" "$target"
	# shellcheck disable=SC2059
	printf "$ROW_FORMAT" "$num" "$what" "$(fmt "$value") $unit" "$base_what" "$base_shown" "$ratio" \
		"$ratio" "${target:+$target $unit}" "$VERDICT"
}

# ---------------------------------------------------------------------------
# The measurements, numbered as in the contract
# ---------------------------------------------------------------------------

# 1 and 3 (cache-resident filter): probe scan against the trivial scan, the
# literal filter and the exact hash semi-join.
probe_small() {
	measure "$RUNS" base probe_small probe_small_literal join_small
	paired_row 1 "probe scan, 300k-key filter (table)" probe_small ms "scan with user_id <> 0" base "<= 1.3"
	paired_row 1 "probe scan, same filter as a literal" probe_small_literal ms "filter from the table" probe_small "0.9-1.1"
	paired_row 3 "hash semi-join, 300k users" join_small ms "probe scan, 300k-key filter" probe_small ">= 6"
}

# 2 and 3 (filter larger than the caches): the extra time per probe against
# the latency of one dependent random load, and the hash semi-join.
probe_large() {
	local base bloom bytes row_bytes floor extra
	bytes=$(sql_value "SELECT bytes FROM bloom_info((SELECT f FROM filters WHERE name = 'large'))")
	# The scan streams its table through the caches between probes, which
	# evicts the filter; the latency program reads as much per step.
	row_bytes=$(sql_value "SELECT pg_relation_size('requests') / $N")
	COMMAND[floor_large]="$([ "$CPU" = none ] || echo "taskset -c $CPU ")'$WORK/chase' $bytes $row_bytes"
	measure "$RUNS" base probe_large join_large floor_large
	base=$(median base) bloom=$(median probe_large)
	floor=$(median floor_large)
	extra=$(calc "($bloom - $base) * 1e6 / $N")
	paired_row 2 "probe scan, $(keys_label "$LARGE_KEYS")-key filter" probe_large ms "scan with user_id <> 0" base ""
	ratio_row 2 "extra per probe, $(size_label "$bytes") filter" "$extra" ns "dependent random load" "$floor" "<= 1.5"
	paired_row 3 "hash semi-join, $(keys_label "$LARGE_KEYS") users" join_large ms "probe scan, $(keys_label "$LARGE_KEYS")-key filter" probe_large ">= 6"
	NOTES+=("2: per-probe extra = (probe scan - <> 0 scan) / N = $extra ns; one dependent random load over $bytes bytes while streaming $row_bytes bytes of a large buffer, as the scan reads per row (bench/chase.c, run in turn with the scans) = $floor ns")
}

# 4: aggregation against sum, hll and array_agg, and the parallel speedup.
aggregation() {
	local bytes extra budget
	# What one insert costs this machine, memory and instructions: the fixed
	# form's extra time per row against it.
	bytes=$(sql_value "SELECT bytes FROM bloom_info(bloom_empty($N, 0.01))")
	COMMAND[floor_insert]="$([ "$CPU" = none ] || echo "taskset -c $CPU ")'$WORK/chase' --insert $bytes"
	COMMAND[floor_insert_cached]="$([ "$CPU" = none ] || echo "taskset -c $CPU ")'$WORK/chase' --insert $CACHED_INSERT_BYTES"
	measure "$RUNS" agg_sum agg_bloom agg_bloom_fixed agg_hll agg_array agg_spill floor_insert \
		floor_insert_cached
	paired_row 4 "bloom_agg(id)" agg_bloom ms "sum(id)" agg_sum "<= 1.3"
	paired_row 4 "bloom_agg(id) spilling at work_mem 4MB" agg_spill ms "in work_mem" agg_bloom "<= 1.3"
	paired_row 4 "bloom_agg(id, N, 0.01)" agg_bloom_fixed ms "sum(id)" agg_sum "<= 1.15"
	extra=$(calc "($(median agg_bloom_fixed) - $(median agg_sum)) * 1e6 / $N")
	ratio_row 4 "extra per row, bloom_agg(id, N, 0.01)" "$extra" ns "one insert, k = 7 ($(size_label "$bytes"))" \
		"$(median floor_insert)" ""
	NOTES+=("4: the fixed form's extra per row = (bloom_agg(id, N, 0.01) - sum(id)) / N = $extra ns; one insert of 7 bits into a random block of a $bytes-byte buffer, prefetched as bf_add_hashes does (bench/chase.c --insert, run in turn with the queries) = $(median floor_insert) ns")
	budget=$(calc "0.15 * $(median agg_sum) * 1e6 / $N")
	ratio_row 4 "one insert, k = 7, $(size_label "$CACHED_INSERT_BYTES") buffer" "$(median floor_insert_cached)" ns \
		"what <= 1.15 leaves per row" "$budget" ""
	NOTES+=("4: an insert into a $CACHED_INSERT_BYTES-byte buffer, which the L1 cache holds, costs its instructions alone (chase --insert $CACHED_INSERT_BYTES) = $(median floor_insert_cached) ns; the fixed form's target, 1.15 x sum(id), leaves 0.15 x sum(id) / N = $budget ns per row for hashing, buffering and inserting")
	paired_row 4 "bloom_agg(id)" agg_bloom ms "hll_add_agg(hll_hash_bigint(id))" agg_hll ""
	paired_row 4 "bloom_agg(id, N, 0.01)" agg_bloom_fixed ms "hll_add_agg(hll_hash_bigint(id))" agg_hll ""
	paired_row 4 "bloom_agg(id)" agg_bloom ms "array_agg(id)" agg_array ""
	paired_row 4 "bloom_agg(id, N, 0.01)" agg_bloom_fixed ms "array_agg(id)" agg_array ""

	# Both forms: the self-sizing one's leader receives every distinct hash
	# and must count and insert them alone, the fixed one's receives bits.
	PIN=no
	measure "$RUNS" agg_serial agg_parallel agg_serial_fixed agg_parallel_fixed sum_serial sum_parallel
	PIN=yes
	paired_row 4 "bloom_agg(id) serial" agg_serial ms "same, parallel (2 workers)" agg_parallel ">= 1.3"
	paired_row 4 "bloom_agg(id, N, 0.01) serial" agg_serial_fixed ms "same, parallel (2 workers)" agg_parallel_fixed ">= 1.3"
	paired_row 4 "sum(id) serial" sum_serial ms "same, parallel (2 workers)" sum_parallel ""
	NOTES+=("4: sum(id) serial / parallel is what a parallel plan gains on this machine for an aggregate with no work of its own to share out; the two rows above are bound by it")
	check_parallel "bloom_agg(id)" agg_parallel
	check_parallel "bloom_agg(id, $N, 0.01)" agg_parallel_fixed
}

# The parallel row only means something if the workers ran and the result is
# the serial one; both go into the notes.
check_parallel() {
	local call=$1 label=$2 launched same
	launched=$("${PSQL[@]}" -A -t <<-EOF | grep -o 'Workers Launched: [0-9]*' | head -n 1
		${SETTINGS[$label]}
		EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${QUERY[$label]};
	EOF
	)
	same=$("${PSQL[@]}" -A -t <<-EOF | tail -n 1
		SELECT md5($call::bytea) AS serial FROM t \gset
		${SETTINGS[$label]}
		SELECT md5($call::bytea) = :'serial' FROM t;
	EOF
	)
	NOTES+=("4: parallel $call: ${launched:-no workers launched}; filter identical to the serial one: ${same:-?}")
}

# 5: a batch of keys into a large filter against the same into a tiny one,
# and against a PL/pgSQL loop of bloom_add.  The loop copies the whole filter
# at least once per key and takes seconds per run, so it gets the minimum of
# 5 runs, in a pair of its own (add_all_vs_loop: add_all_big relabelled).
batch_adds() {
	local loop big_again
	measure "$RUNS" add_all_big add_all_small fetch_big fetch_small
	paired_row 5 "bloom_add_all, 20k keys, 2.4 MB filter" add_all_big ms "same into a 1 KB filter" add_all_small "<= 1.2"
	paired_row 5 "fetch only, 2.4 MB filter" fetch_big ms "same, 1 KB filter" fetch_small ""
	NOTES+=("5: fetch only = the same statements with nothing added: the stored filter read whole (get_byte(f::bytea, 0)) and the keys' array built; its ratio is the part of bloom_add_all's that reading the larger value costs")
	QUERY[add_all_vs_loop]=${QUERY[add_all_big]}
	measure 5 add_all_vs_loop add_loop_big
	big_again=$(median add_all_vs_loop) loop=$(median add_loop_big)
	ratio_row 5 "PL/pgSQL loop of bloom_add, 2.4 MB" "$loop" ms "bloom_add_all, 2.4 MB filter" "$big_again" ""
}

# 6: one probe of a stored 12 MB filter, per statement; the full fetch of
# the value and the bare row lookup show what it is made of.  The fetch runs
# apart: copying 12 MB flushes the CPU caches, and alternated with the
# others it slowed whichever statement came next (0.1 ms became 0.2-0.3).
point_probe() {
	local probe fetch length
	measure "$POINT_RUNS" point_probe point_length
	measure "$RUNS" point_fetch
	probe=$(median point_probe) fetch=$(median point_fetch) length=$(median point_length)
	value_row 6 "point probe of a 12 MB stored filter" "$probe" ms "full fetch: get_byte(f::bytea, 0)" "$fetch" "<= 0.2"
	value_row 6 "row lookup, no fetch: length(f::bytea)" "$length" ms "" - ""
	NOTES+=("6: length(f::bytea) reads the size from the TOAST pointer and fetches nothing, so it is the floor of any statement on this row; get_byte(f::bytea, 0) fetches the whole value")
	measure "$RUNS" input_big copy_big
	paired_row 6 "input of the 12 MB filter: bytea::bloom" input_big ms "its fetch and one copy" copy_big "<= 1.3"
	NOTES+=("6: bytea::bloom checks the whole value (header, segments, body sum) in the pass that copies it; the baseline fetches the value and copies it once (f::bytea || ''), the work of an input that checked the header alone")
}

# 7: space and accuracy of the large filter.
accuracy() {
	local bits rate
	bits=$(sql_value "SELECT bits::float8 / inserted FROM bloom_info((SELECT f FROM filters WHERE name = 'large'))")
	rate=$(sql_value "SELECT avg(bloom_contains((SELECT f FROM filters WHERE name = 'large'), k)::int)::float8
		FROM generate_series(1000000000000::bigint, 1000000000000 + $N - 1) k")
	value_row 7 "bits per key, $(keys_label "$LARGE_KEYS")-key filter, fpr 0.01" "$bits" "" "" - "<= 10.0"
	value_row 7 "false-positive rate, N absent keys" "$rate" "" "" - "<= 0.0105"
}

keys_label() {
	awk -v k="$1" 'BEGIN { if (k >= 1e6) printf "%gM", k / 1e6; else if (k >= 1e3) printf "%gk", k / 1e3; else print k }'
}

size_label() {
	awk -v b="$1" 'BEGIN { if (b >= 1e6) printf "%.1f MB", b / 1e6; else printf "%.0f KB", b / 1e3 }'
}

# Plans of the comparisons whose plan the planner chooses, so a reader can
# see which hash join was beaten.
note_plans() {
	local label plan
	for label in join_small join_large; do
		plan=$("${PSQL[@]}" -A -t -c "${SETTINGS[$label]} EXPLAIN (COSTS OFF) ${QUERY[$label]}" |
			grep -E 'Join|Aggregate|Scan' | sed 's/^ *-> *//; s/^ *//' | paste -sd '/' -)
		NOTES+=("3: plan of $label: $plan")
	done
}

# The installed library's time and checksum, to tell builds apart.
library_id() {
	local library
	library="$("$PGBIN/pg_config" --pkglibdir)/bloomfilter.so"
	echo "$library installed $(date -u -r "$library" '+%Y-%m-%d %H:%M:%S UTC'), md5 $(md5sum <"$library" | cut -c1-12)"
}

print_machine() {
	echo "machine: $(nproc) cores,$(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2)," \
		"$(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo) memory;" \
		"load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "postgresql: $(sql_value 'SELECT version()')"
	# Which build was measured: the installed library changes as work goes on,
	# and a run that straddles a reinstall measured two builds.
	local library_now
	library_now=$(library_id)
	echo "extension: bloomfilter $(sql_value "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'"), $library_now"
	[ "$library_now" = "$LIBRARY_AT_START" ] ||
		echo "WARNING: bloomfilter.so was reinstalled during the run (at start: $LIBRARY_AT_START); rerun"
	echo "N = $N rows probed and aggregated; $RUNS timed runs per query (median), $POINT_RUNS for the point probes"
	if [ "$CPU" = none ]; then
		echo "no comparison pinned to a CPU (BENCH_CPU=none)"
	else
		echo "single-process comparisons pinned to CPU $CPU (BENCH_CPU); the parallel one unpinned"
	fi
	if [ "$RETAIN_MEMORY" = yes ]; then
		echo "server started with freed memory kept: $RETAIN_TUNABLES (BENCH_RETAIN_MEMORY)"
	else
		echo "server started with the stock allocator (BENCH_RETAIN_MEMORY=yes keeps freed memory)"
	fi
	echo "filters: small $(keys_label $SMALL_KEYS) keys, large $(keys_label "$LARGE_KEYS") keys$(
		[ "$LARGE_KEYS" -lt 3000000 ] && echo " (scaled down from the contract's 3M, which gives the 3.6 MB filter: the default is min(3000000, N))")"
	# The settings that were overridden belong to the command that reproduces the run.
	# (a value with spaces, such as BENCH_SECTIONS's, quoted to paste as it is)
	echo "command: $(env | grep -E '^BENCH_(RUNS|POINT_RUNS|LARGE_KEYS|CPU|SECTIONS|RETAIN_MEMORY)=' | sort |
		sed -E "s/^([A-Z_]+)=(.* .*)$/\1='\2'/" | tr '\n' ' ')bash bench/$(basename "$0") ${BENCH_ARGS:-$N}"
}

# bench_main LOAD DEFINE SECTION...: the run of a script that sources this
# one (bloomindex.sh, qfilter.sh, sync.sh): the checks, the cluster, LOAD
# (its data), DEFINE (its queries), then each SECTION's rows of one table,
# the verdicts and the machine.  Cleans up on any exit.
bench_main() {
	local load=$1 define=$2 started=$SECONDS section
	shift 2
	check_arguments
	ensure_prerequisites
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	LIBRARY_AT_START=$(library_id)
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	start_cluster
	build_chase
	echo "loading data (N = $N) ..." >&2
	$load
	echo "data loaded in $((SECONDS - started)) s; measuring ..." >&2
	$define
	NOTES=()
	: >"$WORK/times"
	echo
	table_header
	for section in "$@"; do
		$section
	done
	echo
	echo "targets: $PASSED passed, $FAILED failed"
	printf '%s\n' "${NOTES[@]}"
	print_machine
	echo "runtime: $((SECONDS - started)) s"
}

# wal_per_insert TABLE COUNT: WAL bytes of COUNT single-row INSERT
# statements into TABLE, each its own transaction as a client's would be,
# after a pass that puts every page of its indexes into the WAL since the
# checkpoint.
wal_per_insert() {
	local table=$1 count=$2 script=$WORK/wal-$1.sql start end
	for ((i = 0; i < count; i++)); do
		echo "INSERT INTO $table VALUES ((random() * 1e12)::bigint);"
	done >"$script"
	"${PSQL[@]}" -q -f "$script" >/dev/null || die "warming $table failed"
	start=$(sql_value "SELECT pg_current_wal_insert_lsn()")
	"${PSQL[@]}" -q -f "$script" >/dev/null || die "inserting into $table failed"
	end=$(sql_value "SELECT pg_current_wal_insert_lsn()")
	sql_value "SELECT pg_wal_lsn_diff('$end', '$start') / $count"
}

main() {
	local started=$SECONDS section
	check_arguments
	ensure_prerequisites
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	LIBRARY_AT_START=$(library_id)
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	start_cluster
	build_chase
	echo "loading data (N = $N) ..." >&2
	load_data
	echo "data loaded in $((SECONDS - started)) s; measuring ..." >&2
	define_queries
	NOTES=()
	: >"$WORK/times"

	echo
	table_header
	for section in $SECTIONS; do
		$section
	done
	echo
	echo "targets: $PASSED passed, $FAILED failed"
	# the plans are those of the probe sections' joins
	if [[ " $SECTIONS " == *" probe_"* ]]; then
		note_plans
	fi
	# Notes start with the number of the measurement they explain.
	printf '%s\n' "${NOTES[@]}" | sort -s -t: -k1,1n
	echo
	print_machine
	echo "runtime: $((SECONDS - started)) s"
}

# Run, unless sourced for its functions (bench/ab.sh).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
