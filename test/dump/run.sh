#!/bin/bash
# test/dump/run.sh: the largest bloom filter the extension accepts goes
# through pg_dump and pg_restore unchanged, and nothing larger is accepted.
#
# pg_dump moves a value as text, "bloom:" and base64, on one COPY line, and
# PostgreSQL allocates at most 1 GB - 1 for that line, in the server and in
# pg_dump alike; bloom.h caps a value at 750,000,000 bytes so that its text
# stays within 1,000,000,006 characters.  In a throwaway cluster of its own
# (port 5552, unix socket only) this:
#   1. takes from the sizing error how many values fit at 1%, and checks
#      that that many take the largest filter and one more is refused;
#   2. builds that filter with bloom_agg (749,999,992 bytes, a million
#      values in it) and checks its text form's length;
#   3. pg_dump -Fc of its database, pg_restore into a new one, and checks
#      that the restored filter has the same bytes and finds its values;
#   4. checks that input one base64 group, or one value byte, too long is
#      refused: 22P02 for text, 22P03 for bytea.
#
# Heavy, so it is not part of pg_regress: up to 4 GB in one backend (a
# COPY line or a text value of 1 GB is held twice, the decoded value
# twice), 2 GB in pg_dump, 2.5 GB of disk, 90 s.  Prints one "ok - ..." /
# "not ok - ..." line per check, "#" lines of context and, last,
# "N passed, N failed"; exits non-zero if a check failed.  Needs root and
# the extension installed (scripts/test.sh does both).
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
PORT=5552

# The largest value bloom.h allows: the header and as many 64-byte blocks
# as fit in 750,000,000 bytes; its text form, "bloom:" and base64.
LARGEST_BYTES=$((56 + (750000000 - 56) / 64 * 64))
LARGEST_TEXT=$((6 + (LARGEST_BYTES + 2) / 3 * 4))
VALUES_ADDED=1000000

# sql DB ARGUMENT...: psql on the throwaway cluster, in database DB.
sql() {
	local db=$1
	shift
	cluster_sql "$WORK" -d "$db" "$@"
}

# Seconds since the last call, for the "#" lines.
lap() {
	echo $((SECONDS - ${last_lap:-0}))
	last_lap=$SECONDS
}

start() {
	# Unlogged tables (pg_dump keeps them unlogged) spare 1.5 GB of WAL.
	make_workdir dump &&
		cluster_create "$WORK" "$PORT" -c fsync=off -c synchronous_commit=off -c full_page_writes=off &&
		sql postgres -c "CREATE DATABASE source" &&
		sql postgres -c "CREATE DATABASE restored" &&
		sql source -c "CREATE EXTENSION bloomfilter" &&
		sql source -c "CREATE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS \$\$
			BEGIN EXECUTE query; RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END \$\$"
}

# How many values fit at 1%, as the sizing error says; empty if it did not.
max_capacity() {
	sql source -v VERBOSITY=default -c "SELECT bloom_params(1000000000000000, 0.01)" 2>&1 |
		sed -n 's/^DETAIL:  At that rate at most \([0-9][0-9]*\) values fit.*/\1/p'
}

sizing_checks() {
	local got
	got=$(sql source -c "SELECT bytes FROM bloom_params($capacity, 0.01)")
	check "$capacity values at 1% take the largest filter, $LARGEST_BYTES bytes (got $got)" \
		[ "$got" = "$LARGEST_BYTES" ]
	got=$(sql source -c "SELECT sqlstate_of('SELECT bloom_params($((capacity + 1)), 0.01)'),
			sqlstate_of('SELECT bloom_empty($((capacity + 1)), 0.01)'),
			sqlstate_of('SELECT bloom_agg(i, $((capacity + 1)), 0.01) FROM generate_series(1, 3) i')")
	check "one value more is refused by bloom_params, bloom_empty and bloom_agg: 54000 (got $got)" \
		[ "$got" = "54000|54000|54000" ]
}

build() {
	sql source -c "CREATE UNLOGGED TABLE largest (id int PRIMARY KEY, note text, f bloom)" &&
		sql source -c "INSERT INTO largest
			SELECT 1, 'the largest filter', bloom_agg(i, $capacity, 0.01)
			FROM generate_series(1, $VALUES_ADDED) AS i" &&
		sql source -c "INSERT INTO largest VALUES (2, 'a small one', bloom_add(bloom_empty(10), 7))" &&
		sql source -c "CREATE TABLE qfilters AS
			SELECT qfilter_agg(i % 50000) AS f FROM generate_series(1, 100000) AS i" &&
		sql source -c "CREATE TABLE chains AS
			SELECT bloom_agg(i, 1000, 0.01, 2) AS f FROM generate_series(1, 20000) AS i" &&
		sql source -c "CREATE TABLE guarded AS SELECT generate_series(1, 30000) AS k" &&
		sql source -c "CREATE INDEX guarded_k ON guarded USING bloomfilter ((k * 2))
			WITH (capacity = 5000, fpr = 0.001, growth = 2)"
}

source_checks() {
	local got
	got=$(sql source -c "SELECT (bloom_info(f)).bytes, (bloom_info(f)).inserted FROM largest WHERE id = 1")
	check "the stored filter has $LARGEST_BYTES bytes and $VALUES_ADDED values (got $got)" \
		[ "$got" = "$LARGEST_BYTES|$VALUES_ADDED" ]
	got=$(sql source -c "SELECT octet_length(f::text) FROM largest WHERE id = 1")
	check "its text form has $LARGEST_TEXT characters, within 1 GB with room for a COPY line (got $got)" \
		[ "$got" = "$LARGEST_TEXT" ]
	source_md5=$(sql source -c "SELECT md5(f::bytea) FROM largest WHERE id = 1")
	source_qfilter_md5=$(sql source -c "SELECT md5(f::bytea) FROM qfilters")
	source_chain_md5=$(sql source -c "SELECT md5(f::bytea) FROM chains")
}

dump_and_restore() {
	local status
	# -Z 1: the filter is mostly zero bits; faster compression does as well
	/usr/bin/time -f "%M" -o "$WORK/dump.rss" \
		"$PGBIN/pg_dump" -Fc -Z 1 -h "$WORK" -p "$PORT" -U postgres -d source \
		-f "$WORK/source.dump" 2>"$WORK/dump.err"
	status=$?
	check "pg_dump -Fc of the database with the largest filter ($(lap) s, $(($(cat "$WORK/dump.rss" 2>/dev/null || echo 0) / 1024)) MB)" \
		[ "$status" -eq 0 ] || { sed 's/^/#   /' "$WORK/dump.err" | tail -n 10; return 1; }
	/usr/bin/time -f "%M" -o "$WORK/restore.rss" \
		"$PGBIN/pg_restore" --exit-on-error -h "$WORK" -p "$PORT" -U postgres -d restored \
		"$WORK/source.dump" 2>"$WORK/restore.err"
	status=$?
	check "pg_restore into a fresh database ($(lap) s, $(($(cat "$WORK/restore.rss" 2>/dev/null || echo 0) / 1024)) MB)" \
		[ "$status" -eq 0 ] || { sed 's/^/#   /' "$WORK/restore.err" | tail -n 10; return 1; }
}

restored_checks() {
	local got
	got=$(sql restored -c "SELECT md5(f::bytea) FROM largest WHERE id = 1")
	check "the restored filter has the same bytes (md5 $got)" \
		[ -n "$source_md5" ] && [ "$got" = "$source_md5" ]
	got=$(sql restored -c "SELECT bloom_contains_all(f, ARRAY[1, 2, 500000, $VALUES_ADDED]),
			(SELECT bool_and(bloom_contains(s.f, 7)) FROM largest s WHERE id = 2), note
		FROM largest WHERE id = 1")
	check "it finds its values, as does the small one beside it (got $got)" \
		[ "$got" = "t|t|the largest filter" ]
	got=$(sql restored -c "SELECT md5(f::bytea) = '$source_qfilter_md5',
			qfilter_count(f, 49999), (SELECT bool_and(f @> g) FROM generate_series(0, 49999) g)
		FROM qfilters")
	check "a restored qfilter has the same bytes, counts and keys (got $got)" \
		[ "$got" = "t|2|t" ]
	got=$(sql restored -c "SELECT md5(f::bytea) = '$source_chain_md5', (bloom_info(f)).segments,
			(SELECT bool_and(f @> g) FROM generate_series(1, 20000) g)
		FROM chains")
	check "a restored growing filter has the same bytes, segments and keys (got $got)" \
		[ "$got" = "t|5|t" ]
	# recreated from its definition: an expression index with its options,
	# grown by its build to hold the table (5,000 + 10,000 + 20,000 keys)
	got=$(sql restored -c "SELECT capacity, target_fpr, segments, bloom_index_verify('guarded_k'),
			bloom_index_contains('guarded_k', 60000)
		FROM bloom_index_info('guarded_k')")
	check "a bloomfilter index is recreated by pg_restore, with its options and every key (got $got)" \
		[ "$got" = "35000|0.001|3|30000|t" ]
}

too_large_input() {
	local got
	# One base64 group more than the longest text a value may have; cast
	# directly, as EXECUTE of a literal would copy the gigabyte again.
	got=$(sql source -c "CREATE FUNCTION pg_temp.text_state() RETURNS text LANGUAGE plpgsql AS \$\$
				BEGIN PERFORM ('bloom:' || repeat('A', 1000000004))::bloom;
				RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END \$\$;
			SELECT pg_temp.text_state()")
	check "text input one base64 group beyond 750,000,000 bytes is refused: 22P02 (got $got)" \
		[ "$got" = "22P02" ]
	got=$(sql source -c "CREATE TEMP TABLE t AS
				SELECT f::bytea || '\\x000000000000000000'::bytea AS b FROM largest WHERE id = 1;
			CREATE FUNCTION pg_temp.bytea_state() RETURNS text LANGUAGE plpgsql AS \$\$
				BEGIN PERFORM b::bloom FROM t;
				RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END \$\$;
			SELECT pg_temp.bytea_state(), octet_length(b) FROM t")
	check "a bytea of the largest value and 9 bytes more ($((LARGEST_BYTES + 9)) bytes) is refused: 22P03 (got $got)" \
		[ "$got" = "22P03|$((LARGEST_BYTES + 9))" ]
}

main() {
	cleanup_on_exit
	# The server of pg_config's major (sets PGBIN), and GNU time for the
	# peak memory of pg_dump and pg_restore.
	if ! ensure_postgresql time; then
		not_ok "the PostgreSQL server and GNU time are installed"
		finish_timed
	fi
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	if ! start; then
		not_ok "starting a throwaway cluster on port $PORT"
		finish_timed
	fi
	capacity=$(max_capacity)
	check "the sizing error says how many values fit at 1% (${capacity:-nothing})" \
		[ -n "$capacity" ] || finish_timed
	sizing_checks
	lap >/dev/null
	if ! build; then
		not_ok "building the largest filter"
		tail -n 20 "$WORK/server.log" | sed 's/^/#   /'
		finish_timed
	fi
	echo "# built the largest filter in $(lap) s"
	source_checks
	lap >/dev/null
	dump_and_restore && restored_checks
	too_large_input
	finish_timed
}

main "$@"
