#!/bin/sh
# make demo: record the bundled graph example and show what was recorded.
set -eu
REWIND=${1:-build/cli/rewind}
BUILD=${2:-build}
GRAPH=$BUILD/examples/graph
export REWIND_DIR=${REWIND_DIR:-$BUILD/demo-traces}

echo "== rewind doctor"
"$REWIND" doctor || true
echo
echo "== rewind record -- graph   (a DAG of 34,546 nodes; one add_edge closes a cycle)"
status=0
"$REWIND" record -- "$GRAPH" || status=$?
echo "(the program exited with status $status, as it does without rewind)"
echo
echo "== rewind info latest"
"$REWIND" info latest
