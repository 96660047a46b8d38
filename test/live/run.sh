#!/bin/bash
# test/live/run.sh: applications that follow a bloomfilter index (extension
# 1.1's bloom_index_snapshot and bloom_index_changes): the Python
# LiveFilter over psycopg 3 and bloomfilter-cli sync, end to end, in a
# throwaway cluster of its own (unix socket only), of pg_config's
# PostgreSQL major.  live_test.py holds the checks: copies equal to the
# index byte for byte, 0 misses of committed keys while writers insert,
# REINDEX, write-through across a reload, the staleness bound with the
# server stopped and restarted, the CLI's file replaced atomically.
#
#   bash test/live/run.sh       # as root (the cluster runs as postgres); ~1 min
#
# Prints one "ok - ..."/"not ok - ..." line per check and, last,
# "N passed, N failed"; exits non-zero if anything failed.  Needs the
# extension installed (scripts/test.sh installs it first); builds the
# client with make client.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5581
PYTHON=/usr/bin/python3
STARTED=$(date +%s)

work=""

cleanup() {
	if [ -n "$work" ] && [ -d "$work" ]; then
		if cluster_up "$work"; then
			cluster_stop "$work" immediate >/dev/null 2>&1 ||
				kill -KILL "$(head -n 1 "$work/data/postmaster.pid")" 2>/dev/null
		fi
		rm -rf "$work"
	fi
}

finish_timed() {
	echo "# runtime: $(($(date +%s) - STARTED)) s"
	finish
}

# The server's stop and start, as scripts live_test.py runs between its
# checks of the staleness bound.
write_server_scripts() {
	cat >"$work/stop.sh" <<-EOF
		. "$REPO/test/lib.sh"
		PGBIN=$PGBIN
		cluster_stop "$work" fast
	EOF
	cat >"$work/start.sh" <<-EOF
		. "$REPO/test/lib.sh"
		PGBIN=$PGBIN
		cluster_start "$work" $PORT -c fsync=off -c full_page_writes=off
	EOF
}

main() {
	local status
	cleanup_on_exit cleanup
	ensure_postgresql gcc libc6-dev libxxhash-dev libpq-dev make python3 python3-psycopg ||
		{ not_ok "installing PostgreSQL, gcc, libxxhash-dev, libpq-dev, make, python3 and python3-psycopg"; finish_timed; }
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	if make -s -C "$REPO" client >"$REPO/client/build.log" 2>&1; then
		ok "make client builds the library and the CLI (with libpq)"
		rm -f "$REPO/client/build.log"
	else
		not_ok "make client builds the library and the CLI (with libpq)"
		sed 's/^/#   /' "$REPO/client/build.log" | tail -n 20
		rm -f "$REPO/client/build.log"
		finish_timed
	fi

	work=$(mktemp -d)
	chmod 755 "$work"
	chown postgres "$work"
	mkdir "$work/files"
	cluster_init "$work" >"$work/initdb.log" 2>&1 || { sed 's/^/#   /' "$work/initdb.log"; not_ok "initdb"; finish_timed; }
	write_server_scripts
	if ! bash "$work/start.sh" >/dev/null 2>&1; then
		sed 's/^/#   /' "$work/server.log" | tail -n 20
		not_ok "starting a throwaway cluster on port $PORT"
		finish_timed
	fi

	"$PYTHON" "$HERE/live_test.py" --host "$work" --port "$PORT" --repo "$REPO" \
		--work "$work/files" --stop "$work/stop.sh" --start "$work/start.sh" >"$work/live.out" 2>&1
	status=$?
	grep -E '^(ok - |not ok - |#)' "$work/live.out"
	passed=$((passed + $(grep -c '^ok - ' "$work/live.out")))
	failed=$((failed + $(grep -c '^not ok - ' "$work/live.out")))
	if [ $status -ne 0 ] && ! grep -q '^not ok - ' "$work/live.out"; then
		not_ok "live_test.py stopped (exit $status)"
		grep -vE '^(ok - |not ok - |#)' "$work/live.out" | tail -n 20 | sed 's/^/#   /'
	fi
	finish_timed
}

main "$@"
