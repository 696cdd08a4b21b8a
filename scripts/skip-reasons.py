#!/usr/bin/env python3
"""Prints why tests, or checks inside them, were skipped: CTest shows no
output for a skipped test, and a skip must never look like a pass. Reads
CTest's log of the last run (Testing/Temporary/LastTest.log)."""
import re
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "Testing/Temporary/LastTest.log"
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return 0
    # (test, reason) -> the checks skipped for it, in order
    reasons = {}
    test = None
    for line in text.splitlines():
        m = re.match(r"^\d+/\d+ Testing: (\S+)", line)
        if m:
            test = m.group(1)
            continue
        m = re.match(r"^SKIP(?: (\S+))?: (.*)", line)
        if m and test:
            reasons.setdefault((test, m.group(2)), []).append(m.group(1))
    if reasons:
        print("Skipped, and why:")
    for (test, reason), checks in reasons.items():
        named = [c for c in checks if c]
        print(f"  {test}" + (f" ({', '.join(named)})" if named else "") + f": {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
