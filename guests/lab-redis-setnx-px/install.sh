#!/usr/bin/env bash
# Builds the lab-redis-setnx-px guest into build/ (ignored by git) from the
# lab's own module: go build rebuilds only what changed (the adapter, or the
# lab's lock it wraps) and prints nothing when done. scripts/setup.sh
# installs Go first and then runs this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
"${GO:-go}" build -o build/lab-redis-setnx-px .
