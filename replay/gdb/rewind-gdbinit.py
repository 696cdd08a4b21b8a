# rewind's gdb commands. Loaded by `rewind replay`; moves in time go
# through `starti` (a vRun that stops at once) so that gdb forgets its
# frames and refreshes what it knows, as for a new process.
import gdb


def _monitor(command, to_string=False):
    return gdb.execute("monitor " + command, to_string=to_string)


def _travel(check, move, arg, from_tty):
    verdict = _monitor(check + " " + arg, to_string=True).strip()
    if verdict != "ok":
        raise gdb.GdbError(verdict)
    gdb.execute("with confirm off -- starti " + move + " " + arg, from_tty)


class When(gdb.Command):
    """Show where the replay stands: the event, and the path inside it."""

    def __init__(self):
        super().__init__("when", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        _monitor("when")


class Goto(gdb.Command):
    """Go to an event of the recording, or a percentage of it: goto 1200, goto 50%."""

    def __init__(self):
        super().__init__("goto", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        arg = arg.strip()
        if not arg:
            raise gdb.GdbError("goto needs an event number or a percentage, such as `goto 50%`")
        _travel("check-goto", "goto", arg, from_tty)


class Checkpoint(gdb.Command):
    """Remember the current point of the replay; `restart N` comes back to it."""

    def __init__(self):
        super().__init__("checkpoint", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        _monitor("checkpoint")


class Restart(gdb.Command):
    """Go back to checkpoint N (see `info checkpoints`), or to the beginning."""

    def __init__(self):
        super().__init__("restart", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        _travel("check-restart", "restart", arg.strip() or "0", from_tty)


class InfoCheckpoints(gdb.Command):
    """List the checkpoints of this replay."""

    def __init__(self):
        super().__init__("info checkpoints", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        _monitor("info checkpoints")


class DeleteCheckpoint(gdb.Command):
    """Forget checkpoint N."""

    def __init__(self):
        super().__init__("delete checkpoint", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        _monitor("delete checkpoint " + arg.strip())


class ReverseWatch(gdb.Command):
    """Go back to where EXPR took the value it has now: the last state where
it was different; the next instruction changes it. EXPR is any expression
gdb can evaluate, function calls included: reverse-watch has_cycle(g)."""

    def __init__(self):
        super().__init__("reverse-watch", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        if not arg.strip():
            raise gdb.GdbError("reverse-watch needs an expression, such as `reverse-watch has_cycle(g)`")
        _monitor("reverse-watch " + arg.strip())
        # The replay moved under gdb: forget what it knew of registers and frames.
        gdb.execute("maintenance flush register-cache", to_string=True)
        gdb.execute("maintenance flush dcache", to_string=True)
        gdb.execute("frame", from_tty)


class ReverseOrigin(gdb.Command):
    """Where the value of LVALUE came from, hop by hop back from here: the
store that wrote it, the register it stored, the load, copy or syscall
before, until a syscall's result, a constant or the initial data (rewind
origin, in a replay of its own: this one stays here; `goto POSITION` goes
to a hop). Example: reverse-origin result"""

    def __init__(self):
        super().__init__("reverse-origin", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        import json
        import subprocess
        if not arg.strip():
            raise gdb.GdbError("reverse-origin needs an lvalue, such as `reverse-origin result`")
        status = json.loads(_monitor("rw-status", to_string=True).strip().splitlines()[-1])
        if ":a" in status["position"]:
            raise gdb.GdbError("this point is named by a snapshot of this session only; step once, or goto a "
                               "position `when` prints, then ask again")
        argv = [status["rewind"], "origin", status["trace"], arg.strip(), "--at", status["position"],
                "--pid", str(status["process"])]
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        gdb.write(done.stdout.decode(errors="replace"))
        if done.returncode != 0:
            raise gdb.GdbError("rewind origin failed (status %d)" % done.returncode)


When()
Goto()
ReverseOrigin()
ReverseWatch()
Checkpoint()
Restart()
InfoCheckpoints()
DeleteCheckpoint()
