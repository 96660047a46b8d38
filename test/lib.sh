# test/lib.sh: plumbing shared by the test suites, sourced by their run.sh
# (relative to the suite's own directory, so any current directory works).
#
# Also sourced by scripts/test.sh, scripts/demo.sh, scripts/install-deps.sh,
# bench/run.sh (and so bench/ab.sh) and docs/sizing-figure.sh, for the
# package installer and the PostgreSQL version.
#
# Owns what every suite did the same way:
#   - the check counters, the "ok - ..." / "not ok - ..." lines and the last
#     "N passed, N failed" line that CI greps for;
#   - the one installer of Debian packages (ensure_packages), and the
#     PostgreSQL major version everything builds and tests against
#     (pg_major: pg_config's, or the distribution's default before anything
#     is installed) with its programs' directory ($PGBIN, set by
#     ensure_postgresql);
#   - whether the extension is installed for that version;
#   - running a command as the postgres OS user;
#   - a throwaway cluster in a directory of its own (DIR/data, DIR/server.log)
#     listening only on a unix socket in DIR, on a given port;
#   - registering the cleanup that runs on any exit.
# Nothing here knows what a suite tests; what a suite does differently
# (TCP listeners, other initdb options, how logs are shown) stays in it.
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
ensure_packages() {
	local package missing=() common log status
	for package in "$@"; do
		package_installed "$package" || missing+=("$package")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "# missing Debian packages: ${missing[*]}; run as root, or install them with apt-get" >&2
		return 1
	fi
	echo "# installing: ${missing[*]}" >&2
	log=$(mktemp) || return 1
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
		libpq-dev "$@"
}

# extension_installed: whether bloomfilter is installed for that server.
extension_installed() {
	[ -f "$("${PG_CONFIG:-pg_config}" --sharedir)/extension/bloomfilter.control" ]
}

# -------------------------------------------------------------------------
# The postgres user and throwaway clusters

# as_postgres COMMAND ARGUMENT...: runs COMMAND as postgres.  From /, since
# postgres may not be allowed to enter the caller's directory; arguments
# are passed as they are, so paths need no shell quoting.
as_postgres() {
	(cd / && runuser -u postgres -- "$@")
}

# cluster_init DIR [INITDB_OPTION...]: initdb of DIR/data (DIR must be
# writable by postgres), trust authentication, superuser postgres, UTF8 and
# the C locale so that results do not depend on the machine.  Output on
# stdout and stderr, for the caller to log.
cluster_init() {
	local dir=$1
	shift
	as_postgres "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C "$@"
}

# cluster_start DIR PORT [-c NAME=VALUE]...: starts DIR/data, logging to
# DIR/server.log, with its socket in DIR and no TCP listener, so that
# nothing is shared with other clusters on the machine.  Waits for it.
# Further arguments are server options.  Output as cluster_init's.
cluster_start() {
	local dir=$1 port=$2
	shift 2
	as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -k '$dir' -c listen_addresses='' $*" start
}

# cluster_stop DIR [MODE]: stops DIR/data and waits (MODE fast by default;
# immediate when the data is about to be thrown away).
cluster_stop() {
	as_postgres "$PGBIN/pg_ctl" -D "$1/data" -m "${2:-fast}" -w -t 60 stop
}

# cluster_up DIR: whether DIR/data has a postmaster (or had one that
# died without removing its pid file).
cluster_up() {
	[ -f "$1/data/postmaster.pid" ]
}

# -------------------------------------------------------------------------
# Cleanup

# cleanup_on_exit FUNCTION: runs FUNCTION on any exit.  INT and TERM become
# "exit 130", so that an interrupted run stops there (instead of going on
# with the next command) and still cleans up.
cleanup_on_exit() {
	trap "$1" EXIT
	trap 'exit 130' INT TERM
}
