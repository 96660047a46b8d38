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
#   4. the update, run by a role that planted objects in the extension's
#      schema, calls none of them (planted.sql);
#   5. the updated values and indexes give the same answers, and so does
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

# sql DB ARGUMENT...: psql on the throwaway cluster, in database DB.
sql() {
	local db=$1
	shift
	cluster_sql "$WORK" -d "$db" "$@"
}

default_version() {
	sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/bloomfilter.control"
}

start() {
	make_workdir upgrade &&
		cluster_create "$WORK" "$PORT" -c fsync=off &&
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

# update_with_planted_objects: a role with no right but CREATE on a
# database installs the trusted extension at $OLDEST in a schema of its own,
# puts there an operator = and an unnest that fit the update script's
# arguments better than pg_catalog's, and updates.  The update runs as the
# bootstrap superuser: were the script to call them, they would record
# it.  The update must succeed and call neither.
update_with_planted_objects() {
	local fired
	sql postgres -c "CREATE ROLE planter" -c "CREATE DATABASE planted" \
		-c "GRANT CREATE ON DATABASE planted TO planter" >/dev/null &&
		sql planted -c "SET ROLE planter" -c "CREATE SCHEMA planter" \
			-c "CREATE EXTENSION bloomfilter VERSION '$OLDEST' SCHEMA planter" \
			-f "$HERE/planted.sql" -c "ALTER EXTENSION bloomfilter UPDATE" >/dev/null &&
		fired=$(sql planted -c "SELECT string_agg(DISTINCT what || ' as ' || who, ', ') FROM planter.fired") || return 1
	[ -z "$fired" ] && return 0
	echo "# the update ran: $fired"
	return 1
}

# no_catalog_writes: no statement of sql/*.sql inserts into, updates or
# deletes from a table of pg_catalog (CREATE OR REPLACE AGGREGATE, ALTER
# TYPE and the rest record what a hand-written row could get wrong).
no_catalog_writes() {
	! grep -EinH '^[[:space:]]*(INSERT[[:space:]]+INTO|UPDATE|DELETE[[:space:]]+FROM)[[:space:]]+(pg_catalog[.])?pg_' \
		"$REPO"/sql/*.sql
}

main() {
	cleanup_on_exit
	ensure_postgresql || { not_ok "the PostgreSQL server is installed"; finish; }
	local current
	current=$(default_version)
	echo "# from $OLDEST to $current, PostgreSQL $PG_MAJOR, port $PORT"
	if ! check "throwaway cluster with databases upgraded and fresh" start; then
		finish
	fi
	check "the shipped bloomfilter--1.0.sql is v1.0.0's" released_script_unchanged
	check "CREATE EXTENSION bloomfilter VERSION '$OLDEST' and its values" \
		sql upgraded -c "CREATE EXTENSION bloomfilter VERSION '$OLDEST'" -f "$HERE/values.sql"
	sql upgraded -f "$HERE/answers.sql" >"$WORK/answers.before" 2>&1
	sed "s/^/#   /" "$WORK/answers.before"
	check "answers at $OLDEST ($(wc -l <"$WORK/answers.before") lines)" \
		answered "$WORK/answers.before"
	check "pg_dump at $OLDEST" \
		"$PGBIN/pg_dump" -Fc -h "$WORK" -p "$PORT" -U postgres -d upgraded -f "$WORK/at-oldest.dump"

	check "ALTER EXTENSION bloomfilter UPDATE" sql upgraded -c "ALTER EXTENSION bloomfilter UPDATE"
	check "the updated extension is at version $current" \
		[ "$(sql upgraded -c "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")" = "$current" ]
	sql fresh -c "CREATE EXTENSION bloomfilter" >/dev/null
	sql upgraded -f "$HERE/objects.sql" >"$WORK/objects.upgraded" 2>&1
	sql fresh -f "$HERE/objects.sql" >"$WORK/objects.fresh" 2>&1
	check "the updated extension's $(wc -l <"$WORK/objects.upgraded") members and their definitions equal a fresh install's ($(wc -l <"$WORK/objects.fresh"))" \
		same_lines "members" "$WORK/objects.upgraded" "$WORK/objects.fresh"
	sql upgraded -f "$HERE/answers.sql" >"$WORK/answers.updated" 2>&1
	check "the values and indexes made at $OLDEST answer the same after the update" \
		same_lines "answers" "$WORK/answers.before" "$WORK/answers.updated"

	check "the update runs nothing a role planted in the extension's schema" \
		update_with_planted_objects
	check "no install or upgrade script writes a catalog table (PostgreSQL's DDL does)" \
		no_catalog_writes

	sql postgres -c "CREATE DATABASE restored_oldest" -c "CREATE DATABASE restored_updated" >/dev/null
	check "the $OLDEST dump restores into a database that installs $current" \
		"$PGBIN/pg_restore" -h "$WORK" -p "$PORT" -U postgres -d restored_oldest --exit-on-error "$WORK/at-oldest.dump"
	check "restored from the $OLDEST dump: extension at $current" \
		[ "$(sql restored_oldest -c "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")" = "$current" ]
	sql restored_oldest -f "$HERE/answers.sql" >"$WORK/answers.restored_oldest" 2>&1
	check "restored from the $OLDEST dump: the same answers" \
		same_lines "answers" "$WORK/answers.before" "$WORK/answers.restored_oldest"
	"$PGBIN/pg_dump" -Fc -h "$WORK" -p "$PORT" -U postgres -d upgraded -f "$WORK/updated.dump" &&
		check "the updated database's dump restores" \
			"$PGBIN/pg_restore" -h "$WORK" -p "$PORT" -U postgres -d restored_updated --exit-on-error "$WORK/updated.dump"
	sql restored_updated -f "$HERE/answers.sql" >"$WORK/answers.restored_updated" 2>&1
	check "restored from the updated database's dump: the same answers" \
		same_lines "answers" "$WORK/answers.before" "$WORK/answers.restored_updated"
	finish_timed
}

main "$@"
