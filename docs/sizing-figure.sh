#!/bin/bash
# docs/sizing-figure.sh: regenerates docs/sizing.png, the false-positive rate
# of bloomfilter's filters against the bits they spend per key.
#
#   bash docs/sizing-figure.sh      # as root, from anywhere; about a minute
#
# Needs the extension installed (make install); installs gnuplot-nox (and
# the server of pg_config's PostgreSQL major) if missing, through
# test/lib.sh.  It starts a throwaway cluster with test/lib.sh's helpers
# (unix socket only, in a private temporary directory, removed on exit) and
# measures, with real filters:
#   - for each target rate p: 8 filters bloom_agg(i, 100000, p) of 100,000
#     keys each (different keys), each probed with 250,000 keys that were
#     never added; the point is their mean rate, since one filter's rate
#     varies by about 1% of p around the sizing's expectation;
#   - one p = 0.01 filter for 100,000 keys holding 0.5x .. 3x that many keys,
#     to show what overfilling costs.
# The figure draws those measurements over two curves: the classic Bloom
# filter with optimal k (p = exp(-(m/n) ln^2 2)), the bound every Bloom
# filter is compared with, and the blocked layout's curve taken from
# bloom_params(n, p) over a fine grid of p, i.e. exactly the extension's own
# sizing.  The keys are fixed, so a rerun gives the same picture.
# It prints the measured numbers as a table too.
set -u
export LC_ALL=C

repo=$(cd "$(dirname "$0")/.." && pwd)
output="$repo/docs/sizing.png"
# Only names the socket file inside our private directory: no TCP listener.
port=${SIZING_PORT:-5563}
. "$repo/test/lib.sh"

keys=100000
probes=1000000
sets=8
set_probes=250000
target_probes=$((sets * set_probes))
targets="0.1, 0.03, 0.01, 0.003, 0.001, 0.0001"
overfill="0.5, 0.75, 1, 1.5, 2, 3"
work=""

# Stops the cluster and removes every file we made; runs on any exit.
cleanup() {
	if [ -n "$work" ] && [ -d "$work" ]; then
		if cluster_up "$work"; then
			cluster_stop "$work" immediate >/dev/null 2>&1
		fi
		rm -rf "$work"
	fi
}

# Stops with a message; the EXIT trap cleans up.
die() {
	echo "sizing-figure: $*" >&2
	exit 1
}

# gnuplot-nox is the only package this script adds to a CI-like machine;
# ensure_postgresql also sets PGBIN.
ensure_prerequisites() {
	ensure_postgresql || die "could not install PostgreSQL"
	command -v gnuplot >/dev/null || ensure_packages gnuplot-nox || die "could not install gnuplot-nox"
}

# Creates and starts a throwaway cluster listening only on a unix socket.
start_cluster() {
	work=$(mktemp -d -t bloom-sizing.XXXXXX) || die "mktemp failed"
	chmod 755 "$work"
	chown postgres "$work" || die "no postgres user"
	cluster_init "$work" >"$work/initdb.log" 2>&1 || die "initdb failed: $(cat "$work/initdb.log")"
	cluster_start "$work" "$port" -c fsync=off >/dev/null 2>&1 ||
		die "server did not start: $(cat "$work/server.log")"
}

# psql against the throwaway cluster, unaligned, space-separated, no headers.
query() {
	"$PGBIN/psql" -X -q -At -F ' ' -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"
}

# One line per target rate: p k bits_per_key measured false_positives filter_estimate,
# over $sets filters with disjoint keys: set s adds s*10^8 + 1..n and probes
# the next $set_probes keys, which were never added, so every hit is false.
measure_targets() {
	query -c "
		SELECT p, max(d.k), avg(d.bits_per_key), sum(c.hits)::float8 / $target_probes,
		       sum(c.hits), avg(d.estimate)
		FROM unnest(ARRAY[$targets]::float8[]) AS p,
		     generate_series(0, $sets - 1) AS s,
		LATERAL (SELECT s * 100000000::bigint AS base) o,
		LATERAL (SELECT bloom_agg(i, $keys, p) AS f
		         FROM generate_series(o.base + 1, o.base + $keys) i) b,
		LATERAL (SELECT count(*) FILTER (WHERE b.f @> j) AS hits
		         FROM generate_series(o.base + $keys + 1, o.base + $keys + $set_probes) j) c,
		LATERAL (SELECT (bloom_info(b.f)).hashes AS k,
		                (bloom_info(b.f)).bits::float8 / $keys AS bits_per_key,
		                bloom_fpr(b.f) AS estimate) d
		GROUP BY p
		ORDER BY p DESC"
}

# One line per fill level of a p = 0.01 filter sized for n keys:
# fill bits_per_key measured false_positives filter_estimate.
measure_overfill() {
	query -c "
		SELECT fill, (bloom_info(b.f)).bits::float8 / m, c.hits::float8 / $probes,
		       c.hits, bloom_fpr(b.f)
		FROM unnest(ARRAY[$overfill]::float8[]) AS fill,
		LATERAL (SELECT (fill * $keys)::bigint AS m) s,
		LATERAL (SELECT bloom_agg(i::bigint, $keys, 0.01) AS f
		         FROM generate_series(1, m) i) b,
		LATERAL (SELECT count(*) FILTER (WHERE b.f @> j::bigint) AS hits
		         FROM generate_series(m + 1, m + $probes) j) c
		ORDER BY fill"
}

# The extension's sizing as a curve: bits per key bloom_params chooses for
# 400 rates spaced evenly in log scale from 0.5 down to 1e-5.
sizing_curve() {
	query -c "
		SELECT bits_per_element, p
		FROM (SELECT exp(ln(0.5) + (ln(1e-5) - ln(0.5)) * g / 400.0) AS p
		      FROM generate_series(0, 400) g) r,
		LATERAL bloom_params($keys, p)
		ORDER BY p DESC"
}

# The numbers behind the figure, with the distance of each measurement from
# its target in standard errors of a 10^6-probe binomial count.
print_tables() {
	echo "targets: $sets filters of $keys keys each, $target_probes absent keys probed in all"
	awk -v probes="$target_probes" '
		BEGIN { printf "%-8s %3s %13s %13s %8s %15s %9s\n", "target", "k", "bits_per_key",
		        "measured", "hits", "bloom_fpr(f)", "z" }
		{ z = ($4 - $1) / sqrt($1 * (1 - $1) / probes)
		  printf "%-8s %3d %13.3f %13.6f %8d %15.6f %+9.2f\n", $1, $2, $3, $4, $5, $6, z }
	' "$work/targets.dat"
	echo "overfill: p = 0.01 filter sized for $keys keys"
	awk '
		BEGIN { printf "%-8s %13s %13s %8s %15s\n", "fill", "bits_per_key", "measured", "hits", "bloom_fpr(f)" }
		{ printf "%-8s %13.3f %13.6f %8d %15.6f\n", $1 "x", $2, $3, $4, $5 }
	' "$work/overfill.dat"
}

# Draws the figure; the measured points carry +/- 2 standard errors.
draw() {
	# A UTF-8 locale lets gnuplot print the superscript and the plus-minus sign.
	LC_ALL=C.UTF-8 gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 960,640 font "DejaVu Sans,11" noenhanced
set output "$output"
set encoding utf8
set title "False-positive rate against space: bloomfilter's blocked layout, n = 100,000 keys per filter"
set xlabel "bits per key (filter bits / keys it holds)"
set ylabel "false-positive rate"
set logscale y
set format y "%g"
set xrange [0:26]
set yrange [1e-5:0.6]
set xtics 2
set mxtics 2
set grid xtics ytics mytics lc rgb "#dddddd"
set key bottom left box opaque spacing 1.2
sd(p) = sqrt(p * (1 - p) / $target_probes)
plot exp(-x * log(2)**2) title "classic Bloom filter, optimal k: exp(-(m/n) ln²2)" \
        lw 2 dt 2 lc rgb "#777777", \
     "$work/curve.dat" using 1:2 with lines lw 2 lc rgb "#1f77b4" \
        title "blocked layout, sized by bloom_params(n, p)", \
     "$work/targets.dat" using 3:1 with points pt 6 ps 2.4 lw 2 lc rgb "#1f77b4" \
        title "target p of bloom_agg(i, 100000, p)", \
     "$work/targets.dat" using 3:4:(\$4 - 2 * sd(\$4)):(\$4 + 2 * sd(\$4)) with yerrorbars \
        pt 7 ps 1.1 lw 1.5 lc rgb "#d62728" title "measured at capacity, mean of 8 filters, ± 2 standard errors", \
     "$work/targets.dat" using 3:1:(sprintf("p = %g, k = %d", \$1, \$2)) with labels \
        offset 1.5,0.9 left font ",10" notitle, \
     "$work/overfill.dat" using 2:3 with linespoints pt 5 ps 1.1 lw 1.5 lc rgb "#2ca02c" \
        title "measured, p = 0.01 filter at 0.5x to 3x capacity", \
     "$work/overfill.dat" using 2:3:(sprintf("%gx", \$1)) with labels \
        offset -1.2,-0.9 right font ",10" textcolor rgb "#2ca02c" notitle
EOF
}

main() {
	trap cleanup EXIT
	trap "exit 130" INT TERM
	# su to the postgres user without a password prompt needs root.
	[ "$(id -u)" -eq 0 ] || die "run as root"
	ensure_prerequisites
	start_cluster
	query -c "CREATE EXTENSION bloomfilter" || die "CREATE EXTENSION failed (is the extension installed?)"
	measure_targets >"$work/targets.dat" || die "measuring the targets failed"
	measure_overfill >"$work/overfill.dat" || die "measuring the overfill failed"
	sizing_curve >"$work/curve.dat" || die "bloom_params failed"
	print_tables
	draw
	echo "wrote $output ($(stat -c %s "$output") bytes)"
}

main "$@"
