#!/bin/bash
# bench/ab.sh: bloom_agg of two builds side by side, in one session.
#
#   bash bench/ab.sh REV [N]     REV = the git revision to compare the working
#                                tree with; N = rows (default 3000000)
#
# On a shared machine two benchmark runs minutes apart can differ by more
# than a change does, so comparing run.sh's tables of two builds shows the
# weather as much as the change.  This builds REV and the working tree as two
# modules under other names, loads both into one throwaway cluster, and runs
# sum(id) and both builds' bloom_agg(id), bloom_agg(id, N, 0.01), bloom_agg(id)
# spilling at work_mem 4MB and the growing bloom_agg(id, N/10, 0.01, 2)
# (serial: the builds' states need not combine alike; only if REV has it)
# round-robin in one session pinned to BENCH_CPU: every slow spell lands on
# both builds.  It prints the median, first quartile and fastest of BENCH_RUNS
# runs (default 15) per query, as ratios to sum(id) and to REV's.
#
# With BENCH_PARALLEL=yes it then also times each build's bloom_agg(id)
# serial and with a forced parallel plan (2 workers, not pinned) and prints
# each build's speedup as the median of per-pass ratios (run.sh's
# paired_ratio).
#
# Run as root, after make install (the bloom type and its I/O come from the
# installed extension; only the aggregates' functions come from each build).
# Uses run.sh's cluster, timing and cleanup; see there for BENCH_CPU.
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# Its arguments are run.sh's: N, which its defaults derive from.
# shellcheck source=bench/run.sh
BENCH_ARGS="$*"
source "$BENCH_DIR/run.sh" "${2:-3000000}"

REV=${1:-}
RUNS=${BENCH_RUNS:-15}
LIBDIR=""	# the server's module directory, once PostgreSQL is known
BUILDS=(a b)

# The modules are named after this process, so that two runs cannot clash,
# and removed with the cluster.
module_name() {
	echo "bloomfilter_ab$$_$1"
}

cleanup_ab() {
	local build
	cleanup
	[ -n "$LIBDIR" ] || return
	for build in "${BUILDS[@]}"; do
		rm -f "$LIBDIR/$(module_name "$build").so"
	done
}

# Builds the sources in $WORK/$1 as module $(module_name $1) into LIBDIR.
build_module() {
	local build=$1 module built
	module=$(module_name "$build")
	# Without its _PG_init: the installed extension's module has defined the
	# settings (and hooks) already, and a second definition is an ERROR; the
	# aggregates need none of them.
	make -s -C "$WORK/$build" MODULE_big="$module" COPT="-D_PG_init=ab_module_init_unused" \
		"$module.so" >"$WORK/$build.log" 2>&1 ||
		{ cat "$WORK/$build.log"; die "building $build failed"; }
	# The Makefile builds in build/; a revision from before that, in place.
	built=$WORK/$build/build/$module.so
	[ -f "$built" ] || built=$WORK/$build/$module.so
	install -m 755 "$built" "$LIBDIR/$module.so" || die "cannot install $module.so"
}

# Schema $1 gets bloom_agg's two forms from module $(module_name $1).
create_aggregates() {
	local build=$1 module
	module=$(module_name "$build")
	"${PSQL[@]}" >/dev/null <<-EOF || die "creating build $build's aggregates failed"
		CREATE SCHEMA $build;
		CREATE FUNCTION $build.add(internal, anycompatible) RETURNS internal
			AS '\$libdir/$module', 'bloom_agg_add' LANGUAGE C PARALLEL SAFE;
		CREATE FUNCTION $build.add_fixed(internal, anycompatible, bigint, float8) RETURNS internal
			AS '\$libdir/$module', 'bloom_agg_add_fixed' LANGUAGE C;
		CREATE FUNCTION $build.final(internal) RETURNS bloom
			AS '\$libdir/$module', 'bloom_agg_final' LANGUAGE C PARALLEL SAFE;
		CREATE FUNCTION $build.combine(internal, internal) RETURNS internal
			AS '\$libdir/$module', 'bloom_agg_combine' LANGUAGE C PARALLEL SAFE;
		CREATE FUNCTION $build.serialize(internal) RETURNS bytea
			AS '\$libdir/$module', 'bloom_agg_serialize' LANGUAGE C STRICT PARALLEL SAFE;
		CREATE FUNCTION $build.deserialize(bytea, internal) RETURNS internal
			AS '\$libdir/$module', 'bloom_agg_deserialize' LANGUAGE C STRICT PARALLEL SAFE;
		CREATE AGGREGATE $build.bloom_agg(anycompatible)
			(SFUNC = $build.add, STYPE = internal, FINALFUNC = $build.final,
			 COMBINEFUNC = $build.combine, SERIALFUNC = $build.serialize,
			 DESERIALFUNC = $build.deserialize, PARALLEL = SAFE);
		CREATE AGGREGATE $build.bloom_agg(anycompatible, bigint, float8)
			(SFUNC = $build.add_fixed, STYPE = internal, FINALFUNC = $build.final);
	EOF
}

# Whether build $1's module has the growing form (older revisions do not).
has_growing() {
	nm -D --defined-only "$LIBDIR/$(module_name "$1").so" | grep -qw bloom_agg_add_growing
}

# Schema $1 gets the growing bloom_agg(value, capacity, fpr, growth).
create_growing_aggregate() {
	local build=$1 module
	module=$(module_name "$build")
	"${PSQL[@]}" >/dev/null <<-EOF || die "creating build $build's growing aggregate failed"
		CREATE FUNCTION $build.add_growing(internal, anycompatible, bigint, float8, integer)
			RETURNS internal AS '\$libdir/$module', 'bloom_agg_add_growing' LANGUAGE C;
		CREATE FUNCTION $build.final_growing(internal) RETURNS bloom
			AS '\$libdir/$module', 'bloom_agg_final_growing' LANGUAGE C;
		CREATE AGGREGATE $build.bloom_agg(anycompatible, bigint, float8, integer)
			(SFUNC = $build.add_growing, STYPE = internal, FINALFUNC = $build.final_growing);
	EOF
}

# "label median q1 fastest" of one query's runs.
summary() {
	awk -v label="$1" '$1 == label { print $2 }' "$WORK/times" | sort -g |
		awk -v label="$1" '{ v[NR] = $1 }
			END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				  print label, m, v[int((NR + 3) / 4)], v[1] }'
}

report() {
	local label
	for label in sum a_self b_self a_fixed b_fixed a_spill b_spill $GROWING_LABELS; do
		summary "$label"
	done | awk '
		{ m[$1] = $2; q[$1] = $3; f[$1] = $4; order[NR] = $1 }
		END {
			printf "%-9s %9s %9s %9s   %-17s   %s\n", "", "median", "q1", "fastest",
				   "ratio to sum(id)", "ratio to a"
			for (i = 1; i <= NR; i++) {
				l = order[i]; a = l; sub(/^b_/, "a_", a)
				printf "%-9s %6.1f ms %6.1f ms %6.1f ms   %5.2f %5.2f %5.2f", l, m[l], q[l], f[l],
					   m[l] / m["sum"], q[l] / q["sum"], f[l] / f["sum"]
				if (l ~ /^b_/)
					printf "   %5.2f %5.2f %5.2f", m[l] / m[a], q[l] / q[a], f[l] / f[a]
				printf "\n"
			}
			print "(each ratio: of the medians, of the first quartiles, of the fastest runs)"
		}'
}

# Each build's bloom_agg(id), serial and forced parallel, in turn.
parallel_ab() {
	local build label
	for build in a b; do
		QUERY[${build}_serial]="SELECT pg_column_size($build.bloom_agg(id)) FROM t"
		QUERY[${build}_parallel]=${QUERY[${build}_serial]}
		SETTINGS[${build}_parallel]=$FORCE_PARALLEL
	done
	echo
	echo "bloom_agg(id) serial and with a forced parallel plan (2 workers), not pinned"
	PIN=no
	measure "$RUNS" a_serial a_parallel b_serial b_parallel
	PIN=yes
	printf "%-11s %9s %9s %9s\n" "" "median" "q1" "fastest"
	for label in a_serial a_parallel b_serial b_parallel; do
		summary "$label"
	done | awk '{ printf "%-11s %6.1f ms %6.1f ms %6.1f ms\n", $1, $2, $3, $4 }'
	echo "speedup (median of per-pass serial / parallel): a $(fmt "$(paired_ratio a_serial a_parallel)"), b $(fmt "$(paired_ratio b_serial b_parallel)")"
	echo "parallel time, b / a (median of per-pass ratios): $(fmt "$(paired_ratio b_parallel a_parallel)")"
}

main_ab() {
	[ -n "$REV" ] || die "usage: bash bench/ab.sh REV [N]"
	git -C "$BENCH_DIR/.." rev-parse --verify -q "$REV^{commit}" >/dev/null || die "no such revision: $REV"
	check_arguments
	trap cleanup_ab EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	# run.sh's packages, and what building the two modules needs.
	ensure_prerequisites
	ensure_build_tools || die "could not install the build tools"
	LIBDIR=$("$PGBIN/pg_config" --pkglibdir)
	start_cluster
	mkdir "$WORK/a" "$WORK/b"
	git -C "$BENCH_DIR/.." archive "$REV" | tar -x -C "$WORK/a" || die "cannot export $REV"
	# The sources (src/, sql/) without the working tree's build products,
	# which make would otherwise take as up to date.
	(cd "$BENCH_DIR/.." && tar -cf - --exclude='*.o' --exclude='*.bc' Makefile ./*.control src sql) |
		tar -xf - -C "$WORK/b" || die "cannot copy the working tree"
	build_module a
	build_module b
	"${PSQL[@]}" >/dev/null <<-EOF || die "loading the data failed"
		CREATE EXTENSION bloomfilter;
		CREATE TABLE t (id bigint NOT NULL);
		INSERT INTO t SELECT g FROM generate_series(1, $N) g;
		VACUUM ANALYZE t;
	EOF
	create_aggregates a
	create_aggregates b
	# The growing form is compared only when both builds have it.
	GROWING_LABELS=
	if has_growing a && has_growing b; then
		create_growing_aggregate a
		create_growing_aggregate b
		GROWING_LABELS="a_growing b_growing"
	else
		echo "(no growing form in $REV: bloom_agg(id, N/10, 0.01, 2) not compared)"
	fi

	QUERY[sum]="SELECT sum(id) FROM t"
	for build in a b; do
		QUERY[${build}_self]="SELECT pg_column_size($build.bloom_agg(id)) FROM t"
		QUERY[${build}_fixed]="SELECT pg_column_size($build.bloom_agg(id, $N, 0.01)) FROM t"
		QUERY[${build}_growing]="SELECT pg_column_size($build.bloom_agg(id, $((N / 10)), 0.01, 2)) FROM t"
		# run.sh's room for the hashes: the builds compared in memory, as
		# its targets are, not one of them spilling at the default work_mem
		SETTINGS[${build}_self]=$AGG_WORK_MEM
		SETTINGS[${build}_fixed]=$AGG_WORK_MEM
		SETTINGS[${build}_growing]=$AGG_WORK_MEM
		# and spilling at the default work_mem, as run.sh's spill row does
		QUERY[${build}_spill]=${QUERY[${build}_self]}
		SETTINGS[${build}_spill]="SET work_mem = '4MB';"
	done
	: >"$WORK/times"
	echo "a = $(git -C "$BENCH_DIR/.." rev-parse --short "$REV"), b = the working tree; N = $N, $RUNS runs each, pinned to CPU $CPU"
	# shellcheck disable=SC2086
	measure "$RUNS" sum a_self b_self a_fixed b_fixed a_spill b_spill $GROWING_LABELS
	report
	echo "bloom_agg(id) spilling at work_mem 4MB / in work_mem (median of per-pass ratios):" \
		"a $(fmt "$(paired_ratio a_spill a_self)"), b $(fmt "$(paired_ratio b_spill b_self)")"
	if [ "${BENCH_PARALLEL:-no}" = yes ]; then
		parallel_ab
	fi
}

main_ab
