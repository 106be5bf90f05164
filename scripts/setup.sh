#!/usr/bin/env bash
# Installs the servers the lab starts: Redis, ZooKeeper (and Java for it),
# and PostgreSQL. On Debian/Ubuntu
# it installs what is missing with apt-get; elsewhere it prints what to
# install and stops. It does nothing when everything is already there.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -f /usr/share/java/zookeeper.jar ] || [ -n "${LOCKLAB_ZOOKEEPER_CLASSPATH:-}" ] || need+=(zookeeper)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
if ! command -v postgres >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
	need+=(postgresql)
fi


if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "locklab needs these packages (Debian names): ${need[*]}" >&2
	echo "install them with your package manager, then run the command again" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi
echo "locklab setup: installing ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The packages' own services are not used: the lab starts its own servers.
for svc in redis-server zookeeper postgresql; do
	$sudo service "$svc" stop >/dev/null 2>&1 || true
done
