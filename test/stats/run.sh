#!/bin/bash
# test/stats/run.sh: the statistical promise of the sizing, measured in a
# throwaway PostgreSQL 15 cluster of its own with the installed extension:
# filled to capacity, at least 95% of single filters are at or below their
# target rate (rates.sql says how, and the thresholds), and the margin
# keeps a million values at 1% within 10 bits each.
#
# Prints one "ok - ..."/"not ok - ..." line per check, "#" lines of
# context and, last, "N passed, N failed"; exits non-zero if a check
# failed.  Needs root (the cluster runs as the postgres user) and the
# extension installed (scripts/test.sh does both).  Takes about 15 s.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
PORT=5543
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

sql() {
	PGOPTIONS="-c client_min_messages=warning" \
		"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$work" -p "$PORT" -U postgres "$@"
}

main() {
	cleanup_on_exit cleanup
	if ! ensure_postgresql; then	# the server of pg_config's major; sets PGBIN
		not_ok "the PostgreSQL server is installed"
		finish_timed
	fi
	if [ ! -f "$("$PGBIN/pg_config" --sharedir)/extension/bloomfilter.control" ]; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	work=$(mktemp -d)
	chmod 755 "$work"
	chown postgres "$work"
	if ! cluster_init "$work" >"$work/initdb.log" 2>&1 ||
		! cluster_start "$work" "$PORT" -c fsync=off >"$work/start.log" 2>&1; then
		not_ok "starting a throwaway cluster on port $PORT"
		sed 's/^/#   /' "$work/initdb.log" "$work/start.log" "$work/server.log" 2>/dev/null | tail -n 20
		finish_timed
	fi
	if ! sql -c "CREATE EXTENSION bloomfilter" >"$work/create.log" 2>&1; then
		not_ok "CREATE EXTENSION bloomfilter"
		sed 's/^/#   /' "$work/create.log"
		finish_timed
	fi

	sql -f "$HERE/rates.sql" >"$work/rates.out" 2>"$work/rates.err"
	local status=$?
	cat "$work/rates.out"
	passed=$((passed + $(grep -c '^ok - ' "$work/rates.out")))
	failed=$((failed + $(grep -c '^not ok - ' "$work/rates.out")))
	if [ "$status" -ne 0 ]; then
		not_ok "rates.sql stopped with an error"
		sed 's/^/#   /' "$work/rates.err" | tail -n 20
	fi
	finish_timed
}

main "$@"
