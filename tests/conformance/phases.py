"""One test's phases: its program natively, under `rewind record`, and under
`rewind replay --autopilot`, each isolated (isolation.py), and the class the
test ends in (outcome_classes.py; README.md says when each is given)."""
import json
import os
import shutil
import threading

from isolation import copy_executable
from outcome_classes import PASSED, RECORD_REFUSAL_REPLAY_STATUS, RECORD_REFUSED, REPLAY_EXIT_CLASSES
from phase_output import (describe_status, first_difference, last_lines, one_line, read_bytes,
                          rewind_messages)

# rr's tests print this when they succeed.
TOKEN = b"EXIT-SUCCESS"
# Failing tests' traces larger than this are deleted after the test.
MAX_KEPT_TRACE = 256 << 20


def log(msg):
    print(msg, flush=True)


class Finished(Exception):
    """A phase settled the test's class: the later phases do not run."""


class PhaseRunner:
    """Runs tests of the corpus (one call of test() per test, from several
    threads) with one rewind; args gives the work directory, the timeout per
    phase, --keep and --strict-native."""

    def __init__(self, args, binaries, expected, isolated):
        self.args = args
        self.bins = binaries
        self.expected = expected
        self.isolated = isolated
        self.rewind = args.rewind
        self.base_env = dict(os.environ)
        self.base_env["LC_ALL"] = "C"
        self.progress_lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.stopping = False

    def phase_dir(self, name, phase):
        """A fresh, empty directory to run the phase in: what a test leaves
        behind (files, sockets) never meets the next phase."""
        d = os.path.join(self.args.work, name, phase)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def env_for(self, name):
        env = dict(self.base_env)
        env["REWIND_DIR"] = os.path.join(self.args.work, name, "rewind-dir")
        return env

    def run_phase(self, name, phase, argv, cwd, timeout):
        if self.stopping:
            raise RuntimeError("interrupted")
        res = self.isolated.run(argv, cwd, self.env_for(name), timeout,
                                os.path.join(cwd, "..", phase + ".out"), os.path.join(cwd, "..", phase + ".err"),
                                f"{name}/{phase}")
        res["stdout"] = os.path.join(self.args.work, name, phase + ".out")
        res["stderr"] = os.path.join(self.args.work, name, phase + ".err")
        return res

    def trace_exit(self, name, trace):
        """The recorded program's exit status per the trace (negative: signal), and info."""
        if not os.path.isdir(trace):
            return None, None
        out = os.path.join(self.args.work, name, "info.json")
        self.isolated.run([self.rewind, "info", "--json", trace], os.path.join(self.args.work, name),
                          self.env_for(name), 60, out, out + ".err", f"{name}/info")
        try:
            with open(out) as f:
                info = json.load(f)
        except (OSError, ValueError):
            return None, None
        ex = info.get("exit") or {}
        if ex.get("signaled"):
            return -int(ex.get("signal", 0)), info
        if "code" in ex:
            return int(ex["code"]), info
        return None, info

    def test(self, name):
        """Runs one test's phases; returns its result (name, class, message,
        phases), whatever happens, and prints a line of progress."""
        result = {"name": name, "phases": {}}
        try:
            self._test(name, result)
        except Finished:
            pass
        except Exception as e:  # the runner must go on whatever one test does
            result = {"name": name, "class": "runner-error", "message": f"{type(e).__name__}: {e}", "phases": {}}
        self.finish(result)
        with self.progress_lock:
            self.done += 1
            total = sum(p.get("duration", 0) for p in result.get("phases", {}).values())
            log(f"[{self.done:3d}/{self.total}] {name:32s} {result['class']:24s} {total:6.1f}s  "
                f"{result.get('message', '')[:110]}")
        return result

    def _test(self, name, result):
        testdir = os.path.join(self.args.work, name)
        shutil.rmtree(testdir, ignore_errors=True)
        os.makedirs(testdir)
        nat = self._native(name, result)
        trace = os.path.join(testdir, "trace")
        rec, rec_out, changed = self._record(name, result, trace, nat)
        if result.get("record_refusal"):
            self._refused_replay(name, result, trace)
        cls, msg = self._replay(name, result, trace, rec["rc"], rec_out, rec["duration"])
        result["replay_class"] = cls
        if changed:
            result["class"] = "record-changes-behaviour"
            result["message"] = changed + f" [replay: {cls}" + (f": {one_line(msg)}" if msg else "") + "]"
        else:
            result["class"] = cls
            result["message"] = msg if cls in PASSED else one_line(msg) if "\n" in msg else msg
            if msg and "\n" in msg:
                result["message_full"] = msg

    @staticmethod
    def _settle(result, cls, message):
        result["class"] = cls
        result["message"] = message
        raise Finished()

    def _native(self, name, result):
        """1. The program alone: a test that does not pass natively is outside the score."""
        cwd = self.phase_dir(name, "native")
        copy_executable(self.bins[name], os.path.join(cwd, name))
        nat = self.run_phase(name, "native", ["./" + name], cwd, self.args.timeout)
        nat_out = read_bytes(nat["stdout"])
        result["phases"]["native"] = phase_summary(nat)
        # rr's own criterion is EXIT-SUCCESS on stdout (a few tests then die of a
        # signal on purpose, e.g. abort); --strict-native also wants exit 0.
        if nat["timed_out"] or TOKEN not in nat_out or (self.args.strict_native and nat["rc"] != 0):
            why = ("timed out" if nat["timed_out"] else describe_status(nat["rc"])) + \
                  ("" if TOKEN in nat_out else ", no EXIT-SUCCESS")
            tail = last_lines(read_bytes(nat["stderr"])) or last_lines(nat_out)
            self._settle(result, "native-fails", why + (f": {tail}" if tail else ""))
        return nat

    def _record(self, name, result, trace, nat):
        """2. rewind record: its exit status must be the recorded program's (as
        the trace gives it). Returns the phase, its stdout, and how the recorded
        program behaved otherwise than the native one (None when it did not)."""
        timeout = self.args.timeout
        cwd = self.phase_dir(name, "record")
        copy_executable(self.bins[name], os.path.join(cwd, name))
        rec = self.run_phase(name, "record", [self.rewind, "record", "-o", trace, "--", "./" + name], cwd, timeout)
        rec_out = read_bytes(rec["stdout"])
        rec_err = read_bytes(rec["stderr"])
        msgs = rewind_messages(rec_err)
        summary = phase_summary(rec)
        summary["rewind_messages"] = msgs[:5]
        result["phases"]["record"] = summary
        first = f"; {one_line(msgs[0])}" if msgs else ""
        if rec["timed_out"]:
            self._settle(result, "record-hang", f"rewind record did not finish in {timeout} s" + first)
        prog_rc, info = self.trace_exit(name, trace)
        if info:
            summary["trace"] = {k: info.get(k) for k in ("status", "events", "processes", "threads", "problems",
                                                         "warnings", "unknown_effects", "exit")}
        rc = rec["rc"]
        refusal = (info or {}).get("refusal")
        if rc == RECORD_REFUSED and refusal:
            # rewind record stopped the program at something it cannot
            # record, said so and kept the trace up to there: a refusal, if
            # the replay of that trace ends there too (_refused_replay).
            result["record_refusal"] = refusal
            return rec, rec_out, None
        if prog_rc is None or rc != prog_rc:
            if rc is not None and rc < 0:
                self._settle(result, "record-crash", f"rewind record {describe_status(rc)}" +
                             (f" (the program: {describe_status(prog_rc)})" if prog_rc is not None else "") + first)
            self._settle(result, "record-fail", one_line(msgs[0]) if msgs else
                         f"rewind record {describe_status(rc)}, the trace says the program: {describe_status(prog_rc)}")
        changed = None
        if rc != nat["rc"] or TOKEN not in rec_out:
            prog_err = b"\n".join(l for l in rec_err.split(b"\n") if not l.startswith(b"rewind:"))
            tail = last_lines(prog_err) or last_lines(rec_out)
            changed = (f"under recording the program: {describe_status(rc)}"
                       + ("" if TOKEN in rec_out else ", no EXIT-SUCCESS")
                       + f" (native: {describe_status(nat['rc'])})" + (f": {tail}" if tail else ""))
        return rec, rec_out, changed

    def _refused_replay(self, name, result, trace):
        """3, for a recording rewind refused: the replay of the trace kept runs up
        to the refusal and stops there, saying why (92, the recording ends
        early). Then the test is a refusal (expected, when listed); otherwise
        the replay's class, with the refusal in the message."""
        why = result["record_refusal"]["why"]
        timeout = self.args.timeout
        cwd = self.phase_dir(name, "replay")
        watchdog = max(5, timeout * 2 // 3)
        rep = self.run_phase(name, "replay", [self.rewind, "replay", "--autopilot", "--watchdog", str(watchdog),
                                              trace], cwd, timeout)
        rmsgs = rewind_messages(read_bytes(rep["stderr"]))
        summary = phase_summary(rep)
        summary["rewind_messages"] = rmsgs[:5]
        result["phases"]["replay"] = summary
        if rep["timed_out"]:
            cls, msg = "replay-hang", f"rewind replay --autopilot did not finish in {timeout} s"
        elif rep["rc"] == RECORD_REFUSAL_REPLAY_STATUS and any(why in m for m in rmsgs):
            cls = "expected-refusal" if name in self.expected else "refused"
            if name in self.expected:
                result["expected_reason"] = self.expected[name]
            self._settle(result, cls, "rewind record: " + one_line(why))
        else:
            cls = REPLAY_EXIT_CLASSES.get(rep["rc"], "replay-fail")
            msg = f"{describe_status(rep['rc'])}" + (f": {one_line(rmsgs[0])}" if rmsgs else "")
        self._settle(result, cls, f"refused while recording ({one_line(why)}), but its replay: {msg}")

    def _replay(self, name, result, trace, rc, rec_out, rec_duration):
        """3. rewind replay --autopilot: the same exit status and, byte for byte,
        the same stdout as the recorded run (not the native one, which may print
        other pids or addresses). Returns (class, message).

        A replay may take longer than its recording (ten million syscalls, a
        signal found again in a loop without a PMU): it gets REPLAY_SLOWDOWN
        times the recording's time if that is more than the phase timeout. A
        replay that is stuck still ends at its watchdog, well before."""
        timeout = max(self.args.timeout, min(int(REPLAY_SLOWDOWN * (rec_duration or 0)), 10 * self.args.timeout))
        cwd = self.phase_dir(name, "replay")
        # Below the phase timeout, so that a stuck thread is reported as such.
        watchdog = max(5, self.args.timeout * 2 // 3)
        rep = self.run_phase(name, "replay", [self.rewind, "replay", "--autopilot", "--watchdog", str(watchdog),
                                              trace], cwd, timeout)
        rep_out = read_bytes(rep["stdout"])
        rmsgs = rewind_messages(read_bytes(rep["stderr"]))
        summary = phase_summary(rep)
        summary["rewind_messages"] = rmsgs[:5]
        result["phases"]["replay"] = summary
        rrc = rep["rc"]
        first = rmsgs[0] if rmsgs else ""
        if rep["timed_out"]:
            return "replay-hang", f"rewind replay --autopilot did not finish in {timeout} s" + \
                (f"; {one_line(first)}" if first else "")
        if rrc in REPLAY_EXIT_CLASSES:
            cls = REPLAY_EXIT_CLASSES[rrc]
            if cls == "refused" and name in self.expected:
                cls = "expected-refusal"
                result["expected_reason"] = self.expected[name]
            return cls, first or f"exit {rrc}"
        if rrc == rc and rep_out == rec_out:
            return "pass", ""
        if rrc == rc:
            return "output-differs", first_difference(rec_out, rep_out)
        if rrc is not None and rrc < 0:
            return "replay-crash", f"rewind replay {describe_status(rrc)}, recorded {describe_status(rc)}" + \
                (f"; {one_line(first)}" if first else "")
        if first:
            return "replay-fail", f"{describe_status(rrc)}: {first}"
        return "output-differs", f"replay {describe_status(rrc)}, recorded {describe_status(rc)}" + \
            ("" if rep_out == rec_out else "; " + first_difference(rec_out, rep_out))

    def finish(self, result):
        """What is kept of a test: a failing test's directory (traces, each
        phase's output) for a look; a passing one's only with --keep."""
        keep = self.args.keep or result["class"] not in PASSED + ["native-fails"]
        result["kept"] = keep
        if not keep and result["class"] == "native-fails":
            shutil.rmtree(os.path.join(self.args.work, result["name"]), ignore_errors=True)
        # A huge trace (large_hole maps a 100 GiB sparse file) is not kept: the
        # disk would fill over a run. The logs of the phases stay.
        trace = os.path.join(self.args.work, result["name"], "trace")
        size = dir_size(trace)
        if size > MAX_KEPT_TRACE and result["class"] not in PASSED:
            shutil.rmtree(trace, ignore_errors=True)
            result["trace_removed_bytes"] = size
        return result


def dir_size(path):
    """Bytes a directory takes on disk (a sparse file counts what it holds)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


# How much longer than its recording a replay may take (see _replay).
REPLAY_SLOWDOWN = 8


def phase_summary(res):
    return {"rc": res["rc"], "status": describe_status(res["rc"]) if not res["timed_out"] else "timed out",
            "timed_out": res["timed_out"], "duration": res["duration"], "leftovers_killed": res["leftovers"]}
