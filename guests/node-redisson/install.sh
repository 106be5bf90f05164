#!/usr/bin/env bash
# Installs the guest's npm packages, as every Node.js guest does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../lib-node/npm-install.sh" "$here"
