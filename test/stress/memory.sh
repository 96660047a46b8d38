# memory.sh: part 3 of the stress tests, sourced by run.sh.
#
# Runs each query once with N and once with 10 N calls of a bloom function,
# each in a fresh backend, sampling that backend's VmRSS from /proc in the
# background.  The peak of the long run (VmHWM, read while the session is
# still open, or the largest sample if higher) may exceed the short run's by
# at most MEMORY_SLACK_KB: a leak of one byte per call into memory that
# lives for the whole query would add 9 MB.
#
# Then the bound of a self-sizing bloom_agg and a qfilter_agg that spill
# their hashes to disk: the peak over a baseline's, the same way, against
# work_mem + the filter (check_spill_memory).

MEMORY_PORT=5513
MEMORY_SLACK_KB=4096
MEMORY_SAMPLE_SECONDS=0.05

# Set by measure_query.
MEASURED_RESULT=
MEASURED_PEAK_KB=
MEASURED_HWM_KB=
MEASURED_RSS_MAX_KB=
MEASURED_SAMPLES=

# A "VmXXX:  1234 kB" field of /proc/<pid>/status, in kB.
status_kb() {
	local pid=$1 field=$2 key value
	[ -r "/proc/$pid/status" ] || return
	while read -r key value _; do
		if [ "$key" = "$field:" ]; then
			echo "$value"
			return
		fi
	done <"/proc/$pid/status"
}

# Samples VmRSS of <pid> until <stopfile> appears or the process ends, then
# prints "largest-sample sample-count".
sample_rss() {
	local pid=$1 stopfile=$2 largest=0 count=0 rss
	while [ ! -e "$stopfile" ] && [ -e "/proc/$pid/status" ]; do
		rss=$(status_kb "$pid" VmRSS)
		if is_int "$rss"; then
			count=$((count + 1))
			[ "$rss" -gt "$largest" ] && largest=$rss
		fi
		sleep "$MEMORY_SAMPLE_SECONDS"
	done
	echo "$largest $count"
}

# Sends a line to the psql coprocess.  psql may have ended (an error, with
# ON_ERROR_STOP), so SIGPIPE is ignored meanwhile: the write fails instead
# of ending this script.  (A subshell cannot help: it has no coproc fds.)
session_send() {
	local status=1
	trap "" PIPE
	[ -n "${SESSION[1]:-}" ] && { echo "$1" >&"${SESSION[1]}"; } 2>/dev/null && status=0
	trap - PIPE
	return $status
}

# Reads one line of psql output into variable <name>, waiting <seconds>.
session_read() {
	[ -n "${SESSION[0]:-}" ] && read -r -t "$2" "$1" <&"${SESSION[0]}"
}

# Runs <sql> (one statement returning one value) in a fresh session of
# cluster <name> while sampling its backend.
measure_query() {
	local name=$1 sql=$2 pid="" session_pid sampler stopfile=$WORK/sampler.stop
	MEASURED_RESULT="" MEASURED_PEAK_KB="" MEASURED_HWM_KB=""
	MEASURED_RSS_MAX_KB="" MEASURED_SAMPLES=""
	rm -f "$stopfile"
	coproc SESSION {
		"$PGBIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 -h "$WORK/$name" \
			-p "$(cluster_port "$WORK/$name")" -U postgres -d "$DBNAME" 2>&1
	}
	# shellcheck disable=SC2153 # coproc sets SESSION_PID
	session_pid=$SESSION_PID
	track_background "$session_pid"
	session_send "SELECT pg_backend_pid();"
	session_read pid 30
	if ! is_int "$pid"; then
		MEASURED_RESULT="no session ($pid)"
		kill "$session_pid" 2>/dev/null
		wait_background "$session_pid"
		return
	fi
	sample_rss "$pid" "$stopfile" >"$WORK/sampler.out" &
	sampler=$!
	track_background "$sampler"
	session_send "$sql"
	# The query is done when its one-line result arrives; the backend is
	# still there, so its peak can be read now.
	session_read MEASURED_RESULT 300 || kill "$session_pid" 2>/dev/null
	MEASURED_HWM_KB=$(status_kb "$pid" VmHWM)
	touch "$stopfile"
	wait_background "$sampler"
	read -r MEASURED_RSS_MAX_KB MEASURED_SAMPLES <"$WORK/sampler.out"
	session_send "\\q"
	wait_background "$session_pid"
	# The kernel updates VmHWM lazily, so a sample can be above it.
	MEASURED_PEAK_KB=$MEASURED_HWM_KB
	int_gt "$MEASURED_RSS_MAX_KB" "$MEASURED_HWM_KB" &&
		MEASURED_PEAK_KB=$MEASURED_RSS_MAX_KB
}

# Runs <template> with :N replaced by <small>, then by <large>; checks both
# results with <result-check> (called with N and the result), and that the
# peaks differ by at most MEMORY_SLACK_KB.
compare_memory() {
	local name=$1 label=$2 template=$3 small=$4 large=$5 result_check=$6
	local small_result small_peak small_hwm small_rss small_samples growth="?"
	measure_query "$name" "${template//:N/$small}"
	small_result=$MEASURED_RESULT small_peak=$MEASURED_PEAK_KB
	small_hwm=$MEASURED_HWM_KB small_rss=$MEASURED_RSS_MAX_KB
	small_samples=$MEASURED_SAMPLES
	measure_query "$name" "${template//:N/$large}"

	echo "# $label, $small calls: VmHWM ${small_hwm:-?} kB, largest VmRSS sample ${small_rss:-?} kB of ${small_samples:-?}"
	echo "# $label, $large calls: VmHWM ${MEASURED_HWM_KB:-?} kB, largest VmRSS sample ${MEASURED_RSS_MAX_KB:-?} kB of ${MEASURED_SAMPLES:-?}"
	check "memory: $label: results $small_result for $small calls, $MEASURED_RESULT for $large calls" \
		all_of "$result_check" "$small" "$small_result" -- "$result_check" "$large" "$MEASURED_RESULT"
	is_int "$small_peak" && is_int "$MEASURED_PEAK_KB" &&
		growth=$((MEASURED_PEAK_KB - small_peak))
	check "memory: $label: backend peak RSS ${MEASURED_PEAK_KB:-?} kB for $large calls vs ${small_peak:-?} kB for $small calls (growth $growth kB, limit $MEMORY_SLACK_KB kB)" \
		int_le "$growth" "$MEMORY_SLACK_KB"
}

# A self-sizing bloom_agg over SPILL_ROWS distinct values at work_mem =
# SPILL_WORK_MEM_KB keeps at most work_mem of hashes in memory and spills
# the rest to a temporary file; at the end it holds its filter and little
# else.  The measure is the backend's peak RSS (VmHWM, as above) above that
# of a fresh backend running the same query with count() for bloom_agg and
# the library loaded: what the aggregate itself adds, whichever memory
# context or allocator holds it.  The rows come from generate_series in the
# select list, which streams them without touching shared buffers, which
# RSS would count too.  That growth may be at most work_mem + the filter +
# SPILL_SLACK_KB, the slack being what RSS adds to the memory asked for:
# whole 2 MB huge pages where the kernel backs a large buffer with them,
# and freed memory that malloc keeps.  Keeping every hash, as bloom_agg did
# before it spilled, takes 8 bytes a row and twice that to de-duplicate:
# over 300 MB here; qfilter_agg kept 8 bytes a row and sorted a copy.  A
# serial plan: each process of a parallel one is bounded alike, but a
# worker's hashes travel to the leader in one message, which is memory.
SPILL_ROWS=20000000
SPILL_WORK_MEM_KB=4096
SPILL_SLACK_KB=4096

# "<filter bytes> <inserted>" of the filter; other output fails the check.
spill_result_ok() {
	local bytes inserted
	read -r bytes inserted <<<"$1"
	is_int "$bytes" && int_eq "$inserted" "$SPILL_ROWS"
}

# check_spill_memory <cluster> <aggregate> <count expression>: the
# aggregate (bloom_agg or qfilter_agg) of the rows' i as f, and the
# expression of f that says how many values it holds.
check_spill_memory() {
	local name=$1 agg=$2 counted=$3 rows="(SELECT generate_series(1, $SPILL_ROWS) AS i) s"
	local settings="SET work_mem = '${SPILL_WORK_MEM_KB}kB'; SET max_parallel_workers_per_gather = 0;"
	local base_peak filter_kb="?" limit="?" growth="?" started
	measure_query "$name" "$settings SELECT count(i) + 0 * pg_column_size(bloom_empty(1)) FROM $rows;"
	base_peak=$MEASURED_PEAK_KB
	echo "# count() of $SPILL_ROWS rows: VmHWM ${MEASURED_HWM_KB:-?} kB, largest VmRSS sample ${MEASURED_RSS_MAX_KB:-?} kB of ${MEASURED_SAMPLES:-?}"
	started=$SECONDS
	measure_query "$name" "$settings SELECT pg_column_size(f) || ' ' || $counted FROM (SELECT $agg(i) AS f FROM $rows) t;"
	echo "# $agg of $SPILL_ROWS distinct values: VmHWM ${MEASURED_HWM_KB:-?} kB, largest VmRSS sample ${MEASURED_RSS_MAX_KB:-?} kB of ${MEASURED_SAMPLES:-?}, $((SECONDS - started)) s"
	check "memory: $agg of $SPILL_ROWS distinct values: result '$MEASURED_RESULT' (filter bytes, values held)" \
		spill_result_ok "$MEASURED_RESULT"
	if spill_result_ok "$MEASURED_RESULT" && is_int "$base_peak" && is_int "$MEASURED_PEAK_KB"; then
		filter_kb=$(((${MEASURED_RESULT%% *} + 1023) / 1024))
		limit=$((SPILL_WORK_MEM_KB + filter_kb + SPILL_SLACK_KB))
		growth=$((MEASURED_PEAK_KB - base_peak))
	fi
	check "memory: $agg of $SPILL_ROWS distinct values at work_mem = ${SPILL_WORK_MEM_KB}kB: backend peak RSS ${MEASURED_PEAK_KB:-?} kB vs ${base_peak:-?} kB for count() (growth $growth kB, limit $limit kB = work_mem + filter $filter_kb kB + slack $SPILL_SLACK_KB kB)" \
		int_le "$growth" "$limit"
}

# Keys 1..1,000,000 are in filter 1: up to there every probe must hit;
# beyond, hits are those keys plus some false positives.
contains_result_ok() {
	local calls=$1 result=$2 added=1000000
	if [ "$calls" -le "$added" ]; then
		int_eq "$result" "$calls"
	else
		int_le "$added" "$result" && int_le "$result" "$calls"
	fi
}

# bloom_add never returns NULL, and the PL/pgSQL loop returns its adds.
count_result_ok() {
	int_eq "$2" "$1"
}

run_memory() {
	local name=memory started=$SECONDS
	echo "# part 3: memory, port $MEMORY_PORT"
	if ! prepare_cluster "$name" $MEMORY_PORT "$STRESS_DIR/memory.sql"; then
		not_ok "memory: cluster with the extension and filters set up"
		return
	fi
	echo "# stored filter sizes in bytes: $(db "$name" "SELECT string_agg(id || ': ' || pg_column_size(f), ', ' ORDER BY id) FROM mem_filters")"

	# generate_series in the select list streams its rows; in FROM it would
	# be materialised into a tuplestore spilling at work_mem, which is noise
	# here.  The scalar subquery runs once, so every call gets the same
	# TOAST pointer and can reuse one detoasted copy.
	compare_memory "$name" "bloom_contains on a stored 5 MB filter" \
		"SELECT count(*) FROM (SELECT generate_series(1, :N) AS i) s WHERE bloom_contains((SELECT f FROM mem_filters WHERE id = 1), s.i);" \
		1000000 10000000 contains_result_ok
	compare_memory "$name" "bloom_add on a stored 1.3 kB filter" \
		"SELECT count(*) FROM (SELECT generate_series(1, :N) AS i) s WHERE bloom_add((SELECT f FROM mem_filters WHERE id = 2), s.i) IS NOT NULL;" \
		1000000 10000000 count_result_ok
	compare_memory "$name" "PL/pgSQL loop f := bloom_add(f, i)" \
		"SELECT stress_plpgsql_adds(:N);" \
		20000 200000 count_result_ok
	check_spill_memory "$name" bloom_agg "(bloom_info(f)).inserted"
	check_spill_memory "$name" qfilter_agg "(qfilter_info(f)).count"
	cluster_drop "$WORK/$name"
	echo "# part 3 took $((SECONDS - started)) s"
}
