# test/lib.sh: plumbing shared by the test suites, sourced by their run.sh
# (relative to the suite's own directory, so any current directory works).
#
# Also sourced by scripts/test.sh, scripts/demo.sh, scripts/install-deps.sh,
# bench/run.sh (and so bench/ab.sh) and docs/sizing-figure.sh, for the
# package installer and the PostgreSQL version.
#
# Owns what every suite did the same way:
#   - the check counters, the "ok - ..." / "not ok - ..." lines and the last
#     "N passed, N failed" line that CI greps for, with the runtime line
#     before it, and the counting of check lines a program prints itself;
#   - the one installer of Debian packages (ensure_packages), and the
#     PostgreSQL major version everything builds and tests against
#     (pg_major: pg_config's, or the distribution's default before anything
#     is installed) with its programs' directory ($PGBIN, set by
#     ensure_postgresql);
#   - whether the extension is installed for that version;
#   - running a command as the postgres OS user;
#   - the run's temporary directory ($WORK) and its throwaway clusters, each
#     in a directory of its own (DIR/data, DIR/server.log) listening only on
#     a unix socket in DIR, on a given port: made, started, restarted after
#     a crash, a streaming standby of one, psql on one, stopped and removed;
#   - registering the cleanup that runs on any exit, which stops every
#     cluster of the run and removes $WORK.
# Nothing here knows what a suite tests; what a suite does differently
# (other server settings, a TCP listener, how it talks to its servers)
# it says in the arguments it passes.
#
# The cluster helpers use $PGBIN: call ensure_postgresql first.  Like make,
# everything here asks $PG_CONFIG (default: the pg_config on PATH), so
# PG_CONFIG=/usr/lib/postgresql/NN/bin/pg_config picks one of several
# installed versions for the build and every suite alike.

passed=0
failed=0

# -------------------------------------------------------------------------
# Checks

ok() {
	echo "ok - $1"
	passed=$((passed + 1))
}

not_ok() {
	echo "not ok - $1"
	failed=$((failed + 1))
}

# check DESCRIPTION COMMAND...: one check line from COMMAND's exit status,
# which is also returned, so that a failed step can stop the run.
check() {
	local description=$1
	shift
	if "$@"; then
		ok "$description"
		return 0
	fi
	not_ok "$description"
	return 1
}

result_line() {
	echo "$passed passed, $failed failed"
}

# Prints the result line and exits, non-zero if a check failed; cleanup is
# left to the EXIT trap.
finish() {
	result_line
	[ "$failed" -eq 0 ]
	exit
}

# finish_timed: finish, after a "# runtime: N s" line (seconds since the
# suite started).
finish_timed() {
	echo "# runtime: $SECONDS s"
	finish
}

# count_checks FILE [STATUS NAME]: the output of a program that prints
# check lines of its own (a SQL script, a test program): shows its check
# and "#" lines and counts its checks with this run's.  Given its exit
# STATUS, a program that failed without a "not ok" line of its own is one
# failure more, "NAME stopped", shown with the end of its other output.
count_checks() {
	local file=$1 status=${2:-0} name=${3:-}
	grep -E '^(ok - |not ok - |#)' "$file"
	passed=$((passed + $(grep -c '^ok - ' "$file")))
	failed=$((failed + $(grep -c '^not ok - ' "$file")))
	if [ "$status" -ne 0 ] && ! grep -q '^not ok - ' "$file"; then
		not_ok "$name stopped (exit $status)"
		grep -vE '^(ok - |not ok - |#)' "$file" | tail -n 20 | sed 's/^/#   /'
	fi
}

# show_logs FILE...: the last lines of each FILE that is not empty, as "#"
# lines, so that a failed step explains itself among the check lines.
show_logs() {
	local file
	for file in "$@"; do
		[ -s "$file" ] || continue
		echo "# $file:"
		tail -n 20 "$file" | sed 's/^/#   /'
	done
}

# -------------------------------------------------------------------------
# Debian packages and the PostgreSQL version

# package_installed PACKAGE: whether dpkg has it installed.  Not dpkg -s,
# which also knows a removed package whose configuration files remain.
package_installed() {
	[ "$(dpkg-query -W -f '${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# apt_update_once: refreshes apt's index once per run (a fresh machine has
# none, and apt-cache finds nothing without it).  Exported, so that the
# suites scripts/test.sh starts do not refresh it again.
apt_update_once() {
	[ -n "${BLOOMFILTER_APT_UPDATED:-}" ] && return 0
	apt-get update -qq || return 1
	export BLOOMFILTER_APT_UPDATED=1
}

# ensure_packages PACKAGE...: installs those of PACKAGE... that are not
# installed, with apt-get and without recommended packages; says which on
# stderr.  Needs root only when something is missing; false, with the
# reason on stderr, if it cannot install them.  Its messages are "#" lines,
# which the suites' output keeps apart from check lines.
#
# postgresql-server-dev-all (pg_buildext) depends on the exact version of
# postgresql-common: asking for the newest would upgrade postgresql-common
# too, so the version of the installed postgresql-common is asked for.
#
# scripts/test.sh runs suites side by side: one installs at a time (a lock
# file in /tmp), and what another installed meanwhile is not asked for again.
ensure_packages() {
	local package missing=() wanted common log status lock
	for package in "$@"; do
		package_installed "$package" || missing+=("$package")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "# missing Debian packages: ${missing[*]}; run as root, or install them with apt-get" >&2
		return 1
	fi
	exec {lock}>>/tmp/bloomfilter-apt.lock && flock "$lock" || return 1
	wanted=("${missing[@]}")
	missing=()
	for package in "${wanted[@]}"; do
		package_installed "$package" || missing+=("$package")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		exec {lock}>&-
		return 0
	fi
	echo "# installing: ${missing[*]}" >&2
	log=$(mktemp) || { exec {lock}>&-; return 1; }
	apt_update_once >"$log" 2>&1
	common=$(dpkg-query -W -f '${Version}' postgresql-common 2>/dev/null)
	for package in "${!missing[@]}"; do
		if [ "${missing[$package]}" = postgresql-server-dev-all ] && [ -n "$common" ] &&
			apt-cache madison postgresql-server-dev-all | grep -qF "| $common |"; then
			missing[package]="postgresql-server-dev-all=$common"
		fi
	done
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >>"$log" 2>&1
	status=$?
	if [ $status -ne 0 ]; then
		echo "# could not install ${missing[*]}:" >&2
		tail -n 20 "$log" | sed 's/^/#   /' >&2
	fi
	rm -f "$log"
	exec {lock}>&-
	return $status
}

# pg_major: the PostgreSQL major version to build and test against: that of
# $PG_CONFIG, as for make.  On a machine without PostgreSQL yet, the
# distribution's default: the version its postgresql package depends on,
# which is what the other suites then install.
pg_major() {
	local major
	major=$("${PG_CONFIG:-pg_config}" --version 2>/dev/null |
		sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
	if [ -z "$major" ]; then
		apt_update_once >/dev/null 2>&1
		major=$(apt-cache depends postgresql 2>/dev/null |
			sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n 1)
	fi
	if [ -z "$major" ]; then
		echo "# no pg_config, and apt knows no postgresql package to take the version from" >&2
		return 1
	fi
	echo "$major"
}

# set_pg_major: sets PG_MAJOR to pg_major in this shell.  Without pg_config,
# pg_major reads apt's index: it is refreshed here, since the subshell that
# runs pg_major would forget that it did it.
set_pg_major() {
	"${PG_CONFIG:-pg_config}" --version >/dev/null 2>&1 || apt_update_once >/dev/null 2>&1
	PG_MAJOR=$(pg_major)
}

# ensure_postgresql [PACKAGE...]: the server of pg_major (with its contrib
# modules, postgres_fdw among them, and its client programs) and PACKAGE...;
# sets PG_MAJOR, and PGBIN, the directory of the server's programs.
ensure_postgresql() {
	set_pg_major || return 1
	ensure_packages "postgresql-$PG_MAJOR" "$@" || return 1
	PGBIN=$("${PG_CONFIG:-pg_config}" --bindir) && [ -x "$PGBIN/postgres" ] || {
		echo "# ${PG_CONFIG:-pg_config} --bindir names no PostgreSQL server ($PGBIN)" >&2
		return 1
	}
}

# ensure_build_tools [PACKAGE...]: ensure_postgresql, and what building the
# extension and its client needs: make, a compiler, the server's headers,
# xxhash.h, and libpq's headers (bloomfilter-cli sync).
ensure_build_tools() {
	set_pg_major || return 1
	ensure_postgresql make gcc libc6-dev "postgresql-server-dev-$PG_MAJOR" libxxhash-dev \
		libpq-dev python3-dev python3-setuptools "$@"
}

# extension_installed: whether bloomfilter is installed for that server.
extension_installed() {
	[ -f "$("${PG_CONFIG:-pg_config}" --sharedir)/extension/bloomfilter.control" ]
}

# -------------------------------------------------------------------------
# The postgres user, the run's directory and its throwaway clusters
#
# Everything a run makes lives under one temporary directory, $WORK, and
# each of its clusters in a directory DIR that is $WORK or $WORK/NAME: the
# cleanup finds them there.  DIR holds the data directory (DIR/data), the
# server's log (DIR/server.log), initdb's and pg_ctl's output (initdb.log,
# start.log), the unix socket, and the port (DIR/port).

WORK=${WORK:-}
# This file, for the scripts cluster_scripts writes.
TEST_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh

# as_postgres COMMAND ARGUMENT...: runs COMMAND as postgres.  From /, since
# postgres may not be allowed to enter the caller's directory; arguments
# are passed as they are, so paths need no shell quoting.
as_postgres() {
	(cd / && runuser -u postgres -- "$@")
}

# make_workdir NAME: sets WORK to a new temporary directory,
# bloomfilter-NAME.XXXXXX, that the postgres user may enter and write.
make_workdir() {
	WORK=$(mktemp -d -t "bloomfilter-$1.XXXXXX") || return 1
	chmod 755 "$WORK" && chown postgres "$WORK"
}

# cluster_dir DIR: makes DIR, if need be, for the postgres user.
cluster_dir() {
	mkdir -p "$1" && chown postgres "$1"
}

# cluster_init DIR [INITDB_OPTION...]: initdb of DIR/data, trust
# authentication, superuser postgres, UTF8 and the C locale so that results
# do not depend on the machine.  Output on stdout and stderr, for the
# caller to log.
cluster_init() {
	local dir=$1
	shift
	cluster_dir "$dir" || return 1
	as_postgres "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C "$@"
}

# cluster_start DIR PORT [-c NAME=VALUE]...: starts DIR/data, logging to
# DIR/server.log, with its socket in DIR and no TCP listener, so that
# nothing is shared with other clusters on the machine; a later
# "-c listen_addresses=HOST" opens one.  Further arguments are server
# options.  Waits for it.  Output as cluster_init's.
cluster_start() {
	local dir=$1 port=$2
	shift 2
	echo "$port" >"$dir/port"
	as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -k '$dir' -c listen_addresses='' $*" start
}

# cluster_create DIR PORT [-c NAME=VALUE]...: a new cluster in DIR
# (cluster_init, without fsync: it is thrown away), started as
# cluster_start starts it.  Output in DIR/initdb.log and DIR/start.log; on
# failure, their end and the server log's as "#" lines.
cluster_create() {
	local dir=$1
	cluster_dir "$dir" || return 1
	cluster_init "$dir" --no-sync >"$dir/initdb.log" 2>&1 &&
		cluster_start "$@" >"$dir/start.log" 2>&1 && return 0
	show_logs "$dir/initdb.log" "$dir/start.log" "$dir/server.log"
	return 1
}

# cluster_standby PRIMARY DIR PORT [-c NAME=VALUE]...: a streaming standby
# of PRIMARY's cluster in DIR, copied by pg_basebackup over PRIMARY's
# socket with the settings that make it follow (-R), started as
# cluster_start starts it.  Output and failure as cluster_create's.  The
# backup's checkpoint is an immediate one: the default, spread over
# checkpoint_completion_target of checkpoint_timeout, made each copy wait
# up to minutes for nothing.
cluster_standby() {
	local primary=$1 dir=$2
	shift
	cluster_dir "$dir" || return 1
	as_postgres "$PGBIN/pg_basebackup" -h "$primary" -p "$(cluster_port "$primary")" \
		-U postgres -D "$dir/data" -R -X stream -c fast >"$dir/initdb.log" 2>&1 &&
		cluster_start "$@" >"$dir/start.log" 2>&1 && return 0
	show_logs "$dir/initdb.log" "$dir/start.log" "$dir/server.log"
	return 1
}

# cluster_port DIR: the port DIR's cluster was started on.
cluster_port() {
	cat "$1/port"
}

# cluster_restart DIR: stops DIR's cluster (fast) if it runs, and starts it
# again with the options of its last start, which pg_ctl keeps in
# DIR/data/postmaster.opts: also after a crash (cluster_stop DIR immediate),
# through crash recovery, hence the longer wait.
cluster_restart() {
	as_postgres "$PGBIN/pg_ctl" -D "$1/data" -l "$1/server.log" -m fast -w -t 120 restart
}

# cluster_scripts DIR: DIR/stop.sh and DIR/start.sh, which stop DIR's
# cluster (fast) and start it again as it last started (cluster_restart),
# for a test program that takes the server away between its checks.
cluster_scripts() {
	printf '. %q\nPGBIN=%q\ncluster_stop %q fast\n' "$TEST_LIB" "$PGBIN" "$1" >"$1/stop.sh"
	printf '. %q\nPGBIN=%q\ncluster_restart %q\n' "$TEST_LIB" "$PGBIN" "$1" >"$1/start.sh"
}

# cluster_stop DIR [MODE]: stops DIR/data and waits (MODE fast by default;
# immediate when the data is about to be thrown away, or for a crash).
cluster_stop() {
	as_postgres "$PGBIN/pg_ctl" -D "$1/data" -m "${2:-fast}" -w -t 60 stop
}

# cluster_drop DIR: stops DIR's cluster and removes DIR, at once rather
# than at exit.
cluster_drop() {
	cluster_stop "$1" >/dev/null 2>&1 && rm -rf "$1"
}

# cluster_up DIR: whether DIR/data has a postmaster (or had one that
# died without removing its pid file).
cluster_up() {
	[ -f "$1/data/postmaster.pid" ]
}

# cluster_sql DIR PSQL_ARGUMENT...: psql as postgres on DIR's cluster,
# unaligned and without headers, stopping at the first error; NOTICEs
# (DROP ... IF EXISTS) are noise and left out.
cluster_sql() {
	local dir=$1
	shift
	PGOPTIONS="-c client_min_messages=warning" \
		"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$dir" -p "$(cluster_port "$dir")" -U postgres "$@"
}

# -------------------------------------------------------------------------
# Cleanup

# cleanup_clusters: stops every cluster of the run, in $WORK or
# $WORK/NAME (immediately: their data is thrown away; with SIGKILL should
# pg_ctl fail), and removes $WORK.
cleanup_clusters() {
	local dir
	[ -n "$WORK" ] && [ -d "$WORK" ] || return 0
	for dir in "$WORK" "$WORK"/*; do
		cluster_up "$dir" || continue
		cluster_stop "$dir" immediate >/dev/null 2>&1 ||
			kill -KILL "$(head -n 1 "$dir/data/postmaster.pid")" 2>/dev/null
	done
	rm -rf "$WORK"
}

# cleanup_on_exit [FUNCTION]: runs FUNCTION (cleanup_clusters unless
# given; a suite's own calls cleanup_clusters last) on any exit.  INT and
# TERM become "exit 130", so that an interrupted run stops there (instead of
# going on with the next command) and still cleans up.
cleanup_on_exit() {
	trap "${1:-cleanup_clusters}" EXIT
	trap 'exit 130' INT TERM
}
