#!/bin/bash
# test/package/run.sh: checks that bloomfilter packages as a Debian package.
#
# Builds postgresql-NN-bloomfilter, NN being pg_config's PostgreSQL major
# (test/lib.sh's pg_major), and bloomfilter-client (the client library, its
# header, the CLI and the Python module) with `dpkg-buildpackage -us -uc -b`
# as README's "As a Debian package" has a user do it: as root, in a copy of
# this tree in a directory only root may enter (as a clone in /root is),
# with no system-wide install of the extension for the build to lean on.
# It generates debian/control for NN from debian/control.in; the build
# itself runs the Makefile's REGRESS, the light pg_regress cases, through
# `pg_buildext installcheck`.  It then installs the .debs, runs autopkgtest's
# debian/tests/installcheck and debian/tests/client on them, checks in a
# throwaway cluster on port 5551 that CREATE EXTENSION and a probe work from
# the packaged files, and purges the packages.
#
# The extension's files installed system-wide when it starts (the `make
# install` that scripts/test.sh runs before the suites) are moved aside into
# a tar file under /var/tmp (bloomfilter-package-aside.*) for the run, and
# put back as they were at the end, also after a failure or an interrupt,
# so the machine is left as it was; a run killed outright leaves them there.
#
# Run as root on Debian, from any directory, with or without a make-installed
# copy.  Installs the Debian packages it needs.  Prints one line per check
# and ends with "N passed, N failed"; exits non-zero if a check failed.
set -u

PORT=5551
# Set by install_build_tools, for pg_config's major (and PG_MAJOR, PGBIN by
# test/lib.sh's ensure_postgresql).
PACKAGE=""
CLIENT_PACKAGE=bloomfilter-client
PG_CONFIG=${PG_CONFIG:-}
LIB_DIR=""
# The files the package must ship and own.
INSTALLED_FILES=()
EXTENSION_DIR=""

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/test/lib.sh"
DEFAULT_VERSION=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/bloomfilter.control")

work=""            # test/lib.sh's $WORK: the tree's copy, logs, the .deb, the cluster
home=""            # the tree's copy's parent, mode 700 as /root; the .debs land here
source_dir=""      # the tree's copy, where the package is built
cluster=""         # the throwaway cluster's directory, in $work
cluster_running=""
deb_installed=""
install_tried=""   # set once this run has tried to install the packages
aside=""           # the directory holding aside.tar while the files are moved aside
deb=""             # the built package file
client_deb=""      # the built client package file

# Shows the end of a log after a failure, indented so that no line of it
# can be mistaken for a check line.
show_log() {
	echo "  --- last lines of $1:"
	tail -n "${2:-40}" "$1" 2>/dev/null | sed 's/^/  | /'
}

# The build tools, the server and headers of pg_config's major, and
# postgresql-server-dev-all (pg_buildext's debhelper addon, dh_pgxs_test);
# then where that major keeps the extension's files.
install_build_tools() {
	ensure_build_tools build-essential dpkg-dev debhelper postgresql-server-dev-all python3 \
		help2man lintian man-db || return 1
	PACKAGE=postgresql-$PG_MAJOR-bloomfilter
	PG_CONFIG=$PGBIN/pg_config
	EXTENSION_DIR=$("$PG_CONFIG" --sharedir)/extension
	LIB_DIR=$("$PG_CONFIG" --pkglibdir)
	INSTALLED_FILES=("$EXTENSION_DIR/bloomfilter.control" "$EXTENSION_DIR/bloomfilter--1.0.sql" "$EXTENSION_DIR/bloomfilter--$DEFAULT_VERSION.sql" "$EXTENSION_DIR/bloomfilter--1.0--1.1.sql" "$LIB_DIR/bloomfilter.so")
}

# The extension's files installed for that server, whoever installed them:
# the control file, the install and upgrade scripts, the module and its JIT
# bitcode.  Paths without the leading /, for tar -C /.
system_install_files() {
	local path
	for path in "$EXTENSION_DIR"/bloomfilter.control "$EXTENSION_DIR"/bloomfilter--*.sql \
		"$LIB_DIR"/bloomfilter.so "$LIB_DIR"/bitcode/bloomfilter.index.bc "$LIB_DIR"/bitcode/bloomfilter; do
		[ -e "$path" ] && echo "${path#/}"
	done
	return 0
}

# Moves the system-wide install aside for the run: into a tar file (owners,
# modes and times kept, to the nanosecond in the POSIX format) in a directory of its own, outside the run's $WORK,
# so that a failed restore loses nothing.  The build must pass without it,
# as on a machine where the extension was never installed.
move_system_install_aside() {
	local files
	system_install_files >"$work/aside.list" || return 1
	mapfile -t files <"$work/aside.list"
	aside=$(mktemp -d /var/tmp/bloomfilter-package-aside.XXXXXX) || return 1
	if [ ${#files[@]} -gt 0 ]; then
		tar -C / --format=posix -cf "$aside/aside.tar" "${files[@]}" || return 1
		(cd / && rm -rf "${files[@]}") || return 1
	else
		tar -C / -cf "$aside/aside.tar" --files-from /dev/null || return 1
	fi
	echo "  ${#files[@]} paths moved aside to $aside/aside.tar"
	! extension_installed && [ ! -e "$LIB_DIR/bloomfilter.so" ]
}

# A package left by an interrupted run would be the system-wide install the
# build must do without: purged, like this run's own at the end.
purge_stale_package() {
	dpkg --purge "$PACKAGE" "$CLIENT_PACKAGE" >"$work/stale-purge.log" 2>&1 ||
		{ show_log "$work/stale-purge.log"; return 1; }
	! package_installed "$PACKAGE" && ! package_installed "$CLIENT_PACKAGE"
}

# Copies the tree without build products: with a VPATH build (what the
# pgxs addon does), a stale bloom.o in the source directory would be linked
# instead of a fresh one.  Untracked files are included because they may
# be work not committed yet (debian/ itself, before it is).
copy_tree() {
	home=$work/home
	source_dir=$home/bloomfilter
	mkdir -m 700 "$home" && mkdir "$source_dir" || return 1
	if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
			tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
			tar -C "$source_dir" -xf -
	else
		(cd "$REPO" && tar --exclude=.git --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude=results --exclude=log --exclude='regression.*' -cf - .) |
			tar -C "$source_dir" -xf -
	fi
	[ -f "$source_dir/debian/rules" ] && [ -f "$source_dir/Makefile" ]
}

# As in a clone in root's home: the server's user cannot even reach it.
tree_private() {
	! as_postgres test -r "$source_dir/Makefile"
}

# The build's regression run stages what its server reads in a directory
# of its own (debian/rules' override_dh_pgxs_test); it must remove it.
staging_copies() {
	compgen -G "${TMPDIR:-/tmp}/bloomfilter-installcheck.*" | sort
}

# debian/control is generated, not kept in git (it names PostgreSQL
# versions).  PG_SUPPORTED_VERSIONS narrows the distribution's supported
# versions to pg_config's major, here and in the build (pg_buildext
# checkcontrol, the per-version loop), so the package is built for the
# server the other suites test, also where that is not the default.
generate_control() {
	(cd "$source_dir" && PG_SUPPORTED_VERSIONS=$PG_MAJOR pg_buildext updatecontrol) \
		>"$work/control.log" 2>&1 || { show_log "$work/control.log"; return 1; }
	grep -qx "Package: $PACKAGE" "$source_dir/debian/control" ||
		{ echo "  no $PACKAGE in the generated debian/control"; return 1; }
}

build_package() {
	staging_copies >"$work/staging-before"
	(cd "$source_dir" && PG_SUPPORTED_VERSIONS=$PG_MAJOR timeout 1800 dpkg-buildpackage -us -uc -b) \
		>"$work/build.log" 2>&1 && return 0
	show_log "$work/build.log" 60
	return 1
}

staging_copy_removed() {
	staging_copies | cmp -s - "$work/staging-before"
}

# pg_buildext prints pg_regress's summary between "### PostgreSQL NN
# installcheck ###" and "### End NN installcheck ###"; both must be there,
# or the suite was skipped (DEB_BUILD_OPTIONS=nocheck, say).  The summary
# reads "All N tests passed", with a "# " before it from PostgreSQL 16 on:
# one for pg_regress (REGRESS), one for pg_isolation_regress (ISOLATION).
regression_ran_in_build() {
	local summary
	grep -q "^### End $PG_MAJOR installcheck ###\$" "$work/build.log" || return 1
	summary=$(grep -oE 'All [0-9]+ tests passed' "$work/build.log" | paste -sd ';' | sed 's/;/; /g')
	[ -n "$summary" ] || return 1
	echo "  build log: $summary"
}

# The .deb's name follows debian/changelog's version.
find_deb() {
	local version arch
	version=$(dpkg-parsechangelog -l "$source_dir/debian/changelog" -S Version)
	arch=$(dpkg --print-architecture)
	deb=$home/${PACKAGE}_${version}_${arch}.deb
	client_deb=$home/${CLIENT_PACKAGE}_${version}_${arch}.deb
	[ -f "$deb" ] && [ -f "$client_deb" ] && echo "  built: $(basename "$deb") $(basename "$client_deb")"
}

deb_has_extension_files() {
	local listing path
	listing=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
	for path in "${INSTALLED_FILES[@]}" /usr/share/doc/$PACKAGE/copyright \
		/usr/share/doc/$PACKAGE/README.md /usr/share/doc/$PACKAGE/docs/bloomindex.md \
		/usr/share/doc/$PACKAGE/docs/design.md /usr/share/doc/$PACKAGE/docs/sizing.png; do
		grep -qxF ".$path" <<<"$listing" || { echo "  missing from the .deb: $path"; return 1; }
	done
}

client_deb_has_its_files() {
	local listing path multiarch ext_suffix
	multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
	ext_suffix=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	listing=$(dpkg-deb -c "$client_deb" | awk '{ print $NF }')
	for path in /usr/bin/bloomfilter-cli /usr/include/bloomfilter.h \
		"/usr/lib/$multiarch/libbloomfilter.so.1" "/usr/lib/$multiarch/libbloomfilter.a" \
		/usr/lib/python3/dist-packages/bloomfilter.py \
		"/usr/lib/python3/dist-packages/_bloomfilter$ext_suffix" /usr/share/doc/$CLIENT_PACKAGE/copyright \
		/usr/share/doc/$CLIENT_PACKAGE/docs/client.md /usr/share/man/man1/bloomfilter-cli.1.gz; do
		grep -qxF ".$path" <<<"$listing" || { echo "  missing from the client .deb: $path"; return 1; }
	done
}

# Every docs/... link of the installed README names an installed file.
readme_links_resolve() {
	local doc=/usr/share/doc/$PACKAGE link missing=0 count=0
	for link in $(grep -oE '\]\(docs/[^)#]+' "$doc/README.md" | sed 's/^](//' | sort -u); do
		count=$((count + 1))
		[ -f "$doc/$link" ] || { echo "  README links to $link, not installed"; missing=1; }
	done
	echo "  $count distinct docs/ links"
	[ "$count" -gt 0 ] && [ "$missing" = 0 ]
}

man_page_works() {
	MANPAGER=cat MANWIDTH=80 man bloomfilter-cli 2>&1 | grep -q 'bloomfilter-cli COMMAND'
}

# Debian's pydoc3 (a pyenv or venv one on PATH would not see the system's
# dist-packages), from /: pydoc searches the current directory first, where
# a built bloomfilter.so would be taken for the module.
pydoc_works() {
	(cd / && /usr/bin/pydoc3 bloomfilter) 2>&1 | grep -q 'Bloom filters of the bloomfilter PostgreSQL extension'
}

# lintian finds no error in either package; its warnings are shown.
lintian_clean() {
	local report errors
	report=$(lintian --no-tag-display-limit "$deb" "$client_deb" 2>&1)
	errors=$(grep -c '^E:' <<<"$report")
	echo "  lintian: $errors errors, $(grep -c '^W:' <<<"$report") warnings"
	grep -E '^(E|W):' <<<"$report" | head -20 | sed 's/^/  /'
	[ "$errors" = 0 ]
}

# xxHash is used header-only, so the package must not need libxxhash0; it
# must need the server it was built for.
deb_depends_right() {
	local depends
	depends=$(dpkg-deb -f "$deb" Depends)
	echo "  Depends: $depends"
	grep -qE "(^|, )postgresql-$PG_MAJOR(,|$| )" <<<"$depends" && ! grep -q xxhash <<<"$depends"
}

# debian/changelog, META.json and the control file must name one release.
versions_agree() {
	local debian_version meta_version default_version
	debian_version=$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)
	debian_version=${debian_version%-*}
	# The distribution's own version is the only one indented one level.
	meta_version=$(sed -n 's/^ \{1,4\}"version": *"\([^"]*\)".*/\1/p' "$REPO/META.json")
	default_version=$(sed -n "s/^default_version = '\(.*\)'\$/\1/p" "$REPO/bloomfilter.control")
	echo "  debian $debian_version, META.json $meta_version, control $default_version"
	[ -n "$debian_version" ] && [ "$debian_version" = "$meta_version" ] &&
		[ -n "$default_version" ] && [ "${meta_version#"$default_version".}" != "$meta_version" ]
}

# From the directory only root may enter, as README's `apt-get install
# ../*.deb`: apt cannot hand the files to its _apt user, says so, and reads
# them as root.
install_package() {
	install_tried=1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" "$client_deb" \
		>"$work/install.log" 2>&1 || { show_log "$work/install.log"; return 1; }
	deb_installed=1
	package_installed "$PACKAGE" && package_installed "$CLIENT_PACKAGE"
}

# Whether dpkg knows the package in any state (half-installed too), once
# this run has tried to install it.
package_is_known() {
	[ -n "$install_tried" ] && { dpkg -s "$PACKAGE" || dpkg -s "$CLIENT_PACKAGE"; } >/dev/null 2>&1
}

package_owns_files() {
	local path
	for path in "${INSTALLED_FILES[@]}"; do
		dpkg -S "$path" 2>/dev/null | grep -q "^$PACKAGE:" || { echo "  not the package's: $path"; return 1; }
	done
}

# debian/tests/installcheck is what autopkgtest runs (pg_buildext
# installcheck: the regression suite in a pg_virtualenv cluster); here it
# runs against the installed package rather than the build's staged files.
run_autopkgtest() {
	(cd "$source_dir" && timeout 900 debian/tests/installcheck) >"$work/autopkgtest.log" 2>&1 ||
		{ show_log "$work/autopkgtest.log"; return 1; }
	grep -qE 'All [0-9]+ tests passed' "$work/autopkgtest.log"
}

# debian/tests/client: a C program, the CLI and python3 using nothing but
# the installed client package's files.
run_client_autopkgtest() {
	(cd "$source_dir" && timeout 300 debian/tests/client) >"$work/client-test.log" 2>&1 ||
		{ show_log "$work/client-test.log"; return 1; }
	tail -n 1 "$work/client-test.log" | sed 's/^/  /'
}

# A cluster of its own, its socket in its own directory: nothing shared
# with the system's clusters or other suites' pg_virtualenv clusters.
start_cluster() {
	cluster=$work/cluster
	cluster_create "$cluster" "$PORT" || return 1
	cluster_running=1
}

# sql QUERY: the query's result, unaligned, from the throwaway cluster.
sql() {
	as_postgres "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$cluster" -p "$PORT" -d postgres -c "$1" 2>&1
}

# sql_gives QUERY EXPECTED: the query runs and returns exactly EXPECTED.
sql_gives() {
	local result
	result=$(sql "$1")
	[ "$result" = "$2" ] && return 0
	echo "  $1 -> $result (expected $2)"
	return 1
}

stop_cluster() {
	cluster_stop "$cluster" >>"$cluster/start.log" 2>&1 || return 1
	cluster_running=""
}

# Purge rather than remove: the package has no conffiles, and nothing of
# it should stay in dpkg's database.
remove_package() {
	dpkg --purge "$PACKAGE" "$CLIENT_PACKAGE" >"$work/remove.log" 2>&1 ||
		{ show_log "$work/remove.log"; return 1; }
	deb_installed=""
	! package_installed "$PACKAGE" && ! package_installed "$CLIENT_PACKAGE" &&
		[ ! -e "$LIB_DIR/bloomfilter.so" ] && [ ! -e /usr/bin/bloomfilter-cli ]
}

# Puts the files moved aside back as they were; the tar file goes only once
# they are.
restore_system_install() {
	tar -C / -xpf "$aside/aside.tar" 2>"$work/restore.log" ||
		{ show_log "$work/restore.log"; echo "  kept: $aside/aside.tar"; return 1; }
	cp "$aside/aside.tar" "$work/aside.tar" && rm -rf "$aside" && aside=""
}

# Exactly the files found at the start are installed (none, if there were
# none), and owned by no package: a later dpkg operation must not delete
# them.
system_install_is_back() {
	local path count=0
	[ -z "$aside" ] || return 1
	while read -r path; do
		count=$((count + 1))
		[ -e "/$path" ] || { echo "  missing: /$path"; return 1; }
		! dpkg -S "/${path%/}" >/dev/null 2>&1 || { echo "  still owned by a package: /$path"; return 1; }
	done < <(tar -tf "$work/aside.tar")
	echo "  $count paths back"
	# Nothing else: no file of the package stayed behind.
	system_install_files | cmp -s - "$work/aside.list" ||
		{ echo "  installed now: $(system_install_files | tr '\n' ' ')"; return 1; }
}

# Runs on any exit, including an interrupt: undoes whatever the checks did
# not get to undo themselves, then deletes the temporary directories.
cleanup() {
	[ -n "$cluster_running" ] && stop_cluster
	# An interrupt may land while apt is still installing, before
	# install_package has marked the package as ours: ask dpkg instead.
	if [ -n "$deb_installed" ] || package_is_known; then
		dpkg --purge "$PACKAGE" "$CLIENT_PACKAGE" >/dev/null 2>&1 && deb_installed=""
	fi
	[ -n "$aside" ] && restore_system_install
	cleanup_clusters
}

main() {
	local started=$SECONDS
	if [ "$(id -u)" != 0 ]; then
		not_ok "run as root (installs and removes a package)"
		finish
	fi
	cleanup_on_exit cleanup
	# The throwaway cluster's directory is in it: make_workdir's is 755.
	make_workdir package || { not_ok "a temporary directory"; finish; }
	work=$WORK

	check "build tools installed (dpkg-dev, debhelper, postgresql-server-dev-all)" install_build_tools || finish
	check "no system-wide install of the extension for the build (files moved aside)" \
		move_system_install_aside || finish
	if dpkg -s "$PACKAGE" >/dev/null 2>&1 || dpkg -s "$CLIENT_PACKAGE" >/dev/null 2>&1; then
		check "packages left by an earlier run purged" purge_stale_package || finish
	fi
	check "tree copied without build products" copy_tree || finish
	check "the copy is private to root, as a clone in /root (postgres cannot read it)" tree_private
	check "debian/control generated for PostgreSQL $PG_MAJOR (pg_buildext updatecontrol)" \
		generate_control || finish
	check "debian/changelog, META.json and bloomfilter.control agree on the version" versions_agree
	check "build dependencies satisfied (dpkg-checkbuilddeps)" \
		sh -c "cd '$source_dir' && dpkg-checkbuilddeps" || finish
	check "dpkg-buildpackage -us -uc -b succeeded" build_package || finish
	check "regression suite ran during the build and passed" regression_ran_in_build
	check "the build removed the copy its test server read" staging_copy_removed
	check "$PACKAGE .deb produced" find_deb || finish
	check ".deb ships the control file, install scripts, module, copyright and docs" deb_has_extension_files
	check ".deb depends on postgresql-$PG_MAJOR and not on libxxhash" deb_depends_right
	check "$CLIENT_PACKAGE .deb ships the library, header, CLI, Python module and its compiled half, copyright and manual page" \
		client_deb_has_its_files
	check "lintian reports no error" lintian_clean

	if check "packages installed with apt-get" install_package; then
		check "installed files belong to $PACKAGE" package_owns_files
		check "the installed README's links to docs/ resolve" readme_links_resolve
		check "man bloomfilter-cli shows the manual page" man_page_works
		check "pydoc3 bloomfilter shows the module's documentation" pydoc_works
		check "autopkgtest debian/tests/installcheck passes on the installed package" run_autopkgtest
		check "autopkgtest debian/tests/client passes on the installed $CLIENT_PACKAGE" \
			run_client_autopkgtest
		if check "throwaway cluster started on port $PORT" start_cluster; then
			check "CREATE EXTENSION bloomfilter from the packaged files, version $DEFAULT_VERSION" \
				sql_gives "CREATE EXTENSION bloomfilter; SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'" "$DEFAULT_VERSION"
			check "probe works: bloom_add(bloom_empty(100), 1) @> 1" \
				sql_gives "SELECT bloom_add(bloom_empty(100), 1) @> 1" t
			check "throwaway cluster stopped" stop_cluster
		fi
	fi
	# Also after a failed install, which may have unpacked some files:
	# restoring before purging would let the purge delete the restored copy.
	if [ -n "$deb_installed" ] || package_is_known; then
		check "packages purged (their files gone with them)" remove_package
	fi
	if [ -n "$aside" ]; then
		check "extension files found at the start put back" restore_system_install
	fi
	check "extension files back as found and owned by no package" system_install_is_back

	echo "# runtime: $((SECONDS - started)) s"
	finish
}

main "$@"
