#!/usr/bin/env bash
# Builds the lab-redis-setnx-px guest into build/ (ignored by git) from the
# lab's own module: go build rebuilds only what changed (the adapter, or the
# lab's lock it wraps) and prints nothing when done. scripts/setup.sh
# installs Go first and then runs this.
#
# Beside the binary it writes build/sources, the lab's own package folders
# the binary is built from, and touches the binary, so that run.sh can
# tell a build older than any of those sources (go build leaves an
# up-to-date binary as it was, so its time alone would not say when the
# build was last checked).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
go="${GO:-go}"
"$go" build -o build/lab-redis-setnx-px .
root="$(cd ../.. && pwd)"
"$go" list -deps -f '{{if not .Standard}}{{.Dir}}{{end}}' . | grep -F "$root/" >build/sources.new
mv build/sources.new build/sources
touch build/lab-redis-setnx-px
