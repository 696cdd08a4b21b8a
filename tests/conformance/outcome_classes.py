"""The classes a test ends in (README.md beside this file says when each is
given), in the order the table lists them."""

PASSED = ["pass", "expected-refusal"]
# These count against the exit status.
FAILING = ["record-hang", "record-crash", "record-fail", "record-changes-behaviour",
           "replay-hang", "replay-crash", "replay-fail", "diverge", "refused", "truncated",
           "stuck", "output-differs", "gdb-fails", "runner-error"]
# Outside the score: rewind is not to blame for these.
NOT_SCORED = ["native-fails", "build-failed"]
CLASS_ORDER = PASSED + FAILING + NOT_SCORED

# rewind replay --autopilot's exit statuses for what it reports itself.
REPLAY_EXIT_CLASSES = {90: "diverge", 91: "refused", 92: "truncated", 93: "stuck"}
# rewind record's status when it refused to record on (end.json's "refusal"
# says why), and the replay's of the trace it kept: it ends at the refusal.
RECORD_REFUSED = 91
RECORD_REFUSAL_REPLAY_STATUS = 92
