"""Workloads of real threaded programs, shared by the checks
(tests/integration/check_parallel.py) and the benchmark (bench/compare.py):
Debian's python3 running threads that hash under a lock, and compressible
text for pigz and xz.

The python3 threads allocate (glibc's malloc gives each thread an arena at
its first allocation) and meet at a barrier before any of them works: a
thread that ends puts its arena on a list that glibc's own lock guards,
and a --parallel recording does not order that lock, so a thread starting
while another ends may be given another arena in replay (docs/commands.md).
"""
import os
import random

PYTHON_THREADS = """
import hashlib, sys, threading
rounds, every = int(sys.argv[1]), int(sys.argv[2])
lock, counted, digests = threading.Lock(), [0], {}
started = threading.Barrier(4)
def work(n):
    h = hashlib.sha256()
    started.wait()
    for i in range(rounds):
        h.update(str(i * n).encode())
        if i % every == 0:
            with lock:
                counted[0] += 1
    with lock:
        digests[n] = h.hexdigest()[:16]
threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(counted[0], sorted(digests.items()))
"""


def python3():
    """Debian's python3 rather than a version manager's shim script (which
    would be recorded as a shell starting python)."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"


def python_threads(rounds, every):
    """argv: 4 threads of `rounds` hash updates, taking the lock every `every`."""
    return [python3(), "-c", PYTHON_THREADS, str(rounds), str(every)]


def write_text(path, megabytes):
    """Words in a random order of a fixed seed, about `megabytes` MiB:
    compressible, and big enough that pigz and xz hand blocks to threads."""
    rng = random.Random(7)
    words = [f"w{n:x}" for n in range(5000)]
    with open(path, "w") as f:
        while f.tell() < megabytes << 20:
            f.write(" ".join(rng.choice(words) for _ in range(4096)) + "\n")
    return path
