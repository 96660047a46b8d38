#!/bin/bash
# Installs what building and testing bloomfilter needs, from Debian's
# packages, when it is missing.  Extra package names may be given as
# arguments (the benchmark adds postgresql-15-hll, for instance).
set -eu

packages=(make gcc postgresql-15 postgresql-server-dev-15 postgresql-contrib libxxhash-dev "$@")
missing=()
for package in "${packages[@]}"; do
	dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
