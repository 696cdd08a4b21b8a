"""The two lists kept beside the runner: a subset of tests to run (one name a
line, as check_subset.txt), and the reviewed expected refusals (`name  reason`
a line, as expected_refusals.txt). In both, `#` starts a comment and an x86/
prefix may be given or not."""
import os


class BadList(Exception):
    """A list that does not say what it must (an expected refusal without its reason)."""


def read_names(path):
    names = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(os.path.basename(line.split()[0]))
    return names


def read_expected(path):
    """{test: reason}. Every entry must give its reason: the list is reviewed,
    and a refusal nobody can explain is a failure, not an expectation."""
    expected = {}
    missing = []
    if path and os.path.exists(path):
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.split(None, 1)
                reason = parts[1].strip() if len(parts) > 1 else ""
                if not reason:
                    missing.append(f"{path}:{number}: {parts[0]}")
                expected[os.path.basename(parts[0])] = reason
    if missing:
        raise BadList("expected refusals without a reason: " + ", ".join(missing))
    return expected
