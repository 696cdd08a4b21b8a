"""Reading what a phase left: the program's output, rewind's own error lines
(without its informational ones), and one-line descriptions of statuses and
differences for the table."""
import re
import signal

# rewind's informational stderr lines (not errors).
INFO_LINE = re.compile(r"^rewind: (recorded \d+ events|supervisor:|reads of files:|parallel threads:|"
                       r"warning: this machine does not trap rdtsc)")


def read_bytes(path, limit=None):
    try:
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit)
    except OSError:
        return b""


def rewind_messages(stderr_bytes):
    """rewind's error lines on stderr, each with its indented continuation lines."""
    msgs = []
    cur = None
    for line in stderr_bytes.decode("utf-8", "replace").splitlines():
        if line.startswith("rewind:"):
            if INFO_LINE.match(line):
                cur = None
                continue
            cur = [line.rstrip()]
            msgs.append(cur)
        elif cur is not None and line.startswith((" ", "\t")) and len(cur) < 8:
            cur.append(line.rstrip())
        else:
            cur = None
    return ["\n".join(m) for m in msgs]


def one_line(msg):
    """First line of a message plus its first detail line, on one line."""
    if not msg:
        return ""
    lines = [l.strip() for l in msg.splitlines() if l.strip()]
    text = lines[0]
    if len(lines) > 1:
        text += " | " + lines[1]
    return text[:400]


def describe_status(rc):
    if rc is None:
        return "no status"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit {rc}"


def last_lines(data, n=2):
    lines = [l for l in data.decode("utf-8", "replace").splitlines() if l.strip()]
    return " / ".join(l.strip() for l in lines[-n:])[:300]


def first_difference(a, b):
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    line_no = a[:i].count(b"\n") + 1
    start = a.rfind(b"\n", 0, i) + 1
    exp = a[start:a.find(b"\n", i) if a.find(b"\n", i) >= 0 else len(a)]
    got = b[start:b.find(b"\n", i) if b.find(b"\n", i) >= 0 else len(b)]
    return (f"stdout differs at byte {i} (line {line_no}; recorded {len(a)} bytes, replayed {len(b)}): "
            f"expected {exp[:80]!r}, got {got[:80]!r}")
