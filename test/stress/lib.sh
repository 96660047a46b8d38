# lib.sh: shared plumbing of the stress tests, sourced by run.sh.
#
# Owns what the parts share beyond test/lib.sh: a cluster NAME with the
# extension and a part's schema (in $WORK/NAME, made, restarted after a
# crash and removed with test/lib.sh's cluster helpers), the background
# processes the parts start, and small psql/pgbench wrappers.  The check
# counters and lines (ok, not_ok, check), the clusters, $WORK and
# ensure_postgresql (which sets $PGBIN) come from test/lib.sh, which run.sh
# sources first.  Nothing here knows what a part tests.

DBNAME=stress

# Background jobs still running: cleanup ends exactly these, by pid, if the
# run stops early.
BACKGROUND=()

# ---------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------

# check DESCRIPTION COMMAND... (test/lib.sh) passes when the command
# succeeds; the description carries the measured values either way.

# Runs commands separated by "--"; true when every one of them is.
all_of() {
	local command=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then
			"${command[@]}" || return 1
			command=()
		else
			command+=("$1")
		fi
		shift
	done
	[ ${#command[@]} -eq 0 ] || "${command[@]}"
}

# Comparisons that are false, not a shell error, when a value is not a
# number, e.g. when a query printed an error instead.
is_int() {
	[[ $1 =~ ^-?[0-9]+$ ]]
}

int_eq() {
	is_int "$1" && is_int "$2" && [ "$1" -eq "$2" ]
}

int_le() {
	is_int "$1" && is_int "$2" && [ "$1" -le "$2" ]
}

int_gt() {
	is_int "$1" && is_int "$2" && [ "$1" -gt "$2" ]
}

# ---------------------------------------------------------------------
# Setup, background jobs and cleanup
# ---------------------------------------------------------------------

# The server package of pg_config's major (test/lib.sh) ships pgbench too,
# which is all these tests need beyond coreutils and util-linux (runuser).
ensure_tools() {
	local tool
	ensure_postgresql || { echo "# could not install postgresql-${PG_MAJOR:-NN}"; return 1; }
	for tool in initdb pg_ctl psql pgbench; do
		[ -x "$PGBIN/$tool" ] || { echo "# missing $PGBIN/$tool"; return 1; }
	done
	command -v runuser >/dev/null || { echo "# missing runuser"; return 1; }
}

track_background() {
	BACKGROUND+=("$1")
}

# Waits for a tracked job, then forgets it so cleanup never signals a pid
# that may have been reused.
wait_background() {
	local pid=$1 status i
	wait "$pid"
	status=$?
	for i in "${!BACKGROUND[@]}"; do
		[ "${BACKGROUND[$i]}" = "$pid" ] && unset "BACKGROUND[$i]"
	done
	return $status
}

# The EXIT trap: ends our background jobs, then our clusters, removes $WORK.
cleanup() {
	local pid
	for pid in "${BACKGROUND[@]}"; do
		kill "$pid" 2>/dev/null
	done
	cleanup_clusters
}

# ---------------------------------------------------------------------
# Clusters
# ---------------------------------------------------------------------

# A running cluster in $WORK/<name>, on <port>, with the test database, the
# extension and <sql-file>; on failure, says why in "#" lines.  jit off:
# the 10M-row queries would cross jit_above_cost and the 1M-row ones not,
# and loading LLVM would then count as a memory difference.  The option
# holds across cluster_restart, which restarts with the last start's.
prepare_cluster() {
	local name=$1 port=$2 sql_file=$3 log=$WORK/$1-setup.log
	cluster_create "$WORK/$name" "$port" -c jit=off || return 1
	{
		cluster_sql "$WORK/$name" -d postgres -c "CREATE DATABASE $DBNAME" 2>&1 &&
			db "$name" "CREATE EXTENSION bloomfilter" &&
			db_file "$name" "$sql_file"
	} >"$log" && return 0
	grep -E "ERROR|FATAL|error" "$log" | head -n 3 | sed "s/^/# /"
	return 1
}

# ---------------------------------------------------------------------
# Clients
# ---------------------------------------------------------------------

# Runs SQL in the test database of cluster <name>, printing unaligned
# tuples.  Errors go to stdout as well, so a failing query fails its check
# with the error text in place of the value.
db() {
	local name=$1
	shift
	"$PGBIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 -h "$WORK/$name" \
		-p "$(cluster_port "$WORK/$name")" -U postgres -d "$DBNAME" -c "$*" 2>&1
}

db_file() {
	"$PGBIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 -h "$WORK/$1" \
		-p "$(cluster_port "$WORK/$1")" -U postgres -d "$DBNAME" -f "$2" 2>&1
}

# pgbench against cluster <name>; further arguments are pgbench's.
bench() {
	local name=$1
	shift
	"$PGBIN/pgbench" -n -h "$WORK/$name" -p "$(cluster_port "$WORK/$name")" \
		-U postgres "$@" "$DBNAME"
}

# A number from pgbench's summary, e.g. "number of failed transactions".
bench_number() {
	sed -n "s/^$2: \([0-9]*\).*/\1/p" "$1" | head -n 1
}

# The transaction count pgbench reports for one of several scripts.
bench_script_transactions() {
	sed -n "/^SQL script [0-9]*: .*$2\$/,/^SQL script/s/^ - \([0-9]*\) transactions .*/\1/p" \
		"$1" | head -n 1
}

# Starts pgbench in the background and tracks it; $! is pgbench itself, so
# cleanup can end it by pid.
bench_background() {
	local name=$1 out=$2
	shift 2
	"$PGBIN/pgbench" -n -h "$WORK/$name" -p "$(cluster_port "$WORK/$name")" \
		-U postgres "$@" "$DBNAME" >"$out" 2>&1 &
	track_background $!
}
