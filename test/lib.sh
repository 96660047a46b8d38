# test/lib.sh: plumbing shared by the test suites, sourced by their run.sh
# (relative to the suite's own directory, so any current directory works).
#
# Owns what every suite did the same way:
#   - the check counters, the "ok - ..." / "not ok - ..." lines and the last
#     "N passed, N failed" line that CI greps for;
#   - installing Debian packages that dpkg does not know;
#   - running a command as the postgres OS user;
#   - a throwaway cluster in a directory of its own (DIR/data, DIR/server.log)
#     listening only on a unix socket in DIR, on a given port;
#   - registering the cleanup that runs on any exit.
# Nothing here knows what a suite tests; what a suite does differently
# (TCP listeners, other initdb options, how logs are shown) stays in it.
#
# The cluster helpers use $PGBIN, which the suite sets before calling them.

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
# Debian packages

# missing_packages PACKAGE...: prints, one a line, those dpkg does not know.
missing_packages() {
	local package
	for package in "$@"; do
		dpkg -s "$package" >/dev/null 2>&1 || echo "$package"
	done
}

# apt_install APT_ARGUMENT...: refreshes the index (a fresh machine has
# none) and installs without questions.  Output is the caller's to redirect.
apt_install() {
	apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
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
