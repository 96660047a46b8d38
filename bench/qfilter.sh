#!/bin/bash
# bench/qfilter.sh: measures qfilter's performance contract (issue #17)
# against bloom in the same run, and prints run.sh's table.
#
#   bash bench/qfilter.sh [N]    N = rows aggregated and probed (default 3000000)
#
# Uses run.sh's cluster, data (bench/setup.sql), round-robin timing and
# report (see there for BENCH_RUNS and BENCH_CPU), and adds two qfilters:
# one of users_small's keys, stored as the bloom probe's filter is, and one
# of 1,000,000 keys for the remove-everything check.
#   - bits per key of qfilter_agg(id) over N distinct ids, filled to
#     capacity, header and spare slots included: <= 11 at fpr 0.01;
#   - qfilter_agg(id) against bloom_agg(id), both self-sizing: <= 2;
#   - the probe scan of requests against bloom's of the same keys, both
#     plain scans calling the probe per row: <= 1.5 (and, apart, both as
#     planned, by the Bloom Filter Scan);
#   - removing all keys of the 1M-key filter leaves every count at 0 and
#     the filter equal to an emptied one (and the time it takes).
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/run.sh
source "$BENCH_DIR/run.sh" "${1:-3000000}"

REMOVE_KEYS=1000000

load_qfilters() {
	"${PSQL[@]}" >/dev/null <<-EOF || die "loading the qfilters failed"
		CREATE TABLE qfilters (name text PRIMARY KEY, f qfilter NOT NULL);
		INSERT INTO qfilters SELECT 'small', qfilter_agg(id) FROM users_small;
		INSERT INTO qfilters SELECT 'remove', qfilter_agg(g::bigint) FROM generate_series(1, $REMOVE_KEYS) g;
		VACUUM (FREEZE, ANALYZE) qfilters;
		SELECT count(pg_prewarm(c.oid)) FROM pg_class c
		 WHERE c.relname = 'qfilters'
		    OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relname = 'qfilters');
	EOF
}

define_qfilter_queries() {
	local probe="SELECT count(*) FROM requests r WHERE"
	QUERY[qf_probe_small]="$probe qfilter_contains((SELECT f FROM qfilters WHERE name = 'small'), r.user_id)"
	QUERY[qf_agg]="SELECT pg_column_size(qfilter_agg(id)) FROM t"
	QUERY[qf_agg_spill]=${QUERY[qf_agg]}
	QUERY[qf_remove_all]="SELECT (qfilter_info(qfilter_remove_all(f, ARRAY(SELECT g::bigint FROM generate_series(1, $REMOVE_KEYS) g)))).count FROM qfilters WHERE name = 'remove'"
	QUERY[qf_add_all]="SELECT pg_column_size(qfilter_add_all(f, ARRAY(SELECT g::bigint FROM generate_series(1, $REMOVE_KEYS) g))) FROM qfilters WHERE name = 'remove'"
}

space() {
	local bits
	bits=$(sql_value "SELECT 8.0 * bytes / count FROM qfilter_info((SELECT qfilter_agg(id) FROM t))")
	value_row 17 "qfilter bits per key, $(keys_label "$N") keys, fpr 0.01" "$bits" bits "-" - "<= 11"
	bits=$(sql_value "SELECT 8.0 * bytes / (SELECT count(*) FROM t) FROM bloom_info((SELECT bloom_agg(id) FROM t))")
	value_row 17 "bloom bits per key, same keys (for scale)" "$bits" bits "-" - ""
}

aggregate_and_probe() {
	SETTINGS[qf_agg]=$AGG_WORK_MEM
	SETTINGS[qf_agg_spill]="SET work_mem = '4MB';"
	# The target weighs qfilter's probe against bloom's, both called per
	# row by a plain scan (bloomfilter.batched_scan off); both planned as
	# the Bloom Filter Scan, the comparison is shown apart.
	QUERY[probe_small_plain]=${QUERY[probe_small]}
	SETTINGS[probe_small_plain]="SET bloomfilter.batched_scan = off;"
	QUERY[qf_probe_small_plain]=${QUERY[qf_probe_small]}
	SETTINGS[qf_probe_small_plain]="SET bloomfilter.batched_scan = off;"
	measure "$RUNS" agg_bloom qf_agg base probe_small probe_small_plain qf_probe_small \
		qf_probe_small_plain qf_agg_spill
	paired_row 17 "qfilter_agg(id)" qf_agg ms "bloom_agg(id)" agg_bloom "<= 2"
	paired_row 25 "qfilter_agg(id) spilling at work_mem 4MB" qf_agg_spill ms "in work_mem" qf_agg ""
	paired_row 17 "qfilter probe, plain scan, 300k keys" qf_probe_small_plain ms "bloom's, plain scan" probe_small_plain "<= 1.5"
	paired_row 30 "qfilter probe, Bloom Filter Scan" qf_probe_small ms "bloom's, Bloom Filter Scan" probe_small ""
	paired_row 30 "qfilter probe, Bloom Filter Scan" qf_probe_small ms "scan with user_id <> 0" base ""
	paired_row 30 "qfilter probe, Bloom Filter Scan" qf_probe_small ms "qfilter probe, plain scan" qf_probe_small_plain ""
}

remove_everything() {
	local removed="qfilter_remove_all(f, ARRAY(SELECT g::bigint FROM generate_series(1, $REMOVE_KEYS) g))"
	local left nonzero
	left=$(sql_value "SELECT count + distinct_fingerprints FROM qfilter_info((SELECT $removed FROM qfilters WHERE name = 'remove'))")
	value_row 17 "count + fingerprints left, all 1M removed" "$left" keys "-" - "0-0"
	# materialized: as a plain subquery the planner may rebuild it per key
	nonzero=$(sql_value "WITH x AS MATERIALIZED (SELECT $removed AS e FROM qfilters WHERE name = 'remove')
		SELECT count(*) FROM x, generate_series(1, $REMOVE_KEYS) g WHERE qfilter_count(x.e, g::bigint) > 0")
	value_row 17 "keys with a count > 0 after it" "$nonzero" keys "-" - "0-0"
	measure 5 qf_remove_all qf_add_all
	paired_row 17 "qfilter_remove_all of 1M keys" qf_remove_all ms "qfilter_add_all of the same keys" qf_add_all ""
}


load_qfilter_data() {
	load_data
	load_qfilters
}

define_all_queries() {
	define_queries
	define_qfilter_queries
}

bench_main load_qfilter_data define_all_queries space aggregate_and_probe remove_everything
