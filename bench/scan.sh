#!/bin/bash
# bench/scan.sh: measures the batched filter scan (Custom Scan "Bloom Filter
# Scan", src/bloomscan.c; issue #30) and prints run.sh's table, then one
# "# perf:" line per ratio.
#
#   bash bench/scan.sh [N]       N = rows scanned (default 5000000)
#
# Uses run.sh's cluster, round-robin timing and report (see there for
# BENCH_RUNS, here 3 by default, and BENCH_CPU).  Its own data: a table of
# N keys, 10% of them in every filter and 90% in none, in random order, and
# filters of 10M, 3M and 300k keys stored in a table, read by the query as
# an InitPlan.  Each filter is probed by the batched scan and by the plain
# plan (bloomfilter.batched_scan off), against the same scan with
# user_id <> 0:
#   - 10M-key filter (12 MB): batched <= 1.5x the trivial scan, and its
#     extra time over that scan <= 1/3 of the plain plan's;
#   - 3M-key filter (3.7 MB): <= 1.25x at the default
#     bloomfilter.batched_scan_min_size (1MB); at 4MB, for comparison,
#     where it is probed row by row;
#   - 300k-key filter (360 KB): <= 1.1x (below the threshold: the same
#     scan probes it row by row);
#   - the 10M-key probe with 2 parallel workers: <= 1.5x the trivial scan
#     with 2 workers;
#   - a 3M-key qfilter (3.7 MB), batched and in the plain plan, without a
#     target (a qfilter's probe does more work than bloom's);
#   - the 10M-key probe of 200k rows by 2 workers alone (the leader not
#     scanning), where each worker's copy of the filter is much of the
#     time, without a target.
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
: "${BENCH_RUNS:=3}"
MIN_RUNS=3
BENCH_ARGS=${1:-5000000}
# shellcheck source=bench/run.sh
source "$BENCH_DIR/run.sh" "$BENCH_ARGS"
# For run.sh's summary of the filters.
SMALL_KEYS=300000
LARGE_KEYS=10000000

load_scan_data() {
	"${PSQL[@]}" -v n="$N" >/dev/null <<-'EOF' || die "loading the data failed"
		CREATE EXTENSION bloomfilter;
		CREATE EXTENSION pg_prewarm;
		SELECT setseed(0.42);
		CREATE TABLE requests (user_id bigint NOT NULL);
		INSERT INTO requests
		SELECT CASE WHEN random() < 0.1 THEN 1 + floor(random() * 300000)::bigint
					ELSE 1000000000 + floor(random() * 1e12)::bigint END
		  FROM generate_series(1, :n);
		CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
		INSERT INTO filters SELECT 'k10m', bloom_agg(g::bigint) FROM generate_series(1, 10000000) g;
		INSERT INTO filters SELECT 'k3m', bloom_agg(g::bigint) FROM generate_series(1, 3000000) g;
		INSERT INTO filters SELECT 'k300k', bloom_agg(g::bigint) FROM generate_series(1, 300000) g;
		-- under min_parallel_table_scan_size: the table's own setting
		CREATE TABLE requests_200k WITH (parallel_workers = 2) AS
		SELECT * FROM requests LIMIT 200000;
		CREATE TABLE qfilters (name text PRIMARY KEY, q qfilter NOT NULL);
		INSERT INTO qfilters SELECT 'k3m', qfilter_agg(g::bigint) FROM generate_series(1, 3000000) g;
		VACUUM (FREEZE, ANALYZE) requests, requests_200k, filters, qfilters;
		SELECT count(pg_prewarm(c.oid)) FROM pg_class c
		 WHERE c.relname IN ('requests', 'requests_200k', 'filters', 'qfilters')
		    OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relname IN ('filters', 'qfilters'));
	EOF
}

define_scan_queries() {
	local probe="SELECT count(*) FROM requests r WHERE" name
	QUERY[base]="$probe r.user_id <> 0"
	for name in k10m k3m k300k; do
		QUERY[${name}_on]="$probe bloom_contains((SELECT f FROM filters WHERE name = '$name'), r.user_id)"
		QUERY[${name}_off]=${QUERY[${name}_on]}
		SETTINGS[${name}_off]="SET bloomfilter.batched_scan = off;"
	done
	QUERY[q3m_on]="$probe qfilter_contains((SELECT q FROM qfilters WHERE name = 'k3m'), r.user_id)"
	QUERY[q3m_off]=${QUERY[q3m_on]}
	SETTINGS[q3m_off]="SET bloomfilter.batched_scan = off;"
	QUERY[k3m_on_4mb]=${QUERY[k3m_on]}
	SETTINGS[k3m_on_4mb]="SET bloomfilter.batched_scan_min_size = '4MB';"
	# run.sh's forced parallel plan, but for min_parallel_table_scan_size:
	# at 0 the one-page filters table read by the InitPlan got a Gather and
	# a worker of its own, started (about 20 ms here) before the scan could
	# begin, which no real plan does at the default (8MB).
	SCAN_PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;"
	QUERY[base_par]=${QUERY[base]}
	SETTINGS[base_par]=$SCAN_PARALLEL
	QUERY[k10m_par_on]=${QUERY[k10m_on]}
	SETTINGS[k10m_par_on]=$SCAN_PARALLEL
	QUERY[k10m_par_off]=${QUERY[k10m_on]}
	QUERY[base_200k_workers]="SELECT count(*) FROM requests_200k r WHERE r.user_id <> 0"
	SETTINGS[base_200k_workers]="$SCAN_PARALLEL SET parallel_leader_participation = off;"
	QUERY[k10m_200k_workers]="SELECT count(*) FROM requests_200k r
		WHERE bloom_contains((SELECT f FROM filters WHERE name = 'k10m'), r.user_id)"
	SETTINGS[k10m_200k_workers]=${SETTINGS[base_200k_workers]}
	SETTINGS[k10m_par_off]="$SCAN_PARALLEL SET bloomfilter.batched_scan = off;"
}

# PERF lines: "name ratio target", printed after the table.
PERF=()

# The extra time of label $1 over base against that of label $2, from the
# medians of their latest measure call.
extra_ratio() {
	local base on off
	base=$(median "$3") on=$(median "$1") off=$(median "$2")
	ratio_of "$(calc "$on - $base")" "$(calc "$off - $base")"
}

scan_10m() {
	local bytes
	bytes=$(sql_value "SELECT bytes FROM bloom_info((SELECT f FROM filters WHERE name = 'k10m'))")
	measure "$RUNS" base k10m_on k10m_off
	paired_row 30 "batched scan, 10M-key filter ($(size_label "$bytes"))" k10m_on ms "scan with user_id <> 0" base "<= 1.5"
	paired_row 30 "plain plan, same filter" k10m_off ms "scan with user_id <> 0" base ""
	ratio_row 30 "extra over the <> 0 scan, batched" \
		"$(calc "$(median k10m_on) - $(median base)")" ms "same, plain plan" \
		"$(calc "$(median k10m_off) - $(median base)")" "<= 0.333"
	PERF+=("scan_10m_batched_vs_trivial $(paired_ratio k10m_on base) <=1.5"
		"scan_10m_plain_vs_trivial $(paired_ratio k10m_off base) -"
		"scan_10m_extra_batched_vs_plain $(extra_ratio k10m_on k10m_off base) <=0.333")
}

scan_3m() {
	local bytes
	bytes=$(sql_value "SELECT bytes FROM bloom_info((SELECT f FROM filters WHERE name = 'k3m'))")
	measure "$RUNS" base k3m_on k3m_on_4mb k3m_off
	paired_row 30 "batched scan, 3M-key filter ($(size_label "$bytes"))" k3m_on ms "scan with user_id <> 0" base "<= 1.25"
	paired_row 30 "same at min_size 4MB (row by row)" k3m_on_4mb ms "scan with user_id <> 0" base ""
	paired_row 30 "plain plan, same filter" k3m_off ms "scan with user_id <> 0" base ""
	PERF+=("scan_3m_batched_default_vs_trivial $(paired_ratio k3m_on base) <=1.25"
		"scan_3m_row_by_row_min_size_4mb_vs_trivial $(paired_ratio k3m_on_4mb base) -"
		"scan_3m_plain_vs_trivial $(paired_ratio k3m_off base) -")
}

scan_300k() {
	measure "$RUNS" base k300k_on k300k_off
	paired_row 30 "batched scan on, 300k-key filter" k300k_on ms "scan with user_id <> 0" base "<= 1.1"
	paired_row 30 "plain plan, same filter" k300k_off ms "scan with user_id <> 0" base ""
	PERF+=("scan_300k_on_vs_trivial $(paired_ratio k300k_on base) <=1.1"
		"scan_300k_plain_vs_trivial $(paired_ratio k300k_off base) -")
}

scan_qfilter() {
	local bytes
	bytes=$(sql_value "SELECT bytes FROM qfilter_info((SELECT q FROM qfilters WHERE name = 'k3m'))")
	measure "$RUNS" base q3m_on q3m_off
	paired_row 30 "batched scan, 3M-key qfilter ($(size_label "$bytes"))" q3m_on ms "scan with user_id <> 0" base ""
	paired_row 30 "plain plan, same qfilter" q3m_off ms "scan with user_id <> 0" base ""
	PERF+=("scan_qfilter_3m_batched_vs_trivial $(paired_ratio q3m_on base) -"
		"scan_qfilter_3m_plain_vs_trivial $(paired_ratio q3m_off base) -")
}

# Unpinned: it needs every CPU.
scan_parallel() {
	PIN=no
	measure "$RUNS" base_par k10m_par_on k10m_par_off
	paired_row 30 "batched scan, 10M-key, 2 workers" k10m_par_on ms "<> 0 scan, 2 workers" base_par "<= 1.5"
	paired_row 30 "plain plan, same, 2 workers" k10m_par_off ms "<> 0 scan, 2 workers" base_par ""
	measure "$RUNS" base_200k_workers k10m_200k_workers
	PIN=yes
	paired_row 30 "batched scan, 10M-key, 200k rows, workers only" k10m_200k_workers ms "same <> 0 scan" base_200k_workers ""
	PERF+=("scan_10m_parallel_batched_vs_trivial $(paired_ratio k10m_par_on base_par) <=1.5"
		"scan_10m_parallel_plain_vs_trivial $(paired_ratio k10m_par_off base_par) -"
		"scan_10m_200k_rows_workers_only_vs_trivial $(paired_ratio k10m_200k_workers base_200k_workers) -")
	# What a worker's copy of the filter costs in page faults, either way.
	NOTES+=("30: memory new to a process, per 4 kB, in small pages then huge pages (bench/chase.c --touch of the 10M-key filter's size): $("$WORK/chase" --touch \
		"$(sql_value "SELECT bytes FROM bloom_info((SELECT f FROM filters WHERE name = 'k10m'))")") ns")
	NOTES+=("30: parallel plan: $("${PSQL[@]}" -A -t -c "$SCAN_PARALLEL EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${QUERY[k10m_par_on]}" |
		grep -E 'Workers Launched|Custom Scan' | sed 's/^ *-> *//; s/^ *//' | paste -sd '/' -)")
}

print_perf() {
	local line
	echo
	for line in "${PERF[@]}"; do
		# shellcheck disable=SC2086
		set -- $line
		echo "# perf: $1 = $(fmt "$2")x (target ${3/#<=/<= })"
	done
}

bench_main load_scan_data define_scan_queries scan_10m scan_3m scan_300k scan_qfilter scan_parallel \
	print_perf
