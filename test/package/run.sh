#!/bin/bash
# test/package/run.sh: checks that bloomfilter packages as a Debian package.
#
# Builds postgresql-NN-bloomfilter, NN being pg_config's PostgreSQL major
# (test/lib.sh's pg_major), and bloomfilter-client (the client library, its
# header, the CLI and the Python module) with `dpkg-buildpackage -us -uc -b` in a copy of
# this tree, after generating its debian/control for NN from
# debian/control.in (the build itself runs the Makefile's REGRESS, the light
# pg_regress cases, through `pg_buildext installcheck`), installs the .deb,
# runs autopkgtest's debian/tests/installcheck and debian/tests/client on
# them, checks in a throwaway cluster on port 5551 that CREATE EXTENSION
# and a probe work from the packaged files, then purges the packages and
# reinstalls the make-installed
# copy that the other test suites use, so the machine is left as it was.
#
# Run as root on Debian, from any directory, after the extension
# has been built and installed with `make install` (scripts/test.sh does
# that).  Installs the Debian packages it needs.  Prints one line per check
# and ends with "N passed, N failed"; exits non-zero if a check failed.
set -u

PORT=5551
# Set by install_build_tools, for pg_config's major (and PG_MAJOR, PGBIN by
# test/lib.sh's ensure_postgresql).
PACKAGE=""
CLIENT_PACKAGE=bloomfilter-client
PG_CONFIG=${PG_CONFIG:-}
LIB_DIR=""
# The files the other suites need back once the package is gone.
INSTALLED_FILES=()

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/test/lib.sh"
DEFAULT_VERSION=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/bloomfilter.control")

work=""            # test/lib.sh's $WORK: the tree's copy, logs, the .deb, the cluster
source_dir=""      # the tree's copy, where the package is built
cluster=""         # the throwaway cluster's directory, in $work
cluster_running=""
deb_installed=""
restore_needed=""  # set once installing the package may have replaced files
restore_llvm=""    # "yes" if the make-installed copy had JIT bitcode
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
	local extension_dir
	ensure_build_tools build-essential dpkg-dev debhelper postgresql-server-dev-all python3 \
		help2man lintian man-db || return 1
	PACKAGE=postgresql-$PG_MAJOR-bloomfilter
	PG_CONFIG=$PGBIN/pg_config
	extension_dir=$("$PG_CONFIG" --sharedir)/extension
	LIB_DIR=$("$PG_CONFIG" --pkglibdir)
	INSTALLED_FILES=("$extension_dir/bloomfilter.control" "$extension_dir/bloomfilter--1.0.sql" "$extension_dir/bloomfilter--$DEFAULT_VERSION.sql" "$extension_dir/bloomfilter--1.0--1.1.sql" "$LIB_DIR/bloomfilter.so")
}

# Copies the tree without build products: with a VPATH build (what the
# pgxs addon does), a stale bloom.o in the source directory would be linked
# instead of a fresh one.  Untracked files are included because they may
# be work not committed yet (debian/ itself, before it is).
copy_tree() {
	source_dir=$work/bloomfilter
	mkdir -p "$source_dir"
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
	(cd "$source_dir" && PG_SUPPORTED_VERSIONS=$PG_MAJOR timeout 1800 dpkg-buildpackage -us -uc -b) \
		>"$work/build.log" 2>&1 && return 0
	show_log "$work/build.log" 60
	return 1
}

# pg_buildext prints pg_regress's summary between "### PostgreSQL NN
# installcheck ###" and "### End NN installcheck ###"; both must be there,
# or the suite was skipped (DEB_BUILD_OPTIONS=nocheck, say).  The summary
# reads "All N tests passed", with a "# " before it from PostgreSQL 16 on.
regression_ran_in_build() {
	local summary
	grep -q "^### End $PG_MAJOR installcheck ###\$" "$work/build.log" || return 1
	summary=$(grep -oE 'All [0-9]+ tests passed' "$work/build.log" | tail -n 1)
	[ -n "$summary" ] || return 1
	echo "  build log: $summary"
}

# The .deb's name follows debian/changelog's version.
find_deb() {
	local version arch
	version=$(dpkg-parsechangelog -l "$source_dir/debian/changelog" -S Version)
	arch=$(dpkg --print-architecture)
	deb=$work/${PACKAGE}_${version}_${arch}.deb
	client_deb=$work/${CLIENT_PACKAGE}_${version}_${arch}.deb
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
	local listing path multiarch
	multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
	listing=$(dpkg-deb -c "$client_deb" | awk '{ print $NF }')
	for path in /usr/bin/bloomfilter-cli /usr/include/bloomfilter.h \
		"/usr/lib/$multiarch/libbloomfilter.so.1" "/usr/lib/$multiarch/libbloomfilter.a" \
		/usr/lib/python3/dist-packages/bloomfilter.py /usr/share/doc/$CLIENT_PACKAGE/copyright \
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

install_package() {
	# Installing replaces the make-installed files, removing deletes them.
	restore_needed=1
	[ -e "$LIB_DIR/bitcode/bloomfilter.index.bc" ] && restore_llvm=yes
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" "$client_deb" \
		>"$work/install.log" 2>&1 || { show_log "$work/install.log"; return 1; }
	deb_installed=1
	package_installed "$PACKAGE" && package_installed "$CLIENT_PACKAGE"
}

# Whether dpkg knows the package in any state (half-installed too), once
# this run has tried to install it.
package_is_known() {
	[ -n "$restore_needed" ] && { dpkg -s "$PACKAGE" || dpkg -s "$CLIENT_PACKAGE"; } >/dev/null 2>&1
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

# Reinstalls the make-installed copy from the tree's copy, the way
# scripts/test.sh installs it (with_llvm=no), or with JIT bitcode if the
# copy found at the start had it.
restore_make_install() {
	local llvm=(with_llvm=no)
	[ "$restore_llvm" = yes ] && llvm=()
	make -s -C "$source_dir" PG_CONFIG="$PG_CONFIG" "${llvm[@]}" install >"$work/restore.log" 2>&1 ||
		{ show_log "$work/restore.log"; return 1; }
	restore_needed=""
}

make_install_is_back() {
	local path
	for path in "${INSTALLED_FILES[@]}"; do
		[ -f "$path" ] || { echo "  missing: $path"; return 1; }
		# Unowned again: a later dpkg operation must not delete it.
		! dpkg -S "$path" >/dev/null 2>&1 || { echo "  still owned by a package: $path"; return 1; }
	done
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
	[ -n "$restore_needed" ] && [ -n "$source_dir" ] && restore_make_install
	cleanup_clusters
}

main() {
	local started=$SECONDS
	if [ "$(id -u)" != 0 ]; then
		not_ok "run as root (installs and removes a package)"
		finish
	fi
	cleanup_on_exit cleanup
	# apt reads the local .deb as user _apt: make_workdir's is 755.
	make_workdir package || { not_ok "a temporary directory"; finish; }
	work=$WORK

	check "build tools installed (dpkg-dev, debhelper, postgresql-server-dev-all)" install_build_tools || finish
	# A package left by an interrupted run would hide whether the make
	# install is back at the end; this run purges it like its own.
	dpkg -s "$PACKAGE" >/dev/null 2>&1 && echo "# $PACKAGE was already installed: it will be purged"
	check "tree copied without build products" copy_tree || finish
	check "debian/control generated for PostgreSQL $PG_MAJOR (pg_buildext updatecontrol)" \
		generate_control || finish
	check "debian/changelog, META.json and bloomfilter.control agree on the version" versions_agree
	check "build dependencies satisfied (dpkg-checkbuilddeps)" \
		sh -c "cd '$source_dir' && dpkg-checkbuilddeps" || finish
	check "dpkg-buildpackage -us -uc -b succeeded" build_package || finish
	check "regression suite ran during the build and passed" regression_ran_in_build
	check "$PACKAGE .deb produced" find_deb || finish
	check ".deb ships the control file, install scripts, module, copyright and docs" deb_has_extension_files
	check ".deb depends on postgresql-$PG_MAJOR and not on libxxhash" deb_depends_right
	check "$CLIENT_PACKAGE .deb ships the library, header, CLI, Python module, copyright and manual page" \
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
	if [ -n "$restore_needed" ]; then
		check "make-installed copy restored (make install)" restore_make_install
	fi
	check "extension files back and owned by no package" make_install_is_back

	echo "# runtime: $((SECONDS - started)) s"
	finish
}

main "$@"
