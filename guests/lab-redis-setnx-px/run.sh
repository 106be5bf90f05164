#!/usr/bin/env bash
# Starts the adapter built by install.sh, or says how to build it. exec, so
# the lab's process is the adapter itself (in the worker's process group).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/build/lab-redis-setnx-px"
if [ ! -x "$bin" ]; then
	echo "lab-redis-setnx-px guest: not built: run scripts/setup.sh (or guests/lab-redis-setnx-px/install.sh)" >&2
	exit 1
fi
exec "$bin"
