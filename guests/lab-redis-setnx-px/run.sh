#!/usr/bin/env bash
# Starts the adapter built by install.sh, or says how to build it. exec, so
# the lab's process is the adapter itself (in the worker's process group).
#
# A build older than its sources (the adapter, the lab's lock it wraps, as
# listed by install.sh in build/sources, or go.mod and go.sum) would put an
# old lock behind the protocol beside the new native one, and its figures
# would no longer be the protocol's cost alone: that is refused, naming the
# command that rebuilds. It does not rebuild itself: a lab run starts
# several of these at once, and builds into one file would race.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/build/lab-redis-setnx-px"
sources="$here/build/sources"
if [ ! -x "$bin" ] || [ ! -f "$sources" ]; then
	echo "lab-redis-setnx-px guest: not built: run scripts/setup.sh (or guests/lab-redis-setnx-px/install.sh)" >&2
	exit 1
fi
root="$(cd "$here/../.." && pwd)"
mapfile -t dirs <"$sources"
newer="$(find "$root/go.mod" "$root/go.sum" -newer "$bin" 2>/dev/null | head -1)"
if [ -z "$newer" ] && [ ${#dirs[@]} -gt 0 ]; then
	newer="$(find "${dirs[@]}" -maxdepth 1 -name '*.go' ! -name '*_test.go' -newer "$bin" 2>/dev/null | head -1)"
fi
if [ -n "$newer" ]; then
	echo "lab-redis-setnx-px guest: built before a change to ${newer#"$root/"}: run scripts/setup.sh (or guests/lab-redis-setnx-px/install.sh)" >&2
	exit 1
fi
exec "$bin"
