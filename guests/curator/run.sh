#!/usr/bin/env bash
# Starts the Curator guest: a small JVM (one per lab client) speaking the
# worker protocol on stdin/stdout. install.sh (run by scripts/setup.sh)
# builds it first.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=classpath.sh
. "$here/classpath.sh"
stamp="$here/build/.built"
if [ ! -f "$stamp" ] || [ -n "$(find "$here/src" "$here/classpath.sh" -newer "$stamp" | head -1)" ]; then
	echo "curator guest: not built, or its sources changed since: run scripts/setup.sh (or guests/curator/install.sh)" >&2
	exit 1
fi
# A small heap, the serial collector and the client compiler: a lab run
# starts several of these on two cores, and each lives seconds. IPv4
# sockets: a JVM's default dual-stack sockets show their peers as
# [::ffff:a.b.c.d]:port, which the lab's search for the server a client is
# connected to (ss, for the holder-server-cut fault) does not match.
exec java -Xmx96m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
	-Djava.net.preferIPv4Stack=true \
	-Dorg.slf4j.simpleLogger.defaultLogLevel="${LOCKLAB_CURATOR_LOG:-off}" \
	-cp "$here/build:$classpath" CuratorGuest
