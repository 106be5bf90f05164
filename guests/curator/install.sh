#!/usr/bin/env bash
# Installs the Curator guest: Debian's libcurator-recipes-java (Curator,
# ZooKeeper's client, Guava, Jackson, SLF4J) and a JDK to compile the guest,
# then compiles src/ into build/ (ignored by git) when a source is newer than
# the build. Idempotent, and quiet when everything is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=classpath.sh
. "$here/classpath.sh"

need=()
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
[ -f /usr/share/java/slf4j-simple.jar ] || need+=(libslf4j-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
if [ ${#need[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "the curator guest needs these packages (Debian names): ${need[*]}" >&2
		exit 1
	fi
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "locklab setup: installing ${need[*]} (curator guest)" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

stamp="$here/build/.built"
if [ ! -f "$stamp" ] || [ -n "$(find "$here/src" -newer "$stamp" -name '*.java')" ]; then
	rm -rf "$here/build"
	mkdir -p "$here/build"
	javac -nowarn -d "$here/build" -cp "$classpath" "$here"/src/*.java
	touch "$stamp"
fi
