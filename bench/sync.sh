#!/bin/bash
# bench/sync.sh: measures what copies that follow a bloomfilter index cost
# (issue #28) against baselines in the same run, and prints run.sh's table.
#
#   bash bench/sync.sh [N]   N = keys of the followed index (default 10000000,
#                            a 12 MB filter)
#
# Uses run.sh's cluster, round-robin timing and report (see there for
# BENCH_RUNS, BENCH_POINT_RUNS and BENCH_CPU), with its own data:
#   - extra WAL of a single-row INSERT that the change log adds: a table
#     whose bloomfilter index keeps a log against one whose index has none
#     (changelog = 0), both after a pass that puts their pages in the WAL
#     since the checkpoint: <= 200 bytes;
#   - extra time of such INSERTs, index with a log against none, over the
#     extra time of a btree index: <= 1x;
#   - after 1,000 single-row INSERTs into the index of N keys, the delta of
#     one sync against the snapshot's bytes: <= 1%, and the server's time
#     for that sync (bloom_index_changes, timed by the client less a
#     SELECT 1 in the same passes): <= 5 ms;
#   - a sync with nothing new, over SELECT 1: <= 0.2 ms.
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/run.sh
source "$BENCH_DIR/run.sh" "${1:-10000000}"

INSERTS=20000
WAL_INSERTS=5000
SYNC_INSERTS=1000

load_sync_data() {
	"${PSQL[@]}" >/dev/null <<-EOF || die "loading the sync data failed"
		CREATE EXTENSION bloomfilter;
		CREATE TABLE users (id bigint NOT NULL);
		INSERT INTO users SELECT g FROM generate_series(1, $N) g;
		CREATE INDEX users_guard ON users USING bloomfilter (id) WITH (capacity = $N);
		CREATE TABLE ins_none (k bigint);
		CREATE TABLE ins_nolog (k bigint);
		CREATE INDEX ins_nolog_guard ON ins_nolog USING bloomfilter (k) WITH (capacity = 1000000, changelog = 0);
		CREATE TABLE ins_log (k bigint);
		CREATE INDEX ins_log_guard ON ins_log USING bloomfilter (k) WITH (capacity = 1000000);
		CREATE TABLE ins_btree (k bigint);
		CREATE INDEX ins_btree_k ON ins_btree (k);
		VACUUM (FREEZE, ANALYZE);
		CREATE TABLE copies (name text PRIMARY KEY, lsn pg_lsn, bytes bigint, timeline bigint, build pg_lsn);
		INSERT INTO copies SELECT 'before', lsn, length(filter::bytea), timeline, build FROM bloom_index_snapshot('users_guard');
	EOF
	# single-row INSERTs, each its own transaction, as an application's
	for ((i = 1; i <= SYNC_INSERTS; i++)); do
		echo "INSERT INTO users VALUES ($((N + i)));"
	done >"$WORK/sync-inserts.sql"
	"${PSQL[@]}" -f "$WORK/sync-inserts.sql" >/dev/null || die "the inserts failed"
	"${PSQL[@]}" -c "INSERT INTO copies SELECT 'after', upto, NULL, c.timeline, c.build FROM copies c, bloom_index_changes('users_guard', c.lsn, c.timeline, c.build) WHERE c.name = 'before'" \
		>/dev/null || die "recording the position failed"
}

define_sync_queries() {
	local loop="DO \$\$ BEGIN FOR i IN 1..$INSERTS LOOP INSERT INTO %s VALUES ((random() * 1e12)::bigint); END LOOP; END \$\$"
	local table
	for table in ins_none ins_nolog ins_log ins_btree; do
		# shellcheck disable=SC2059
		QUERY[$table]=$(printf "$loop" "$table")
	done
	QUERY[select_1]="SELECT 1"
	QUERY[sync_1000]="SELECT length(c.delta) FROM copies s, bloom_index_changes('users_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before'"
	QUERY[sync_none]="SELECT length(c.delta) FROM copies s, bloom_index_changes('users_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'after'"
}


log_costs() {
	local none nolog log btree
	sql_value "CHECKPOINT" >/dev/null
	none=$(wal_per_insert ins_none "$WAL_INSERTS")
	nolog=$(wal_per_insert ins_nolog "$WAL_INSERTS")
	log=$(wal_per_insert ins_log "$WAL_INSERTS")
	btree=$(wal_per_insert ins_btree "$WAL_INSERTS")
	value_row 28 "extra WAL per INSERT, the change log" "$(calc "$log - $nolog")" B "-" - "<= 200"
	value_row 28 "extra WAL per INSERT, index with log" "$(calc "$log - $none")" B "-" - ""
	value_row 28 "extra WAL per INSERT, btree (for scale)" "$(calc "$btree - $none")" B "-" - ""
	measure "$RUNS" ins_none ins_nolog ins_log ins_btree
	none=$(median ins_none) nolog=$(median ins_nolog) log=$(median ins_log) btree=$(median ins_btree)
	ratio_row 28 "extra time of $INSERTS INSERTs, index with log" "$(calc "$log - $none")" ms \
		"extra time, btree index" "$(calc "$btree - $none")" "<= 1"
	ratio_row 28 "extra time of $INSERTS INSERTs, no log" "$(calc "$nolog - $none")" ms \
		"extra time, btree index" "$(calc "$btree - $none")" ""
}

syncs() {
	local delta snapshot one changes none
	delta=$(sql_value "SELECT length(c.delta) FROM copies s, bloom_index_changes('users_guard', s.lsn, s.timeline, s.build) c WHERE s.name = 'before'")
	snapshot=$(sql_value "SELECT bytes FROM copies WHERE name = 'before'")
	ratio_row 28 "delta after $SYNC_INSERTS INSERTs, $(keys_label "$N") keys" "$delta" B \
		"the snapshot" "$snapshot" "<= 0.01"
	measure "$POINT_RUNS" select_1 sync_1000 sync_none
	one=$(median select_1) changes=$(median sync_1000) none=$(median sync_none)
	value_row 28 "sync of $SYNC_INSERTS keys, over SELECT 1" "$(calc "$changes - $one")" ms "-" - "<= 5"
	value_row 28 "sync of nothing new, over SELECT 1" "$(calc "$none - $one")" ms "-" - "<= 0.2"
}

bench_main load_sync_data define_sync_queries log_costs syncs
