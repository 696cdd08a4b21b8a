#!/bin/sh
# make demo: record the bundled graph example, then replay it exactly.
set -eu
REWIND=${1:-build/cli/rewind}
BUILD=${2:-build}
GRAPH=$BUILD/examples/graph
export REWIND_DIR=${REWIND_DIR:-$BUILD/demo-traces}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== rewind record -- graph"
echo "   (builds a DAG of 34,546 nodes edge by edge; one add_edge, chosen with"
echo "    getrandom(), closes a cycle, and the final check fails)"
status=0
"$REWIND" record -- "$GRAPH" >"$out/recorded.out" 2>"$out/recorded.err" || status=$?
cat "$out/recorded.out" "$out/recorded.err"
echo "(exit status $status, as without rewind)"
echo
echo "== rewind info latest"
"$REWIND" info latest | sed -n '1,11p'
echo
echo "== rewind replay --autopilot latest"
rstatus=0
"$REWIND" replay --autopilot latest >"$out/replayed.out" 2>"$out/replayed.err" || rstatus=$?
cat "$out/replayed.out" "$out/replayed.err"
echo "(exit status $rstatus)"
echo
if cmp -s "$out/recorded.out" "$out/replayed.out" && [ "$status" = "$rstatus" ]; then
    echo "The replay printed exactly what the recording printed, and exited the same way."
else
    echo "MISMATCH between recording and replay" >&2
    exit 1
fi
