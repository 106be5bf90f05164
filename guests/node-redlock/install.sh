#!/usr/bin/env bash
# Installs the guest's npm packages (package-lock.json pins them) into
# node_modules/, once: quiet when they are already there.
set -euo pipefail
cd "$(dirname "$0")"
if [ -f node_modules/.locklab-installed ] && [ node_modules/.locklab-installed -nt package-lock.json ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "guest $(basename "$PWD"): npm is missing (Debian: npm, nodejs)" >&2
	exit 1
fi
if [ -f package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error >/dev/null
else
	npm install --no-audit --no-fund --loglevel=error >/dev/null
fi
touch node_modules/.locklab-installed
