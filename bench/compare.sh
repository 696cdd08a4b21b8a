#!/bin/sh
# make bench: timings side by side, written to docs/benchmarks.md.
set -eu
exec python3 "$(dirname "$0")/compare.py" "$@"
