# recipes.sh: part 4 of the stress tests, sourced by run.sh.
#
# The cookbook's recipe 6 keeps a filter of users' ids in sync with a
# statement-level AFTER INSERT trigger and rebuilds it with one bloom_agg.
# Here pgbench clients insert users (each INSERT fires the trigger) while
# another client rebuilds the filter in a loop; after each rebuild, and at
# the end, every committed id (the users table is the truth: a row is there
# exactly when its transaction committed) must be in the filter.
#
# Run twice on one cluster.  First with the rebuild the cookbook used to
# print, a lone UPDATE: its bloom_agg subquery runs once, under the
# statement's snapshot, and when the UPDATE has waited for an inserter's
# lock on the filter row, EvalPlanQual writes that stale aggregate over the
# ids the inserter's trigger added.  That run only reports what it lost,
# since a race may happen not to hit.  Then with the cookbook's rebuild
# (lock the filter row, then UPDATE with a new snapshot), which must lose
# nothing.

RECIPES_PORT=5514
RECIPES_INSERTERS=4
# Per run; two runs and the cluster's setup stay under half a minute.
RECIPES_SECONDS=8
# Above the ids the inserters commit in one run, so that the filter never
# overfills (an overfilled filter only warns, but keeps its keys).
RECIPES_CAPACITY=100000
# Users already there when a run starts, as in the cookbook's Setup: a
# rebuild's bloom_agg over no rows would be NULL.
RECIPES_SEED_USERS=1000

# The schema of the cookbook's Setup and recipe 6, with a sequence for the
# inserters' ids and the ids a check after a rebuild found missing.
write_recipes_files() {
	cat >"$WORK/recipes-schema.sql" <<-EOF
		CREATE TABLE users (
		    id    bigint PRIMARY KEY,
		    email text NOT NULL
		);
		CREATE SEQUENCE user_ids;

		CREATE TABLE filters (
		    name text PRIMARY KEY,
		    f    bloom NOT NULL
		);
		INSERT INTO filters VALUES ('users', bloom_empty($RECIPES_CAPACITY, 0.01));

		CREATE FUNCTION users_filter_add() RETURNS trigger
		LANGUAGE plpgsql AS \$\$
		BEGIN
		    UPDATE filters SET f = bloom_add_all(f, ARRAY(SELECT id FROM new_rows))
		    WHERE name = 'users';
		    RETURN NULL;
		END \$\$;

		CREATE TRIGGER users_filter_add
		    AFTER INSERT ON users
		    REFERENCING NEW TABLE AS new_rows
		    FOR EACH STATEMENT EXECUTE FUNCTION users_filter_add();

		CREATE TABLE missing_after_rebuild (id bigint PRIMARY KEY);
	EOF

	# One INSERT statement of 1 to 20 rows: one trigger call, one commit.
	cat >"$WORK/recipes-insert.pgbench" <<-'EOF'
		\set n random(1, 20)
		INSERT INTO users (id, email)
		SELECT nextval('user_ids'), 'user@example.com' FROM generate_series(1, :n);
	EOF

	# Right after a rebuild commits, in one snapshot: the committed ids the
	# filter lacks.  Only the next rebuild could put them back, and it runs
	# after this statement in the same client.
	cat >"$WORK/recipes-missing.sql" <<-'EOF'
		INSERT INTO missing_after_rebuild
		SELECT u.id FROM users u, filters f
		 WHERE f.name = 'users' AND NOT f.f @> u.id
		ON CONFLICT DO NOTHING;
	EOF

	# The rebuild as the cookbook printed it before the fix.
	{
		cat <<-EOF
			UPDATE filters SET f = (SELECT bloom_agg(id, $RECIPES_CAPACITY, 0.01) FROM users)
			WHERE name = 'users';
		EOF
		cat "$WORK/recipes-missing.sql"
	} >"$WORK/recipes-rebuild-old.pgbench"

	# The rebuild as the cookbook prints it now.
	{
		cat <<-EOF
			BEGIN;
			SELECT 1 FROM filters WHERE name = 'users' FOR UPDATE;
			UPDATE filters SET f = (SELECT bloom_agg(id, $RECIPES_CAPACITY, 0.01) FROM users)
			WHERE name = 'users';
			COMMIT;
		EOF
		cat "$WORK/recipes-missing.sql"
	} >"$WORK/recipes-rebuild-new.pgbench"
}

# Set by recipes_round.
RECIPES_INSERT_STATUS=
RECIPES_REBUILD_STATUS=
RECIPES_COMMITTED=
RECIPES_MISSING_AFTER=
RECIPES_MISSING_END=
RECIPES_IN_SYNC=

# recipes_round NAME LABEL REBUILD_SCRIPT: empty tables, then inserters and
# the rebuild loop for RECIPES_SECONDS; sets the RECIPES_ results.  Its
# pgbench outputs are $WORK/recipes-LABEL-{insert,rebuild}.txt.
recipes_round() {
	local name=$1 label=$2 rebuild=$3 bench_pid
	db "$name" "TRUNCATE users, missing_after_rebuild;
		UPDATE filters SET f = bloom_empty($RECIPES_CAPACITY, 0.01) WHERE name = 'users';
		INSERT INTO users (id, email)
		SELECT nextval('user_ids'), 'user@example.com' FROM generate_series(1, $RECIPES_SEED_USERS)" >/dev/null
	bench_background "$name" "$WORK/recipes-$label-insert.txt" \
		-c $RECIPES_INSERTERS -j 2 -T $RECIPES_SECONDS -f "$WORK/recipes-insert.pgbench"
	bench_pid=$!
	bench "$name" -c 1 -T $RECIPES_SECONDS -f "$rebuild" \
		>"$WORK/recipes-$label-rebuild.txt" 2>&1
	RECIPES_REBUILD_STATUS=$?
	wait_background "$bench_pid"
	RECIPES_INSERT_STATUS=$?
	RECIPES_COMMITTED=$(db "$name" "SELECT count(*) FROM users")
	RECIPES_MISSING_AFTER=$(db "$name" "SELECT count(*) FROM missing_after_rebuild")
	RECIPES_MISSING_END=$(db "$name" "SELECT count(*) FROM users u, filters f
		WHERE f.name = 'users' AND NOT f.f @> u.id")
	RECIPES_IN_SYNC=$(db "$name" "SELECT bloom_contains_all(f, ARRAY(SELECT id FROM users))
		FROM filters WHERE name = 'users'")
}

# One pgbench of the run: every client ran to the end without an error (a
# deadlock or a NULL filter would show here).
check_recipes_bench() {
	local out=$1 status=$2 what=$3 processed failures aborted errors
	processed=$(bench_number "$out" "number of transactions actually processed")
	failures=$(bench_number "$out" "number of failed transactions")
	aborted=$(grep -c "client [0-9]* aborted" "$out")
	errors=$(grep -c "ERROR:" "$out")
	check "recipes: $what: ${processed:-?} transactions in $RECIPES_SECONDS s, ${failures:-?} failed, $errors ERROR messages, exit status $status" \
		all_of int_gt "${processed:-x}" 0 -- int_eq "${failures:-x}" 0 -- \
		int_eq "$aborted" 0 -- int_eq "$errors" 0 -- int_eq "$status" 0
	[ "$errors" -eq 0 ] || grep "ERROR:" "$out" | sort | uniq -c | head -n 3 | sed 's/^/# /'
}

run_recipes() {
	local name=recipes started=$SECONDS rebuilds
	echo "# part 4: the cookbook's sync recipes, $RECIPES_INSERTERS inserters and a rebuild loop on port $RECIPES_PORT"
	write_recipes_files
	if ! prepare_cluster "$name" $RECIPES_PORT "$WORK/recipes-schema.sql"; then
		not_ok "recipes: cluster with the extension and the recipe's schema set up"
		return
	fi

	recipes_round "$name" old "$WORK/recipes-rebuild-old.pgbench"
	rebuilds=$(bench_number "$WORK/recipes-old-rebuild.txt" "number of transactions actually processed")
	echo "# old recipe: ${RECIPES_MISSING_AFTER:-?} of ${RECIPES_COMMITTED:-?} committed ids found missing right after one of its ${rebuilds:-?} rebuilds (${RECIPES_MISSING_END:-?} at the end)"

	recipes_round "$name" new "$WORK/recipes-rebuild-new.pgbench"
	check_recipes_bench "$WORK/recipes-new-insert.txt" "$RECIPES_INSERT_STATUS" \
		"$RECIPES_INSERTERS inserters"
	check_recipes_bench "$WORK/recipes-new-rebuild.txt" "$RECIPES_REBUILD_STATUS" \
		"the rebuild loop"
	rebuilds=$(bench_number "$WORK/recipes-new-rebuild.txt" "number of transactions actually processed")
	check "recipes: ${RECIPES_MISSING_AFTER:-?} of ${RECIPES_COMMITTED:-?} committed ids missing from the filter right after one of ${rebuilds:-?} rebuilds" \
		all_of int_eq "${RECIPES_MISSING_AFTER:-x}" 0 -- int_gt "${RECIPES_COMMITTED:-x}" 0
	check "recipes: ${RECIPES_MISSING_END:-?} of ${RECIPES_COMMITTED:-?} committed ids missing at the end (bloom_contains_all: ${RECIPES_IN_SYNC:-?})" \
		all_of int_eq "${RECIPES_MISSING_END:-x}" 0 -- [ "$RECIPES_IN_SYNC" = t ]
	cluster_drop "$WORK/$name"
	echo "# part 4 took $((SECONDS - started)) s"
}
