#!/bin/sh
# Installs CRIU >= 4.1 for rewind's persistent landmarks, into a private prefix.
#
# Debian bookworm's criu (3.17) fails `criu check` on kernels from 6.13 on
# (their vDSO has a [vvar_vclock] mapping it does not know). CRIU 4.1.1 is
# built here from Debian trixie's source package with bookworm's build
# dependencies, and installed as $PREFIX/bin/criu (default /opt/rewind/criu),
# where `rewind doctor` and the landmark module look first.
#
# Idempotent and quick: does nothing when a criu >= 4.1 is already on PATH or
# in the prefix. Never fails: when something cannot be done (no network, no
# root, a checksum mismatch, a failed build) it prints a warning and exits 0;
# persistent landmarks are then unavailable and the tests that need CRIU skip.
#
# Environment: REWIND_CRIU_PREFIX (install prefix), REWIND_CACHE (download and
# build directory, default /var/cache/rewind), REWIND_DEBIAN_MIRROR.
set -u

PREFIX=${REWIND_CRIU_PREFIX:-/opt/rewind/criu}
CACHE=${REWIND_CACHE:-/var/cache/rewind}
MIRROR=${REWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
DEB_VERSION=4.1.1-1
UPSTREAM=4.1.1
TARBALL=criu_${UPSTREAM}.orig.tar.xz

BUILD_DEPS="
build-essential make pkg-config xz-utils
libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev protobuf-compiler python3-protobuf
libnl-3-dev libnet1-dev libcap-dev libbsd-dev libnftables-dev libgnutls28-dev libdrm-dev uuid-dev
"

give_up() {
    echo "criu: WARNING: $*" >&2
    echo "criu: WARNING: CRIU $UPSTREAM is not installed; persistent landmarks are unavailable and the tests" \
        "that need CRIU will skip (run scripts/install-criu.sh again to retry)" >&2
    exit 0
}

# Prints "MAJOR MINOR" of a criu binary, or nothing.
full_version() {
    "$1" --version 2>/dev/null | sed -n 's/^Version: *//p' | head -n 1
}

criu_version() {
    "$1" --version 2>/dev/null | sed -n 's/^Version: *\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1
}

recent_enough() {
    v=$(criu_version "$1")
    [ -n "$v" ] || return 1
    set -- $v
    [ "$1" -gt 4 ] || { [ "$1" -eq 4 ] && [ "$2" -ge 1 ]; }
}

if [ -x "$PREFIX/bin/criu" ] && recent_enough "$PREFIX/bin/criu"; then
    echo "criu: $PREFIX/bin/criu is CRIU $(full_version "$PREFIX/bin/criu")"
    exit 0
fi
on_path=$(command -v criu 2>/dev/null || true)
if [ -n "$on_path" ] && recent_enough "$on_path"; then
    echo "criu: $on_path is CRIU $(full_version "$on_path")"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        give_up "building CRIU needs root (apt-get, $PREFIX)"
    fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive

echo "criu: building CRIU $UPSTREAM from Debian $SUITE's source into $PREFIX"

missing=""
for p in $BUILD_DEPS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    echo "criu: installing build dependencies:$missing"
    $SUDO apt-get update -qq || give_up "apt-get update failed"
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing || give_up "installing$missing failed"
fi

# A private apt configuration that knows only trixie's sources: the system's
# sources, lists and caches stay as they are.
APT_DIR=$CACHE/apt-$SUITE
$SUDO mkdir -p "$APT_DIR/lists/partial" "$CACHE/src" || give_up "cannot create $CACHE"
echo "deb-src $MIRROR $SUITE main" | $SUDO tee "$APT_DIR/sources.list" >/dev/null
APT_OPTS="-o Dir::Etc::sourcelist=$APT_DIR/sources.list -o Dir::Etc::sourceparts=-
 -o Dir::State::Lists=$APT_DIR/lists -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
 -o APT::Sandbox::User=root"

tarball=$CACHE/src/$TARBALL
# The expected checksum comes from the signed Sources index (what the .dsc lists).
# shellcheck disable=SC2086
$SUDO apt-get $APT_OPTS update -qq || give_up "cannot read Debian $SUITE's source index from $MIRROR"
# shellcheck disable=SC2086
uris=$(cd "$CACHE/src" && apt-get $APT_OPTS source --print-uris "criu=$DEB_VERSION" 2>/dev/null) ||
    give_up "Debian $SUITE has no source package criu=$DEB_VERSION"
expected=$(echo "$uris" | awk -v f="$TARBALL" '$2 == f { sub(/^SHA256:/, "", $4); print $4 }')
[ -n "$expected" ] || give_up "the source index lists no SHA256 for $TARBALL"

have=""
[ -f "$tarball" ] && have=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$have" != "$expected" ]; then
    $SUDO rm -f "$tarball"
    # Only the upstream tarball is needed (and, on some mirrors, the only file
    # served): apt-get reports the missing .dsc and Debian diff, which is fine
    # once the tarball's checksum matches.
    # shellcheck disable=SC2086
    (cd "$CACHE/src" && $SUDO apt-get $APT_OPTS source --download-only -qq "criu=$DEB_VERSION" >/dev/null 2>&1)
    [ -f "$tarball" ] || give_up "downloading $TARBALL from $MIRROR failed"
    have=$(sha256sum "$tarball" | cut -d' ' -f1)
    if [ "$have" != "$expected" ]; then
        $SUDO rm -f "$tarball"
        give_up "$TARBALL has SHA256 $have, the source index says $expected"
    fi
fi
echo "criu: $TARBALL SHA256 $have (matches Debian $SUITE's source index)"

build=$CACHE/build
$SUDO rm -rf "$build"
$SUDO mkdir -p "$build" || give_up "cannot create $build"
$SUDO tar -xJf "$tarball" -C "$build" || give_up "cannot unpack $tarball"
log=$CACHE/criu-build.log
echo "criu: make criu (log: $log)"
if ! $SUDO sh -c "make -C '$build/criu-$UPSTREAM' -j$(nproc) criu >'$log' 2>&1"; then
    tail -n 20 "$log" >&2
    give_up "building CRIU failed (see $log)"
fi
$SUDO install -D -m 0755 "$build/criu-$UPSTREAM/criu/criu" "$PREFIX/bin/criu" || give_up "cannot install into $PREFIX"
$SUDO rm -rf "$build"
recent_enough "$PREFIX/bin/criu" || give_up "$PREFIX/bin/criu does not run"
echo "criu: installed $PREFIX/bin/criu (CRIU $(full_version "$PREFIX/bin/criu"))"
if ! $SUDO "$PREFIX/bin/criu" check >/dev/null 2>&1; then
    echo "criu: WARNING: \`$PREFIX/bin/criu check\` fails on this kernel; see \`rewind doctor\`" >&2
fi
exit 0
