#!/bin/bash
# test/fdw/run.sh: bloom filters across shards, on PostgreSQL's postgres_fdw.
#
# Starts three throwaway servers on loopback (a coordinator on port 5531 and
# two shards on 5532 and 5533), splits an events table between the shards
# (shard.sql) and points the coordinator at them (coordinator.sql).  Then
# checks the scale-out pattern of the README:
#   - bloom_agg is pushed down to the shard (the "extensions" server option);
#   - the union of the shard filters equals (=) the filter one server builds
#     over all rows, through UNION ALL and through a partitioned table;
#   - no false negatives, and absent ids are rejected at the expected rate;
#   - filters of different sizes never union: an ERROR, SQLSTATE 22000;
#   - a stored filter crosses the fdw, both ways, unchanged.
#
# Needs bloomfilter built and installed (scripts/test.sh does that first);
# installs postgresql-NN, which ships postgres_fdw, if it is missing (NN is
# pg_config's major: test/lib.sh's pg_major).  Prints one "ok - ..." /
# "not ok - ..." line per check, then "N passed, N failed"; exits non-zero
# if a check failed.  Runs as root, from any directory.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib.sh"

HOST=127.0.0.1
COORD_PORT=5531
SHARD1_PORT=5532
SHARD2_PORT=5533

# The fixed form used on every shard: capacity sized for the total of all
# shards, the same capacity and fpr everywhere, so the filters are unionable.
SHARD_FILTER="bloom_agg(user_id, 300000, 0.01)"
# Ids 1000001..1100000 are on no shard: they measure the false-positive rate.
ABSENT_IDS="generate_series(1000001, 1100000)"

# -------------------------------------------------------------------------
# Reporting (ok, not_ok and finish come from test/lib.sh)

# Reports a failed check; the second argument (what was seen) is shown as
# "#" lines so the result lines stay easy to count.
fail() {
	not_ok "$1"
	if [ -n "${2:-}" ]; then
		printf '%s\n' "$2" | head -n 20 | sed 's/^/#   /'
	fi
}

# -------------------------------------------------------------------------
# Prerequisites

# postgres_fdw is part of the postgresql-NN package; ensure_postgresql
# also sets PGBIN.
check_prerequisites() {
	if ! ensure_postgresql; then
		fail "postgresql-${PG_MAJOR:-NN} with postgres_fdw is installed"
		finish
	fi
	if ! extension_installed; then
		fail "bloomfilter is installed (build and install it first: scripts/test.sh)"
		finish
	fi
}

# -------------------------------------------------------------------------
# Throwaway servers

# Stops every server this run started (test/lib.sh finds them in $WORK)
# and removes $WORK; runs on any exit.
cleanup() {
	# A server still being created in the background must not outlive us.
	wait 2>/dev/null
	cleanup_clusters
}

# Creates and starts one server in $WORK/NAME: name, port.  Durability is
# off because the data is thrown away.  The shards listen on the loopback
# address, where the coordinator's postgres_fdw reaches them, and so does
# the coordinator, where psql reaches it.
start_server() {
	cluster_create "$WORK/$1" "$2" -c listen_addresses=$HOST -c max_connections=20 \
		-c shared_buffers=32MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off
}

# Starts the three servers at once (initdb dominates the run time).
start_servers() {
	local pids=() pid status=0
	start_server coordinator $COORD_PORT &
	pids+=($!)
	start_server shard1 $SHARD1_PORT &
	pids+=($!)
	start_server shard2 $SHARD2_PORT &
	pids+=($!)
	for pid in "${pids[@]}"; do
		wait "$pid" || status=1
	done
	if [ $status -ne 0 ]; then
		fail "three servers start on $HOST ports $COORD_PORT-$SHARD2_PORT (a port in use?)"
		finish
	fi
	ok "three servers start on $HOST ports $COORD_PORT-$SHARD2_PORT"
}

# -------------------------------------------------------------------------
# SQL helpers

# Runs SQL on the server at a port; unaligned, tuples only, stops at the
# first error.  Extra psql options may follow the SQL.
sql() {
	local port=$1 query=$2
	shift 2
	"$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h $HOST -p "$port" \
		-U postgres -d postgres -c "$query" "$@"
}

# Runs a SQL file of this folder on the server at a port; psql variable
# settings (-v name=value) may follow.
sql_file() {
	local port=$1 file=$2
	shift 2
	"$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h $HOST -p "$port" \
		-U postgres -d postgres -f "$here/$file" "$@"
}

# A check whose query answers exactly "t".
check_true() {
	local description=$1 port=$2 query=$3 out
	out=$(sql "$port" "$query" 2>&1)
	if [ "$out" = t ]; then
		ok "$description"
	else
		fail "$description" "$out"
	fi
}

# A check whose query must fail with the given SQLSTATE and return nothing.
check_error() {
	local description=$1 port=$2 sqlstate=$3 query=$4 out
	if out=$(sql "$port" "$query" -v VERBOSITY=sqlstate 2>&1); then
		fail "$description" "no error; got: ${out:0:200}"
	elif printf '%s\n' "$out" | grep -q "^ERROR:  $sqlstate\$"; then
		ok "$description"
	else
		fail "$description" "$out"
	fi
}

# A check that a query's plan ships bloom_agg to the shards: it has
# "scans" Foreign Scans and each one's Remote SQL computes bloom_agg, so no
# raw rows travel.  The Remote SQL lines are printed.  An optional fourth
# argument is run first (settings).
check_pushdown() {
	local description=$1 scans=$2 query=$3 settings=${4:-} plan remote pushed
	plan=$(sql $COORD_PORT "$settings EXPLAIN (VERBOSE, COSTS OFF) $query" 2>&1)
	remote=$(printf '%s\n' "$plan" | grep 'Remote SQL:')
	pushed=$(printf '%s\n' "$remote" | grep -c 'bloom_agg(')
	printf '%s\n' "$remote" | sed 's/^ */#   /'
	if [ "$pushed" -eq "$scans" ] && [ "$(printf '%s\n' "$remote" | grep -c .)" -eq "$scans" ]; then
		ok "$description"
	else
		fail "$description" "$plan"
	fi
}

# -------------------------------------------------------------------------
# Setup

load_shards() {
	local out status=0
	out=$(sql_file $SHARD1_PORT shard.sql -v shard=1 -v first_id=1 -v per_user=1 2>&1) ||
		status=1
	out+=$(sql_file $SHARD2_PORT shard.sql -v shard=2 -v first_id=100001 -v per_user=2 2>&1) ||
		status=1
	if [ $status -eq 0 ]; then
		ok "shards loaded: 100000 events each, ids 1..100000 and 100001..150000 (twice each)"
	else
		fail "shards loaded" "$out"
		finish
	fi
}

setup_coordinator() {
	local out
	if out=$(sql_file $COORD_PORT coordinator.sql \
		-v shard1_port=$SHARD1_PORT -v shard2_port=$SHARD2_PORT 2>&1); then
		ok "coordinator set up: postgres_fdw servers with extensions 'bloomfilter', foreign and partitioned tables"
	else
		fail "coordinator set up" "$out"
		finish
	fi
}

# -------------------------------------------------------------------------
# Checks

# 1. The aggregate runs on the shard, not on the coordinator.
check_aggregate_pushdown() {
	check_pushdown "fixed-size $SHARD_FILTER is pushed down to the shard" 1 \
		"SELECT $SHARD_FILTER FROM shard1_events"
	check_pushdown "self-sizing bloom_agg(user_id) is pushed down to the shard" 1 \
		"SELECT bloom_agg(user_id) FROM shard1_events"
	check_pushdown "self-sizing bloom_agg(user_id, 0.01) is pushed down to the shard" 1 \
		"SELECT bloom_agg(user_id, 0.01) FROM shard1_events"

	# Without the option the rows come back and are aggregated here.
	local plan
	plan=$(sql $COORD_PORT "EXPLAIN (VERBOSE, COSTS OFF) SELECT $SHARD_FILTER FROM shard1_plain_events" 2>&1)
	printf '%s\n' "$plan" | grep 'Remote SQL:' | sed 's/^ */#   /'
	if printf '%s\n' "$plan" | grep -q 'Remote SQL: SELECT user_id FROM public.events$'; then
		ok "without the extensions option, bloom_agg is not pushed down (rows are fetched)"
	else
		fail "without the extensions option, bloom_agg is not pushed down (rows are fetched)" "$plan"
	fi
}

# 2. One filter per shard, unioned on the coordinator, is the filter one
# server builds over all rows.
check_union_equals_single_server() {
	local per_shard="SELECT $SHARD_FILTER AS f FROM shard1_events
		UNION ALL SELECT $SHARD_FILTER FROM shard2_events"
	local per_partition="SELECT shard, $SHARD_FILTER AS f FROM events_all GROUP BY shard"

	check_pushdown "UNION ALL of the shards: both bloom_agg calls pushed down" 2 \
		"SELECT bloom_union_agg(f) FROM ($per_shard) s"
	check_true "bloom_union_agg of the shard filters = $SHARD_FILTER over all rows on one server" $COORD_PORT \
		"CREATE TABLE unioned AS SELECT bloom_union_agg(f) AS f FROM ($per_shard) s;
		 SELECT f = (SELECT $SHARD_FILTER FROM local_events) FROM unioned"

	check_pushdown "partitioned table, GROUP BY the partition key, partitionwise: both partitions pushed down" 2 \
		"SELECT bloom_union_agg(f) FROM ($per_partition) s" "SET enable_partitionwise_aggregate = on;"
	check_true "partitioned table: union of per-partition filters = the single-server filter" $COORD_PORT \
		"SET enable_partitionwise_aggregate = on;
		 SELECT (SELECT bloom_union_agg(f) FROM ($per_partition) s) = (SELECT $SHARD_FILTER FROM local_events)"

	# A plain aggregate over the partitioned table fetches the rows (postgres_fdw
	# in 15 ships no partial aggregates) and combines partition states here.
	check_true "partitioned table: plain $SHARD_FILTER (partial states combined locally) = the single-server filter" $COORD_PORT \
		"SET enable_partitionwise_aggregate = on;
		 SELECT (SELECT $SHARD_FILTER FROM events_all) = (SELECT $SHARD_FILTER FROM local_events)"
	check_true "partitioned table: self-sizing bloom_agg(user_id) = the single-server one" $COORD_PORT \
		"SET enable_partitionwise_aggregate = on;
		 SELECT (SELECT bloom_agg(user_id) FROM events_all) = (SELECT bloom_agg(user_id) FROM local_events)"

	# bloom_empty with the same parameters is the neutral element of the union.
	check_true "bloom_empty(300000, 0.01) unions with the shard filters and changes nothing" $COORD_PORT \
		"SELECT bloom_union_agg(f) = (SELECT f FROM unioned)
		   FROM ($per_shard UNION ALL SELECT bloom_empty(300000, 0.01)) s"
}

# 3. No false negatives; absent ids rejected at the rate the filter predicts.
check_membership() {
	check_true "every one of the 200000 rows' ids is in the unioned filter" $COORD_PORT \
		"SELECT count(*) = 200000 AND bool_and(u.f @> e.user_id) FROM local_events e, unioned u"
	# The realistic use: the filter goes to the shards as a query parameter
	# and each applies it to its own rows (the WHERE clause is shipped).
	local probe="SELECT count(*) FROM events_all WHERE (SELECT f FROM unioned) @> user_id" plan
	plan=$(sql $COORD_PORT "EXPLAIN (VERBOSE, COSTS OFF) $probe" 2>&1)
	printf '%s\n' "$plan" | grep 'Remote SQL:' | sed 's/^ */#   /'
	if [ "$(printf '%s\n' "$plan" | grep -c 'Remote SQL: .*WHERE .*\$1::public.bloom OPERATOR(public.@>) user_id')" -eq 2 ] &&
		[ "$(sql $COORD_PORT "$probe" 2>&1)" = 200000 ]; then
		ok "the unioned filter, shipped to both shards as a parameter, finds all 200000 rows there"
	else
		fail "the unioned filter, shipped to both shards as a parameter, finds all 200000 rows there" "$plan"
	fi

	# (Grouping by the filter instead would hash the whole filter once per row.)
	local measured="SELECT avg((u.f @> i)::int) AS m, (SELECT bloom_fpr(f) FROM unioned) AS p
		FROM $ABSENT_IDS i, unioned u"
	echo "# capacity 300000, 150000 distinct ids: measured fpr | bloom_fpr = $(sql $COORD_PORT \
		"SELECT round(m, 5), round(p::numeric, 5) FROM ($measured) r" 2>&1)"
	check_true "ids on no shard: measured fpr <= 0.01 and within 5 sigma of bloom_fpr" $COORD_PORT \
		"SELECT m <= 0.01 AND abs(m - p) <= 5 * sqrt(p * (1 - p) / 100000) FROM ($measured) r"

	# Sized exactly for the 150000 distinct ids, the rate is the target's.
	local at_capacity="SELECT avg((u.f @> i)::int) AS m FROM $ABSENT_IDS i,
		(SELECT bloom_union_agg(f) AS f FROM (SELECT bloom_agg(user_id, 150000, 0.01) f FROM shard1_events
			UNION ALL SELECT bloom_agg(user_id, 150000, 0.01) FROM shard2_events) s) u"
	echo "# capacity 150000 (= distinct ids), target 0.01: measured fpr = $(sql $COORD_PORT \
		"SELECT round(m, 5) FROM ($at_capacity) r" 2>&1)"
	check_true "shards sized for exactly the total: measured fpr in [0.007, 0.0105] for target 0.01" $COORD_PORT \
		"SELECT m BETWEEN 0.007 AND 0.0105 FROM ($at_capacity) r"
}

# 4. Filters of different sizes are an error, never a filter.
check_incompatible() {
	check_error "shard filters of capacities 300000 and 200000: bloom_union_agg is ERROR 22000" $COORD_PORT 22000 \
		"SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(user_id, 300000, 0.01) f FROM shard1_events
			UNION ALL SELECT bloom_agg(user_id, 200000, 0.01) FROM shard2_events) s"
	check_error "shard filters of fpr 0.01 and 0.001: bloom_union_agg is ERROR 22000" $COORD_PORT 22000 \
		"SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(user_id, 300000, 0.01) f FROM shard1_events
			UNION ALL SELECT bloom_agg(user_id, 300000, 0.001) FROM shard2_events) s"
	check_error "shard filters of capacities 300000 and 200000: the | operator is ERROR 22000" $COORD_PORT 22000 \
		"SELECT (SELECT bloom_agg(user_id, 300000, 0.01) FROM shard1_events)
			| (SELECT bloom_agg(user_id, 200000, 0.01) FROM shard2_events)"
	check_error "self-sizing shard filters (100000 vs 50000 distinct ids): bloom_union_agg is ERROR 22000" $COORD_PORT 22000 \
		"SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(user_id) f FROM shard1_events
			UNION ALL SELECT bloom_agg(user_id) FROM shard2_events) s"
}

# 5. A stored filter crosses the fdw (text form, validated by bloom_in) both
# ways unchanged.  The fetched copy is compared after it is materialised on
# the coordinator, so the comparison cannot be shipped back to the shard.
check_transport() {
	local on_shard on_coordinator
	on_shard=$(sql $SHARD1_PORT "SELECT md5(f::bytea) FROM filters WHERE name = 'events_user_id'" 2>&1)
	on_coordinator=$(sql $COORD_PORT "CREATE TABLE fetched AS SELECT name, f FROM shard1_filters;
		SELECT md5(f::bytea) FROM fetched WHERE name = 'events_user_id'" 2>&1)
	if [ -n "$on_shard" ] && [ "$on_shard" = "$on_coordinator" ]; then
		ok "stored filter read through the foreign table has the shard's exact bytes (md5 $on_shard)"
	else
		fail "stored filter read through the foreign table has the shard's exact bytes" \
			"shard: $on_shard, coordinator: $on_coordinator"
	fi
	check_true "stored filter read through the foreign table = the filter of the same rows built here" $COORD_PORT \
		"SELECT f = (SELECT $SHARD_FILTER FROM local_events WHERE shard = 1) FROM fetched WHERE name = 'events_user_id'"

	sql $COORD_PORT "INSERT INTO shard1_filters SELECT 'written_by_coordinator', f FROM fetched" >/dev/null 2>&1
	check_true "a filter written through the foreign table = the shard's own" $SHARD1_PORT \
		"SELECT a.f = b.f FROM filters a, filters b
		  WHERE a.name = 'events_user_id' AND b.name = 'written_by_coordinator'"

	local plan
	plan=$(sql $COORD_PORT "EXPLAIN (VERBOSE, COSTS OFF)
		SELECT name FROM shard1_filters WHERE f @> 4242::bigint AND name = 'events_user_id'" 2>&1)
	printf '%s\n' "$plan" | grep 'Remote SQL:' | sed 's/^ */#   /'
	if printf '%s\n' "$plan" | grep -q 'Remote SQL:.*@>' &&
		[ "$(sql $COORD_PORT "SELECT name FROM shard1_filters WHERE f @> 4242::bigint AND name = 'events_user_id'" 2>&1)" = events_user_id ]; then
		ok "a probe of the stored filter (f @> 4242) runs on the shard and finds the id"
	else
		fail "a probe of the stored filter (f @> 4242) runs on the shard and finds the id" "$plan"
	fi
}

# -------------------------------------------------------------------------

main() {
	check_prerequisites
	make_workdir fdw || { fail "a temporary directory"; finish; }
	start_servers
	load_shards
	setup_coordinator
	check_aggregate_pushdown
	check_union_equals_single_server
	check_membership
	check_incompatible
	check_transport
	finish
}

cleanup_on_exit cleanup
main
