#!/bin/bash
# test/upgrade/run.sh: a database made with the oldest released version of
# the extension reaches the current one with ALTER EXTENSION ... UPDATE,
# and then is what a fresh install is and answers what it answered.
#
# In a throwaway cluster of its own (port 5561, unix socket only):
#   1. database "upgraded": CREATE EXTENSION bloomfilter VERSION '1.0' from
#      the released install script (checked against the v1.0.0 tag when git
#      has it), the values of values.sql, and their answers (answers.sql);
#   2. a pg_dump of it while still at 1.0;
#   3. ALTER EXTENSION bloomfilter UPDATE: the default version is reached,
#      and the extension's members with their definitions (objects.sql)
#      equal those of database "fresh", made with CREATE EXTENSION;
#   4. the updated values and indexes give the same answers, and so does
#      the 1.0 dump restored into a new database (which installs the
#      current version, as a restore into an upgraded server does), and a
#      dump of the updated database restored likewise.
# Prints one "ok - ..." / "not ok - ..." line per check, "#" lines of
# context and, last, "N passed, N failed"; exits non-zero if a check
# failed.  Needs root and the extension installed (scripts/test.sh does
# both).
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5561
OLDEST=1.0
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

# sql DB ARGUMENT...: psql on the throwaway cluster, unaligned, no headers,
# errors fatal.
sql() {
	local db=$1
	shift
	PGOPTIONS="-c client_min_messages=warning" \
		"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$work" -p "$PORT" -U postgres -d "$db" "$@"
}

default_version() {
	sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/bloomfilter.control"
}

start() {
	work=$(mktemp -d)
	chmod 755 "$work"
	chown postgres "$work"
	cluster_init "$work" >"$work/initdb.log" 2>&1 &&
		cluster_start "$work" "$PORT" -c fsync=off >"$work/start.log" 2>&1 &&
		for db in upgraded fresh; do sql postgres -c "CREATE DATABASE $db" || return 1; done
}

# The shipped 1.0 install script is the one v1.0.0 released.
released_script_unchanged() {
	local released
	if ! git -C "$REPO" rev-parse -q --verify "refs/tags/v1.0.0" >/dev/null 2>&1; then
		echo "# no v1.0.0 tag in this clone: the shipped 1.0 script is taken as released"
		return 0
	fi
	released=$(git -C "$REPO" show "v1.0.0:bloomfilter--1.0.sql") &&
		[ "$released" = "$(cat "$REPO/sql/bloomfilter--1.0.sql")" ]
}

# answered FILE: answers.sql's output, every query of it.
answered() {
	[ "$(grep -c . "$1")" -ge 14 ] && ! grep -q ERROR "$1"
}

# same_lines NAME FILE_A FILE_B: equal, or the difference on "#" lines.
same_lines() {
	if cmp -s "$2" "$3"; then
		return 0
	fi
	echo "# $1 differ (< $2, > $3):"
	diff "$2" "$3" | head -40 | sed 's/^/#   /'
	return 1
}

main() {
	cleanup_on_exit cleanup
	ensure_postgresql || { echo "0 passed, 1 failed"; exit 1; }
	local current
	current=$(default_version)
	echo "# from $OLDEST to $current, PostgreSQL $PG_MAJOR, port $PORT"
	if ! check "throwaway cluster with databases upgraded and fresh" start; then
		finish
	fi
	check "the shipped bloomfilter--1.0.sql is v1.0.0's" released_script_unchanged
	check "CREATE EXTENSION bloomfilter VERSION '$OLDEST' and its values" \
		sql upgraded -c "CREATE EXTENSION bloomfilter VERSION '$OLDEST'" -f "$HERE/values.sql"
	sql upgraded -f "$HERE/answers.sql" >"$work/answers.before" 2>&1
	sed "s/^/#   /" "$work/answers.before"
	check "answers at $OLDEST ($(wc -l <"$work/answers.before") lines)" \
		answered "$work/answers.before"
	check "pg_dump at $OLDEST" \
		"$PGBIN/pg_dump" -Fc -h "$work" -p "$PORT" -U postgres -d upgraded -f "$work/at-oldest.dump"

	check "ALTER EXTENSION bloomfilter UPDATE" sql upgraded -c "ALTER EXTENSION bloomfilter UPDATE"
	check "the updated extension is at version $current" \
		[ "$(sql upgraded -c "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")" = "$current" ]
	sql fresh -c "CREATE EXTENSION bloomfilter" >/dev/null
	sql upgraded -f "$HERE/objects.sql" >"$work/objects.upgraded" 2>&1
	sql fresh -f "$HERE/objects.sql" >"$work/objects.fresh" 2>&1
	check "the updated extension's $(wc -l <"$work/objects.upgraded") members and their definitions equal a fresh install's ($(wc -l <"$work/objects.fresh"))" \
		same_lines "members" "$work/objects.upgraded" "$work/objects.fresh"
	sql upgraded -f "$HERE/answers.sql" >"$work/answers.updated" 2>&1
	check "the values and indexes made at $OLDEST answer the same after the update" \
		same_lines "answers" "$work/answers.before" "$work/answers.updated"

	sql postgres -c "CREATE DATABASE restored_oldest" -c "CREATE DATABASE restored_updated" >/dev/null
	check "the $OLDEST dump restores into a database that installs $current" \
		"$PGBIN/pg_restore" -h "$work" -p "$PORT" -U postgres -d restored_oldest --exit-on-error "$work/at-oldest.dump"
	check "restored from the $OLDEST dump: extension at $current" \
		[ "$(sql restored_oldest -c "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")" = "$current" ]
	sql restored_oldest -f "$HERE/answers.sql" >"$work/answers.restored_oldest" 2>&1
	check "restored from the $OLDEST dump: the same answers" \
		same_lines "answers" "$work/answers.before" "$work/answers.restored_oldest"
	"$PGBIN/pg_dump" -Fc -h "$work" -p "$PORT" -U postgres -d upgraded -f "$work/updated.dump" &&
		check "the updated database's dump restores" \
			"$PGBIN/pg_restore" -h "$work" -p "$PORT" -U postgres -d restored_updated --exit-on-error "$work/updated.dump"
	sql restored_updated -f "$HERE/answers.sql" >"$work/answers.restored_updated" 2>&1
	check "restored from the updated database's dump: the same answers" \
		same_lines "answers" "$work/answers.before" "$work/answers.restored_updated"
	echo "# runtime: $(($(date +%s) - STARTED)) s"
	finish
}

main "$@"
