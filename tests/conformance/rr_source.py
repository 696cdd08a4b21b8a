"""rr's sources, from Debian's source package: fetched with apt at run time
(never kept in this repository), checked against the SHA256 that Debian's
signed source index gives, unpacked and cached under CACHE/rr-src/SUITE/."""
import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
import time

from bounded_command import run_quiet

MIRROR = os.environ.get("REWIND_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# The machine's suite first; when its tarball cannot be downloaded, the next.
DEFAULT_SUITES = "bookworm,trixie"


class SourceUnavailable(Exception):
    """rr's sources can be neither fetched nor found in the cache: the corpus
    cannot run here, which is a skip (exit 77), not a failure."""


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def apt_options(aptdir):
    """A private apt configuration: its own sources.list, lists and caches, so
    that the system's apt setup is neither read nor changed."""
    opts = ["-o", f"Dir::Etc::sourcelist={aptdir}/sources.list", "-o", "Dir::Etc::sourceparts=-",
            "-o", f"Dir::State::Lists={aptdir}/lists", "-o", f"Dir::Cache={aptdir}/cache",
            "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache="]
    if os.geteuid() == 0:
        # apt's download sandbox user (_apt) could not write into our cache.
        opts += ["-o", "APT::Sandbox::User=root"]
    return opts


def _tarball_in_index(opts, notes, suite):
    """(tarball name, its SHA256, Debian version) as the suite's source index
    lists them, or None."""
    # In an empty directory: apt omits the files already there from --print-uris.
    with tempfile.TemporaryDirectory(prefix="conf-uris-") as empty:
        rc, out = run_quiet(["apt-get"] + opts + ["source", "--print-uris", "rr"], timeout=120, cwd=empty)
    if rc != 0:
        notes.append(f"{suite}: no rr source package: {out.strip()[-300:]}")
        return None
    tarball = expected = debver = None
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].startswith("'"):
            name = fields[1]
            if re.match(r"rr_[^_]+\.orig\.tar\.(gz|xz|bz2)$", name) and fields[3].startswith("SHA256:"):
                tarball, expected = name, fields[3][len("SHA256:"):]
            m = re.match(r"rr_(.+)\.dsc$", name)
            if m:
                debver = m.group(1)
    if not tarball:
        notes.append(f"{suite}: the source index lists no SHA256 for rr's orig tarball")
        return None
    return tarball, expected, debver


def _unpack(path, tree, tarball, suite, notes):
    """Unpacks rr's tarball into tree (through a temporary directory, so that a
    half-unpacked tree is never taken for a good one); False if it is not rr's."""
    tmp = tree + ".unpacking"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with tarfile.open(path) as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(tmp, filter="data")
        else:
            tf.extractall(tmp)
    tops = os.listdir(tmp)
    if len(tops) != 1 or not os.path.isfile(os.path.join(tmp, tops[0], "CMakeLists.txt")):
        shutil.rmtree(tmp, ignore_errors=True)
        notes.append(f"{suite}: {tarball} does not hold rr's source tree")
        return False
    shutil.rmtree(tree, ignore_errors=True)
    os.rename(os.path.join(tmp, tops[0]), tree)
    shutil.rmtree(tmp, ignore_errors=True)
    return True


def fetch_from_suite(cache, suite, notes):
    """Downloads and unpacks rr's upstream tarball from one Debian suite; returns
    the source record, or None (with the reason appended to notes)."""
    aptdir = os.path.join(cache, "apt-src", suite)
    srcdir = os.path.join(cache, "rr-src", suite)
    os.makedirs(os.path.join(aptdir, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(aptdir, "cache", "archives", "partial"), exist_ok=True)
    os.makedirs(srcdir, exist_ok=True)
    with open(os.path.join(aptdir, "sources.list"), "w") as f:
        f.write(f"deb-src {MIRROR} {suite} main\n")
    opts = apt_options(aptdir)
    # apt checks the index's signature with the system's keyring; the tarball's
    # SHA256 below comes from that signed index.
    rc, out = run_quiet(["apt-get"] + opts + ["update", "-qq"], timeout=300)
    lists = os.path.join(aptdir, "lists")
    if rc == 0 and not any("Sources" in f for f in os.listdir(lists)):
        rc = 1  # apt may report a failed download as a warning only
    if rc != 0:
        notes.append(f"{suite}: cannot read Debian {suite}'s source index: {out.strip()[-300:]}")
        return None
    listed = _tarball_in_index(opts, notes, suite)
    if not listed:
        return None
    tarball, expected, debver = listed
    upstream = re.match(r"rr_(.+)\.orig\.tar", tarball).group(1)
    path = os.path.join(srcdir, tarball)
    have = sha256_of(path) if os.path.exists(path) else None
    if have != expected:
        if os.path.exists(path):
            os.unlink(path)
        # Only the upstream tarball is needed (on some mirrors the only file
        # served): apt reports the missing .dsc and Debian diff, which is fine
        # once the tarball's checksum matches.
        what = f"rr={debver}" if debver else "rr"
        rc, out = run_quiet(["apt-get"] + opts + ["source", "--download-only", "-qq", what],
                            timeout=600, cwd=srcdir)
        if not os.path.exists(path):
            errs = [l for l in out.splitlines() if tarball in l] or out.strip().splitlines()[-1:]
            notes.append(f"{suite}: downloading {tarball} failed: {' '.join(errs)[:300]}")
            return None
        have = sha256_of(path)
        if have != expected:
            os.unlink(path)
            notes.append(f"{suite}: {tarball} has SHA256 {have}, the source index says {expected}")
            return None
    tree = os.path.join(srcdir, f"rr-{upstream}")
    if not os.path.isfile(os.path.join(tree, "CMakeLists.txt")):
        if not _unpack(path, tree, tarball, suite, notes):
            return None
    record = {"suite": suite, "debian_version": debver, "upstream_version": upstream,
              "tarball": path, "sha256": have, "tree": tree,
              "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(os.path.join(srcdir, "source.json"), "w") as f:
        json.dump(record, f, indent=2)
    return record


def cached_source(cache, suite):
    """A source tree fetched and verified before, if its tarball still matches."""
    try:
        with open(os.path.join(cache, "rr-src", suite, "source.json")) as f:
            rec = json.load(f)
        if (os.path.isfile(os.path.join(rec["tree"], "CMakeLists.txt"))
                and sha256_of(rec["tarball"]) == rec["sha256"]):
            return rec
    except (OSError, ValueError, KeyError):
        pass
    return None


def get_rr_source(cache, suites, offline):
    """The first suite whose tarball can be fetched (or, offline or when the
    fetch fails, was fetched and verified before). Returns (record, notes);
    raises SourceUnavailable with every suite's reason."""
    notes = []
    for suite in suites:
        if not offline:
            try:
                rec = fetch_from_suite(cache, suite, notes)
            except OSError as e:
                notes.append(f"{suite}: {e}")
                rec = None
            if rec:
                return rec, notes
        rec = cached_source(cache, suite)
        if rec:
            notes.append(f"{suite}: using the cached, verified source fetched {rec['fetched']}")
            return rec, notes
        if offline:
            notes.append(f"{suite}: nothing cached")
    raise SourceUnavailable("cannot fetch rr's sources from Debian's package registry: " + "; ".join(notes))
