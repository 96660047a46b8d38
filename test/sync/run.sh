#!/bin/bash
# test/sync/run.sh: copies that follow a bloomfilter index stay complete
# under load (issue #28's stress test).
#
# A primary and a streaming standby (throwaway clusters, unix sockets only);
# 8 pgbench writers insert new keys for SYNC_SECONDS (default 60) into a
# table whose bloomfilter index starts small and grows by segments; three
# clients follow the index meanwhile: bloomfilter-cli sync (the C library),
# a Python LiveFilter on the primary and one on the standby.  After every
# sync each client checks that every key committed before the sync's upto
# is in its copy (test/sync/follow.py says how it knows which).  In the
# middle a REINDEX INDEX CONCURRENTLY rebuilds the index, and later the
# primary is stopped with pg_ctl stop -m immediate and started again.
#
# Checks: no client misses a key; at least 1,000 syncs in all; each client
# checked keys across the rebuild and the restart; the index grew by
# segments.  (A client whose copy is younger than the rebuilt index's build
# goes on with the new index's changes: its copy already holds every key
# the build read.)  Prints "ok"/"not ok" lines, "#" lines and, last,
# "N passed, N failed".  Needs root, the extension installed and the client
# built (scripts/test.sh does both; this runs make client).
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5583
STANDBY_PORT=5584
SECONDS_TO_RUN=${SYNC_SECONDS:-60}
# The primary's settings, at its start and again after its crash.
PRIMARY_OPTIONS=(-c max_connections=40 -c wal_level=replica -c max_wal_senders=4)
# The run's directory (test/lib.sh's $WORK): the primary, the standby.
work=""
pids=()

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	cleanup_clusters
}

sql() {
	cluster_sql "$work/primary" -d sync "$@"
}

setup() {
	make_workdir sync && work=$WORK &&
		cluster_create "$work/primary" "$PORT" "${PRIMARY_OPTIONS[@]}" || return 1
	"$PGBIN/createdb" -h "$work/primary" -p "$PORT" -U postgres sync || return 1
	sql >/dev/null <<-SQL || return 1
		CREATE EXTENSION bloomfilter;
		CREATE TABLE keys (id bigint NOT NULL);
		CREATE SEQUENCE key_seq;
		-- small, so that the writers make it grow by segments
		CREATE INDEX keys_guard ON keys USING bloomfilter (id) WITH (capacity = 2000);
		CREATE TABLE commits (id bigint NOT NULL, lsn pg_lsn NOT NULL);
		CREATE INDEX commits_lsn ON commits (lsn);
	SQL
	cluster_standby "$work/primary" "$work/standby" "$STANDBY_PORT"
}

# The writers: pgbench, 8 clients, until the deadline; started again after
# the primary's restart.  Each key's position is written after its commit.
writers() {
	local until=$1 left
	cat >"$work/writer.sql" <<-'SQL'
		SELECT nextval('key_seq') AS k \gset
		INSERT INTO keys VALUES (:k);
		INSERT INTO commits VALUES (:k, pg_current_wal_insert_lsn());
	SQL
	while left=$((until - $(date +%s))) && [ "$left" -gt 0 ]; do
		"$PGBIN/pgbench" -n -c 8 -j 2 -T "$left" -f "$work/writer.sql" \
			-h "$work/primary" -p "$PORT" -U postgres sync >>"$work/pgbench.log" 2>&1
		sleep 0.5
	done
}

main() {
	local primary standby until line syncs=0 client
	cleanup_on_exit cleanup
	ensure_postgresql python3 python3-dev python3-setuptools python3-psycopg libpq-dev make gcc \
		libxxhash-dev ||
		{ not_ok "installing PostgreSQL, python3, python3-dev, python3-setuptools, python3-psycopg, libpq-dev, make, gcc and libxxhash-dev"; finish; }
	if ! make -s -C "$REPO" client >"$REPO/test/sync/.build.log" 2>&1; then
		cat "$REPO/test/sync/.build.log"
		not_ok "make client"
		finish
	fi
	rm -f "$REPO/test/sync/.build.log"
	check "primary, standby and the followed index set up" setup || finish
	echo "# set up in $SECONDS s"
	primary="host=$work/primary port=$PORT user=postgres dbname=sync"
	standby="host=$work/standby port=$STANDBY_PORT user=postgres dbname=sync"
	export PYTHONPATH="$REPO/python"
	until=$(($(date +%s) + SECONDS_TO_RUN))

	writers "$until" &
	pids+=($!)
	"$REPO/client/bloomfilter-cli" sync "$primary" keys_guard "$work/cli.bf" --interval 0.05 \
		2>"$work/cli.err" | /usr/bin/python3 "$HERE/follow.py" cli "$primary" "$work/cli.bf" \
		"$SECONDS_TO_RUN" >"$work/follow-cli.out" 2>&1 &
	pids+=($!)
	/usr/bin/python3 "$HERE/follow.py" live "$primary" keys_guard "$SECONDS_TO_RUN" \
		>"$work/follow-live.out" 2>&1 &
	pids+=($!)
	/usr/bin/python3 "$HERE/follow.py" live "$primary" keys_guard "$SECONDS_TO_RUN" "$standby" \
		>"$work/follow-standby.out" 2>&1 &
	pids+=($!)

	sleep $((SECONDS_TO_RUN * 2 / 5))
	check "REINDEX INDEX CONCURRENTLY during the run" sql -c "REINDEX INDEX CONCURRENTLY keys_guard"
	echo "# rebuilt at $SECONDS s"
	sleep $((SECONDS_TO_RUN / 5))
	check "pg_ctl stop -m immediate of the primary" cluster_stop "$work/primary" immediate
	sleep 1
	check "the primary starts again" cluster_start "$work/primary" "$PORT" "${PRIMARY_OPTIONS[@]}"
	wait "${pids[1]}" "${pids[2]}" "${pids[3]}"
	pkill -f "bloomfilter-cli sync $primary" 2>/dev/null
	wait "${pids[0]}"
	pids=()

	for client in cli live standby; do
		echo "# $client: $(tail -n 1 "$work/follow-$client.out")"
		grep '^# ' "$work/follow-$client.out" | head -n 5
		line=$(grep '^syncs ' "$work/follow-$client.out")
		if [ -z "$line" ]; then
			not_ok "$client follower reported"
			cat "$work/follow-$client.out"
			continue
		fi
		# syncs N reloads N checked N misses N errors N
		set -- $line
		syncs=$((syncs + $2))
		check "$client: no key committed before a sync's upto is missing ($6 checked over $2 syncs)" \
			test "$8" = 0
		check "$client: checked keys" test "$6" -gt 1000
	done
	check "at least 1,000 syncs in all ($syncs)" test "$syncs" -ge 1000
	check "the index grew by segments ($(sql -c "SELECT segments FROM bloom_index_info('keys_guard')"))" \
		test "$(sql -c "SELECT segments FROM bloom_index_info('keys_guard')")" -ge 2
	check "every key is in the index" sql -o /dev/null -c "SELECT bloom_index_verify('keys_guard')"
	echo "# keys written: $(sql -c "SELECT count(*) FROM keys"); runtime $SECONDS s"
	finish
}

main "$@"
