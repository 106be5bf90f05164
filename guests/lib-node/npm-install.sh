#!/usr/bin/env bash
# Installs a Node.js guest's npm packages (its package-lock.json pins them)
# into its node_modules/, once: quiet when they are already there. Every
# Node.js guest's install.sh runs it on its own folder.
set -euo pipefail
cd "$1"
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
