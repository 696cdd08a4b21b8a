#!/bin/sh
# make demo: record the bundled graph example, replay it exactly, then ask
# rewind which add_edge() closed the cycle the program complains about.
set -eu
REWIND=${1:-build/cli/rewind}
BUILD=${2:-build}
GRAPH=$BUILD/examples/graph
export REWIND_DIR=${REWIND_DIR:-$BUILD/demo-traces}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== rewind record -- graph --log culprit.txt"
echo "   (builds a DAG of 34,546 nodes edge by edge; one add_edge, chosen with"
echo "    getrandom(), closes a cycle, and the final check fails; the program"
echo "    also writes which edge it was to culprit.txt, for comparison)"
status=0
"$REWIND" record -- "$GRAPH" --log "$out/culprit.txt" >"$out/recorded.out" 2>"$out/recorded.err" || status=$?
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
if cmp -s "$out/recorded.out" "$out/replayed.out" && [ "$status" = "$rstatus" ]; then
    echo "The replay printed exactly what the recording printed, and exited the same way."
else
    echo "MISMATCH between recording and replay" >&2
    exit 1
fi
echo
echo "== rewind watch latest 'has_cycle(g)' --print i"
echo "   (where did has_cycle(g) become 1? i is the loop's edge index in main)"
"$REWIND" watch latest 'has_cycle(g)' --print i --print from --print to | tee "$out/watch.txt"
echo
echo "== what the program itself wrote: $(cat "$out/culprit.txt")"
index=$(sed -n 's/^culprit edge \([0-9]*\):.*/\1/p' "$out/culprit.txt")
if grep -q "^  i = $index\$" "$out/watch.txt"; then
    echo "rewind watch found the same add_edge call."
else
    echo "rewind watch disagrees with the program's own log" >&2
    exit 1
fi
