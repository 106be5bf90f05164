#!/bin/sh
# Runs one shard of a bench command on a job engine: the engine says which
# shard this is, LOCKLAB_SHARDS how many there are, and the partial result
# goes to LOCKLAB_SHARD_OUT (default /out), where `bench merge` reads it.
#
#   LOCKLAB_SHARDS=8 locklab-shard matrix -seed 42        # + engine's index
#
# The index, first found of:
#   LOCKLAB_SHARD_INDEX   set by hand or by a CI matrix
#   JOB_COMPLETION_INDEX  a Kubernetes Indexed Job (0 .. completions-1)
#   SLOT                  a Docker swarm replicated job, with
#                         --env SLOT={{.Task.Slot}}: slots are 0 .. N-1, but
#                         the template renders slot 0 as the node's id (a
#                         slot of 0 means a global task to swarmkit), so a
#                         slot that is not a number is 0.
set -eu
index="${LOCKLAB_SHARD_INDEX:-${JOB_COMPLETION_INDEX:-${SLOT:-}}}"
case "$index" in
'') echo "locklab-shard: no shard index (LOCKLAB_SHARD_INDEX, JOB_COMPLETION_INDEX or SLOT)" >&2; exit 2 ;;
*[!0-9]*) index=0 ;;
esac
: "${LOCKLAB_SHARDS:?locklab-shard: LOCKLAB_SHARDS (the number of shards) is not set}"
out="${LOCKLAB_SHARD_OUT:-/out}"
cmd="$1"
shift
exec bench "$cmd" "$@" -shard "$index/$LOCKLAB_SHARDS" -out "$out"
