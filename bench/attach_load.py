#!/usr/bin/env python3
"""A server under load while rewind attaches, records and detaches: a
bounded load generator on loopback (closed loop, --clients connections
with one request in flight each) runs throughout; rewind attaches to the
serving process after --before seconds, records for --seconds, detaches,
and the load goes on for --after seconds. Printed per server: requests per
second before, while recorded and after the detach, their ratios, failed
requests (errors, wrong answers, timeouts), and the attach pause.

  bench/attach_load.py --rewind build/cli/rewind [--servers nginx,redis,python] [--seconds 30]
      [--window 10s]

With --window, rewind records as a flight recorder (record --window): the
start images it takes while recording are part of what the load sees.

Servers are Debian's (scripts/install-deps.sh installs them): nginx with
one worker (rewind attaches to the worker), nginx-tree (a master and two
workers, rewind record --pid MASTER --tree), redis-server (its main
thread serves; rewind records all its threads), python3 -m http.server.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BODY = b"rewind attach load\n" * 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, deadline=15):
    end = time.time() + deadline
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


class Http:
    """Keep-alive HTTP/1.1 GETs of one file; checks status and body."""

    def __init__(self, port, path):
        self.port, self.path, self.sock = port, path, None

    def request(self):
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            self.buf = b""
        self.sock.sendall(f"GET {self.path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        while b"\r\n\r\n" not in self.buf:
            self.recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        while len(self.buf) < length:
            self.recv()
        body, self.buf = self.buf[:length], self.buf[length:]
        if not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(b"\r\n")[0] or body != BODY:
            raise ValueError("wrong answer")
        # (An HTTP/1.0 server, python's http.server, closes after each answer.)
        if b"connection: close" in head.lower() or head.startswith(b"HTTP/1.0"):
            self.close()

    def recv(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        self.buf += data

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None


class Redis:
    """SET then GET of a key of the client's own over one connection."""

    def __init__(self, port, key):
        self.port, self.key, self.sock, self.n = port, key, None, 0

    def request(self):
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.n += 1
        value = str(self.n).encode()
        k = self.key.encode()
        cmd = (b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n"
               % (len(k), k, len(value), value, len(k), k))
        self.sock.sendall(cmd)
        want = b"+OK\r\n$%d\r\n%s\r\n" % (len(value), value)
        got = b""
        while len(got) < len(want):
            data = self.sock.recv(4096)
            if not data:
                raise ConnectionError("closed")
            got += data
        if got != want:
            raise ValueError("wrong answer")

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None


def client(make, done, failed, stop):
    c = make()
    while not stop.is_set():
        try:
            c.request()
            with done.get_lock():
                done.value += 1
        except Exception:
            with failed.get_lock():
                failed.value += 1
            c.close()
            time.sleep(0.01)
    c.close()


def served_directory(work):
    """A directory holding the file the HTTP clients fetch, and a port."""
    root = os.path.join(work, "www")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "f.txt"), "wb") as f:
        f.write(BODY)
    return root, free_port()


def start_nginx(work, workers=1):
    root, port = served_directory(work)
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes {workers}; pid {work}/nginx.pid; error_log {work}/error.log;
user root;
events {{ worker_connections 256; }}
http {{ access_log off; server {{ listen 127.0.0.1:{port}; root {root}; keepalive_requests 1000000; }} }}
""")
    p = subprocess.Popen(["nginx", "-c", conf, "-p", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    time.sleep(0.3)  # (its workers started)
    worker = int(subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()[0])
    # With several workers, rewind attaches to the master and every worker (--tree).
    return p, worker if workers == 1 else p.pid, lambda i: Http(port, "/f.txt")


def start_nginx_tree(work):
    return start_nginx(work, workers=2)


def start_redis(work):
    port = free_port()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", work], stdout=subprocess.DEVNULL)
    wait_port(port)
    return p, p.pid, lambda i: Redis(port, f"client{i}")


def start_python(work):
    root, port = served_directory(work)
    p = subprocess.Popen(["/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", str(port)], cwd=root,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return p, p.pid, lambda i: Http(port, "/f.txt")


SERVERS = {"nginx": start_nginx, "nginx-tree": start_nginx_tree, "redis": start_redis, "python": start_python}


def measure(rw, name, args, work):
    server, target, make = SERVERS[name](work)
    done = multiprocessing.Value("q", 0)
    failed = multiprocessing.Value("q", 0)
    stop = multiprocessing.Event()
    clients = [multiprocessing.Process(target=client, args=(lambda i=i: make(i), done, failed, stop))
               for i in range(args.clients)]
    try:
        for c in clients:
            c.start()
        time.sleep(1)  # warm-up
        t0, n0, f0 = time.time(), done.value, failed.value
        time.sleep(args.before)
        t1, n1, f1 = time.time(), done.value, failed.value
        trace = os.path.join(work, f"{name}-trace")
        window = ["--window", args.window] if args.window else ["--tree"] if name.endswith("-tree") else []
        rec = subprocess.Popen([rw, "record", "-q", "--pid", str(target), "--for", f"{args.seconds}s", *window, "-o",
                                trace], stderr=subprocess.PIPE)
        # While recorded: from the end of the attach (the trace's meta.json
        # is written then) to the detach.
        while not os.path.exists(os.path.join(trace, "meta.json")) and rec.poll() is None:
            time.sleep(0.01)
        t2, n2, f2 = time.time(), done.value, failed.value
        err = rec.communicate()[1]
        t3, n3, f3 = time.time(), done.value, failed.value
        if rec.returncode != 0:
            raise SystemExit(f"rewind record --pid failed on {name} (status {rec.returncode}): "
                             f"{err.decode(errors='replace')}")
        if os.environ.get("REWIND_RECORD_STATS"):
            sys.stderr.write(err.decode(errors="replace"))
        time.sleep(args.after)
        t4, n4, f4 = time.time(), done.value, failed.value
    finally:
        stop.set()
        for c in clients:
            c.join(10)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    meta = json.load(open(os.path.join(trace, "meta.json")))
    end = json.load(open(os.path.join(trace, "end.json")))
    before = (n1 - n0) / (t1 - t0)
    during = (n3 - n2) / (t3 - t2)
    after = (n4 - n3) / (t4 - t3)
    return {"server": name, "before": before, "during": during, "after": after,
            "failed": f4 - f0, "pause_ms": meta["attached"]["pause_seconds"] * 1e3,
            "events": end.get("events", 0), "recorded_s": t3 - t2,
            "images": end.get("window", {}).get("images_taken", 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--servers", default="nginx,redis,python")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--before", type=float, default=10)
    ap.add_argument("--after", type=float, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--window", help="record as a flight recorder with this window (10s)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root (rewind record --pid, and nginx's listening as root here)")
    print(f"{args.clients} clients, closed loop on loopback; {args.before:.0f} s before, "
          f"{args.seconds:.0f} s recorded{f' (--window {args.window})' if args.window else ''}, "
          f"{args.after:.0f} s after the detach")
    print("| server | req/s before | while recorded | after detach | recorded ÷ before | failed | pause (kept image) "
          "| events kept | start images |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.servers.split(","):
        if name not in SERVERS:
            raise SystemExit(f"unknown server {name} ({', '.join(SERVERS)})")
        if not shutil.which({"nginx": "nginx", "nginx-tree": "nginx", "redis": "redis-server",
                             "python": "python3"}[name]):
            print(f"| {name} | not installed (scripts/install-deps.sh) |")
            continue
        work = tempfile.mkdtemp(prefix=f"rewind-attach-load-{name}-")
        try:
            r = measure(args.rewind, name, args, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"| {r['server']} | {r['before']:.0f} | {r['during']:.0f} | {r['after']:.0f} | "
              f"{r['during'] / r['before']:.2f} | {r['failed']} | {r['pause_ms']:.0f} ms | {r['events']} | "
              f"{r['images']} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
