"""The gdb phase, for a sample of the passing tests: their traces replayed
under gdb (`rewind replay TRACE -- -batch ...`), forwards to main, one
instruction back, forwards again and on to the end. A test whose replay
passed but fails here becomes gdb-fails."""
import os
import re

from phase_output import INFO_LINE, describe_status, read_bytes
from phases import phase_summary

# The program's own signals (self_sigint, alarms, SIGSEGV handlers) are passed without stopping.
GDB_COMMANDS = ["handle all nostop noprint pass", "handle SIGINT nostop noprint pass",
                "break main", "continue", "reverse-stepi", "continue", "delete", "continue",
                # SIGTRAP (a program's own int3) always stops gdb: go on past a few.
                "continue", "continue", "continue"]
GDB_PROBLEM = re.compile(r"^(Cannot |Could not |Remote connection closed|Remote communication error|"
                         r"Remote failure|.*[Ee]rror\b|Target .* not supported|Warning:$)")


def pick_sample(results, n):
    """n passing tests spread evenly over the list in name order (the same
    tests from run to run while the same tests pass)."""
    passing = sorted((r for r in results if r["class"] == "pass"), key=lambda r: r["name"])
    k = min(n, len(passing))
    return [passing[(i * len(passing)) // k] for i in range(k)] if k else []


def problems_under_gdb(g, out, err, rec_out):
    """What went wrong in a gdb run (empty when it passed): gdb's status, the
    breakpoint at main hit before and after reverse-stepi, no error line, the
    end of the recording reached, the recorded output replayed in order."""
    problems = []
    if g["timed_out"]:
        problems.append("gdb did not finish")
    elif g["rc"] != 0:
        problems.append(f"gdb {describe_status(g['rc'])}")
    hits = len(re.findall(r"^Breakpoint 1, (0x[0-9a-f]+ in )?main ", out, re.M))
    if hits < 2:
        problems.append(f"main's breakpoint hit {hits} times, expected 2 (before and after reverse-stepi)")
    for line in out.splitlines() + err.decode("utf-8", "replace").splitlines():
        if GDB_PROBLEM.match(line) or (line.startswith("rewind:") and not INFO_LINE.match(line)
                                       and "reverse execution" not in line):
            problems.append(line.strip()[:200])
            break
    if not re.search(r"No more reverse-execution history|\[Inferior 1 \(.*\) exited", out):
        problems.append("the replay did not reach the end of the recording")
    # The program's output (on rewind's stderr under gdb) holds the recorded stdout's lines in order.
    err_lines = err.split(b"\n")
    pos = 0
    for line in rec_out.split(b"\n"):
        if not line:
            continue
        try:
            pos = err_lines.index(line, pos) + 1
        except ValueError:
            problems.append(f"recorded output line missing under gdb: {line[:80]!r}")
            break
    return problems


def check_under_gdb(phases, result):
    """Replays a passing test's trace under gdb (phases: the PhaseRunner that
    recorded it); updates and returns its result."""
    name = result["name"]
    work = phases.args.work
    trace = os.path.join(work, name, "trace")
    cwd = phases.phase_dir(name, "gdb")
    argv = [phases.rewind, "replay", trace, "--", "-batch"]
    for c in GDB_COMMANDS:
        argv += ["-ex", c]
    # As long as the replay alone may take (phases.py, _replay), and more.
    replayed = (result.get("phases", {}).get("replay") or {}).get("duration") or 0
    g = phases.run_phase(name, "gdb", argv, cwd, max(60, 2 * phases.args.timeout, int(3 * replayed)))
    out = read_bytes(g["stdout"]).decode("utf-8", "replace")
    err = read_bytes(g["stderr"])
    rec_out = read_bytes(os.path.join(work, name, "record.out"))
    problems = problems_under_gdb(g, out, err, rec_out)
    result["phases"]["gdb"] = phase_summary(g)
    result["gdb"] = {"ok": not problems, "problems": problems}
    if problems:
        result["class"] = "gdb-fails"
        result["message"] = "; ".join(problems)[:400]
        result["kept"] = True
    return result
