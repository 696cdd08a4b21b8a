#!/bin/sh
# Installs, from Debian's packages, whatever rewind needs that is missing.
# Idempotent: installs nothing (and does not touch the network) when all is there.
# CRIU >= 4.1 (persistent landmarks) comes from scripts/install-criu.sh, which
# never fails: without it, the tests that need CRIU skip.
set -eu

here=$(dirname "$0")

PACKAGES="
build-essential cmake pkg-config make
clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev zlib1g-dev
libzstd-dev libxxhash-dev libfmt-dev libcli11-dev nlohmann-json3-dev libssl-dev
doctest-dev libbenchmark-dev libpfm4-dev libdw-dev libcapstone-dev
python3 strace gdb libc6-dbg gzip valgrind
coreutils grep sed gawk bash sqlite3 tar pigz xz-utils
nginx-light redis-server
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "deps: everything is installed"
    "$here/install-criu.sh"
    exit 0
fi

echo "deps: installing$missing"
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
"$here/install-criu.sh"
