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
# extension installed (scripts/test.sh does both).  Takes under 10 s.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
PORT=5543

sql() {
	cluster_sql "$WORK" "$@"
}

main() {
	cleanup_on_exit
	if ! ensure_postgresql; then	# the server of pg_config's major; sets PGBIN
		not_ok "the PostgreSQL server is installed"
		finish_timed
	fi
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	if ! make_workdir stats || ! cluster_create "$WORK" "$PORT" -c fsync=off; then
		not_ok "starting a throwaway cluster on port $PORT"
		finish_timed
	fi
	if ! sql -c "CREATE EXTENSION bloomfilter" >"$WORK/create.log" 2>&1; then
		not_ok "CREATE EXTENSION bloomfilter"
		sed 's/^/#   /' "$WORK/create.log"
		finish_timed
	fi

	sql -f "$HERE/rates.sql" >"$WORK/rates.out" 2>"$WORK/rates.err"
	local status=$?
	count_checks "$WORK/rates.out"
	if [ "$status" -ne 0 ]; then
		not_ok "rates.sql stopped with an error"
		sed 's/^/#   /' "$WORK/rates.err" | tail -n 20
	fi
	finish_timed
}

main "$@"
