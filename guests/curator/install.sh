#!/usr/bin/env bash
# Builds the Curator guest: compiles src/ into build/ (ignored by git) when a
# source is newer than the build. scripts/setup.sh installs the Debian
# packages it needs first (libcurator-recipes-java, default-jdk-headless) and
# then runs this. Idempotent, and quiet when the build is current.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=classpath.sh
. "$here/classpath.sh"

missing=()
[ -f "$jars/curator-recipes.jar" ] || missing+=(libcurator-recipes-java)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
if [ ${#missing[@]} -gt 0 ]; then
	echo "the curator guest needs these Debian packages: ${missing[*]} (scripts/setup.sh installs them)" >&2
	exit 1
fi

stamp="$here/build/.built"
if [ ! -f "$stamp" ] || [ -n "$(find "$here/src" "$here/classpath.sh" -newer "$stamp" | head -1)" ]; then
	rm -rf "$here/build"
	mkdir -p "$here/build"
	javac -nowarn -d "$here/build" -cp "$classpath" "$here"/src/*.java
	touch "$stamp"
fi
