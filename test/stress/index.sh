# index.sh: part 5 of the stress tests, sourced by run.sh: the bloomfilter
# index under 8 pgbench writers and a reader, an immediate stop in the
# middle of the writes, and a streaming standby.  The index
# starts at a capacity of 2,000 keys, so the writers make it grow by
# segments while they race each other, the crash and the standby's replay.
#
# Redo runs with wal_consistency_checking, which compares every page it
# rebuilds from the index's WAL records with the page the primary wrote.
# After each event every committed key must be in the index: on the primary
# bloom_index_verify checks each live row's key; on the standby, after it
# has replayed the primary's WAL, a probe of every row's key must say
# "maybe present".  Keys of transactions cut short by the crash may stay in
# the index: those are false positives, which nothing here counts.

INDEX_PORT=5515
STANDBY_PORT=5516
INDEX_CLIENTS=8
INDEX_BENCH_SECONDS=30

# bloom_index_verify's answer: the live keys it checked, or its error.
verify_index() {
	db "$1" "SELECT bloom_index_verify('guarded_k')"
}

index_writes_and_crash() {
	local name=$1 out=$WORK/index-pgbench.txt bench_pid before after checked
	before=$(db "$name" "SELECT count(*) FROM guarded")
	bench_background "$name" "$out" -c $INDEX_CLIENTS -j 2 -T $INDEX_BENCH_SECONDS \
		-f "$STRESS_DIR/index_write.pgbench@4" -f "$STRESS_DIR/index_probe.pgbench@1"
	bench_pid=$!
	sleep 3
	check "index: server stopped with -m immediate during $INDEX_CLIENTS pgbench writers, came back through crash recovery" \
		crash_and_recover "$name" "$bench_pid" 1
	after=$(db "$name" "SELECT count(*) FROM guarded")
	check "index: committed rows after recovery: $after, up from $before" int_gt "$after" "$before"
	checked=$(verify_index "$name")
	check "index: bloom_index_verify after recovery finds every live key ($checked checked)" \
		int_eq "$checked" "$after"
	index_growth "$name"
}

# The writers grew the index, and it kept its target rate doing so.
index_growth() {
	local name=$1 segments hits
	segments=$(db "$name" "SELECT segments FROM bloom_index_info('guarded_k')")
	check "index: grew from 1 to $segments segments under concurrent writers" int_gt "$segments" 2
	# keys are positive: negative ones are absent.  The rate of a chain
	# whose segments are full nears its target by design (fpr/2 + fpr/4 +
	# ...), so the check allows the sample's own spread: three standard
	# deviations of a million draws at the target, 300.
	hits=$(db "$name" "SELECT count(*) FROM generate_series(-1, -1000000, -1) g
		WHERE bloom_index_contains('guarded_k', g::bigint)")
	check "index: measured false-positive rate after growing ($hits of 1000000) is within the target 0.01, up to the sample's spread" \
		int_le "$hits" 10300
}

# test/specs/bloomindex_prepared: a probing loop's copy must not outlive a key
# committed by COMMIT PREPARED.  It needs max_prepared_transactions, which
# make installcheck's cluster lacks, so it runs here.
index_prepared_commit() {
	local name=$1 iso=$WORK/iso regress
	regress=$("${PG_CONFIG:-pg_config}" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress
	db "$name" "ALTER SYSTEM SET max_prepared_transactions = 4" >/dev/null
	cluster_restart "$WORK/$name" >/dev/null 2>&1
	mkdir -p "$iso"
	chown postgres "$iso"
	check "index: a probe site's copy finds a key committed by COMMIT PREPARED (test/specs/bloomindex_prepared)" \
		"$regress" --use-existing --host="$WORK/$name" --port="$(cluster_port "$WORK/$name")" \
		--user=postgres --dbname="$DBNAME" --inputdir="$STRESS_DIR/.." --outputdir="$iso" \
		bloomindex_prepared
	[ -f "$iso/regression.diffs" ] && sed 's/^/# /' "$iso/regression.diffs" | head -n 40
}

# Sixteen writers race an index that starts at 100 keys: the inserts that
# find the last segment full must wait for the new one, not overfill the
# full one, so the chain keeps its target rate however fast it grows.
# Single-row inserts, then 50-row batches, each into its own table.
GROWTH_CLIENTS=16
GROWTH_SECONDS=5

index_concurrent_growth() {
	local name=$1 batch out hits rows
	for batch in 1 50; do
		db "$name" "CREATE SEQUENCE grow${batch}_seq;
			CREATE TABLE grow$batch (k bigint);
			CREATE INDEX grow${batch}_k ON grow$batch USING bloomfilter (k)
				WITH (capacity = 100, fpr = 0.01)" >/dev/null
		echo "INSERT INTO grow$batch SELECT nextval('grow${batch}_seq') FROM generate_series(1, $batch);" \
			>"$WORK/grow$batch.pgbench"
		out=$WORK/grow$batch.txt
		bench "$name" -c $GROWTH_CLIENTS -j 2 -T $GROWTH_SECONDS -f "$WORK/grow$batch.pgbench" >"$out" 2>&1
		rows=$(db "$name" "SELECT count(*) FROM grow$batch")
		hits=$(db "$name" "SELECT count(*) FROM generate_series(-1, -1000000, -1) g
			WHERE bloom_index_contains('grow${batch}_k', g::bigint)")
		check "index: $GROWTH_CLIENTS writers of $batch-row inserts grew a 100-key index to $rows keys in $(db "$name" "SELECT segments FROM bloom_index_info('grow${batch}_k')") segments; measured rate $hits of 1000000, within the target 0.01 up to the sample's spread" \
			all_of int_gt "$rows" 10000 -- int_le "$hits" 10300
		check "index: bloom_index_verify after the race finds every key" \
			int_eq "$(db "$name" "SELECT bloom_index_verify('grow${batch}_k')")" "$rows"
		db "$name" "DROP TABLE grow$batch; DROP SEQUENCE grow${batch}_seq" >/dev/null
	done
}

# A probe site that copied the index (after more probes than the index has
# pages) must not keep that copy past a commit its next snapshot sees:
# in READ COMMITTED a PL/pgSQL loop takes a new snapshot for every
# evaluation of its condition, within one top-level statement and one
# command.  A second session commits a key while the loop waits; the
# loop's same probe site must then find it.
index_copy_sees_commits() {
	local name=$1 out=$WORK/index-copy.txt key=777777777777777 waiter got
	db "$name" "DO \$\$
		DECLARE
			present boolean;
			probe_key bigint;
		BEGIN
			FOR i IN 1..5000 LOOP
				probe_key := CASE WHEN i = 5000 THEN $key ELSE -i END;
				IF i = 5000 THEN
					FOR tries IN 1..600 LOOP
						EXIT WHEN EXISTS (SELECT 1 FROM guarded WHERE k = $key);
						PERFORM pg_sleep(0.05);
					END LOOP;
				END IF;
				present := bloom_index_contains('guarded_k', probe_key);
			END LOOP;
			RAISE NOTICE 'found: %', present;
		END \$\$" >"$out" 2>&1 &
	waiter=$!
	sleep 2
	db "$name" "INSERT INTO guarded VALUES ($key)" >/dev/null
	wait "$waiter"
	got=$(grep -o 'found: [a-z]*' "$out")
	check "index: a probe site that copied the index finds a key committed before its next snapshot ($got)" \
		[ "$got" = "found: t" ]
}

# A physical standby of the primary, streaming over its socket; jit off
# as on the primary (prepare_cluster).
start_standby() {
	cluster_standby "$WORK/$1" "$WORK/$2" $STANDBY_PORT -c jit=off -c hot_standby=on
}

# Whether the standby has replayed everything the primary has written.
caught_up() {
	local target replayed tries
	target=$(db "$1" "SELECT pg_current_wal_lsn()")
	for tries in $(seq 1 120); do
		replayed=$(db "$2" "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn")
		[ "$replayed" = t ] && return 0
		sleep 0.5
	done
	return 1
}

index_standby() {
	local primary=$1 standby=index-standby out=$WORK/index-standby-pgbench.txt rows missing ahead
	check "index: streaming standby set up with pg_basebackup on port $STANDBY_PORT" \
		start_standby "$primary" "$standby" || return
	bench "$primary" -c $INDEX_CLIENTS -j 2 -T 3 -f "$STRESS_DIR/index_write.pgbench" >"$out" 2>&1
	check "index: standby replayed the primary's WAL after 3 s of $INDEX_CLIENTS writers" \
		caught_up "$primary" "$standby"
	rows=$(db "$standby" "SELECT count(*) FROM guarded")
	check "index: the standby has the primary's $(db "$primary" "SELECT count(*) FROM guarded") rows ($rows)" \
		int_eq "$rows" "$(db "$primary" "SELECT count(*) FROM guarded")"
	missing=$(db "$standby" "SELECT count(*) FROM guarded WHERE NOT bloom_index_contains('guarded_k', k)")
	check "index: on the standby, every committed key is found ($missing of $rows missing)" \
		int_eq "$missing" 0
	check "index: bloom_index_verify on the standby checks every row ($(verify_index "$standby") of $rows)" \
		int_eq "$(verify_index "$standby")" "$rows"
	# a copy made on a primary that is ahead of the standby it asks: kept
	# (an empty delta), and told the standby's position, never its own
	ahead=$(db "$standby" "SELECT c.upto <= pg_last_wal_replay_lsn(), c.reload, length(c.delta) > 0
		FROM bloom_index_snapshot('guarded_k') n,
		     bloom_index_changes('guarded_k', 'FFFFFFFF/0', n.timeline, n.build) c")
	check "index: on the standby, a position ahead keeps the copy, upto the replay position (upto not ahead|reload|delta: $ahead)" \
		test "$ahead" = "t|f|t"
	cluster_drop "$WORK/$standby"
}

run_index() {
	local name=index started=$SECONDS
	echo "# part 5: the bloomfilter index, crash and standby, on ports $INDEX_PORT and $STANDBY_PORT"
	if ! prepare_cluster "$name" $INDEX_PORT "$STRESS_DIR/index_schema.sql"; then
		not_ok "index: cluster with the extension and an indexed table set up"
		return
	fi
	# Each generic WAL record then carries the page as written, and redo
	# (crash recovery, the standby) stops with FATAL if it rebuilds another.
	check "index: wal_consistency_checking = generic on the primary (the standby inherits it)" \
		int_eq "$(db "$name" "ALTER SYSTEM SET wal_consistency_checking = 'generic'" >/dev/null;
			db "$name" "SELECT pg_reload_conf()::int")" 1

	index_writes_and_crash "$name"
	index_copy_sees_commits "$name"
	index_concurrent_growth "$name"
	index_prepared_commit "$name"
	index_standby "$name"
	cluster_drop "$WORK/$name"
	echo "# part 5 took $((SECONDS - started)) s"
}
