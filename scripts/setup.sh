#!/usr/bin/env bash
# Installs what the lab needs: the servers it starts itself (Redis, etcd, ZooKeeper
# and Java for it, PostgreSQL, MariaDB for MySQL), the tools for its network namespaces
# (iproute2, iptables), Chromium for the report site's browser test, and, for
# container mode, a Docker engine, docker-compose and debootstrap. On Debian/Ubuntu it installs what is missing
# with apt-get; elsewhere it prints what local mode lacks and stops (container
# mode, LOCKLAB_SERVERS=containers, needs only a Docker engine). Then, for
# container mode, it makes sure a Docker engine answers (starting dockerd when
# it is root on Debian and none does) and that the lab's Debian base image
# exists (pulled, or built with debootstrap where nothing can be pulled).
# It does nothing, quietly, when everything is already there.
set -euo pipefail

# The image every Dockerfile in docker/ starts FROM (docker.BaseImage in docker/images.go).
base_image="${LOCKLAB_BASE_IMAGE:-locklab/debian:bookworm}"
suite=bookworm

# What local mode needs; in container mode (LOCKLAB_SERVERS=containers) the
# servers come from the Dockerfiles, so a machine with Docker alone will do.
need=()
if [ "${LOCKLAB_SERVERS:-local}" != containers ]; then
	command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
	# The Sentinel topology's sentinels (cluster/sentinel.go; redis-server --sentinel
	# is the fallback when only redis-server is installed).
	command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
	[ -f /usr/share/java/zookeeper.jar ] || [ -n "${LOCKLAB_ZOOKEEPER_CLASSPATH:-}" ] || need+=(zookeeper)
	command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
	command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
	if ! command -v postgres >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		need+=(postgresql)
	fi
	# MySQL's locks run on Debian's MariaDB server (mariadbd, mariadb-install-db).
	if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ] && [ ! -x /usr/sbin/mysqld ]; then
		need+=(mariadb-server)
	fi
fi
# Guests (guests/*/, docs/guests): the Debian packages their adapters run on,
# needed in either mode (a guest runs beside its worker, not in a container).
# redis-py's Lock: Debian's python3-redis, for /usr/bin/python3.
[ -f /usr/lib/python3/dist-packages/redis/lock.py ] || need+=(python3-redis)
# node-redlock, node-redlock-5, node-redisson: Node.js and npm (install.sh).
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
# curator: Apache Curator's jars with their dependencies (ZooKeeper's client,
# Guava, Jackson, SLF4J), and javac, which its install.sh compiles it with.
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
# Installed where apt-get can, never demanded elsewhere: the tools of the
# lab's hosts (network namespaces, Linux only), and for container mode the
# engine (docker.io brings dockerd, runc and containerd; not needed when an
# engine already answers, e.g. Docker Desktop), compose for
# docker-compose.yml, and debootstrap for the base image.
extra=()
command -v ip >/dev/null 2>&1 || extra+=(iproute2)
command -v iptables >/dev/null 2>&1 || extra+=(iptables)
if ! docker info >/dev/null 2>&1 && ! command -v dockerd >/dev/null 2>&1; then
	extra+=(docker.io)
fi
if ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
	extra+=(docker-compose)
fi
command -v debootstrap >/dev/null 2>&1 || extra+=(debootstrap)
# The report site's browser test (report/site) opens it in headless Chromium.
command -v chromium >/dev/null 2>&1 || extra+=(chromium)

sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi

if ! command -v apt-get >/dev/null 2>&1; then
	if [ ${#need[@]} -gt 0 ]; then
		echo "locklab needs these packages (Debian names): ${need[*]}" >&2
		echo "install them with your package manager, then run the command again" >&2
		echo "(or run with LOCKLAB_SERVERS=containers and a Docker engine)" >&2
		exit 1
	fi
elif [ $((${#need[@]} + ${#extra[@]})) -gt 0 ]; then
	echo "locklab setup: installing ${need[*]} ${extra[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" "${extra[@]}" >/dev/null
	# The packages' own services are not used: the lab starts its own servers.
	for svc in redis-server zookeeper postgresql etcd mariadb; do
		$sudo service "$svc" stop >/dev/null 2>&1 || true
	done
fi

# Each guest's own install.sh (its registry's packages: npm, Maven), run from
# the guest's folder; each is idempotent and quiet when there is nothing to do.
for install in "$(dirname "$0")"/../guests/*/install.sh; do
	[ -f "$install" ] || continue
	bash "$install" || {
		echo "locklab setup: $install failed" >&2
		exit 1
	}
done

# A Docker engine for container mode. Debian's docker.io installs dockerd but
# nothing starts it where there is no init system, so start it ourselves when
# we are root on Debian; elsewhere say what is missing and go on (local mode
# needs no engine; container mode then fails with one clear error).
if ! docker info >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v dockerd >/dev/null 2>&1; then
		log=/var/log/locklab-dockerd.log
		echo "locklab setup: no Docker engine answers; starting dockerd (log: $log)" >&2
		nohup dockerd >>"$log" 2>&1 </dev/null &
		for _ in $(seq 1 60); do
			docker info >/dev/null 2>&1 && break
			sleep 1
		done
		if ! docker info >/dev/null 2>&1; then
			echo "locklab setup: dockerd did not answer within 60s; see $log" >&2
			exit 1
		fi
		echo "locklab setup: dockerd is running (pid $(pgrep -o -x dockerd))" >&2
	else
		echo "locklab setup: no Docker engine answers; container mode (LOCKLAB_SERVERS=containers) will not work until one does" >&2
		[ "${LOCKLAB_SERVERS:-local}" != containers ] || exit 1
		exit 0
	fi
fi

# The base image: pull it where a registry serves it, else build it from
# Debian's mirror with debootstrap and import it.
if ! docker image inspect "$base_image" >/dev/null 2>&1; then
	if docker pull -q "debian:$suite" >/dev/null 2>&1; then
		docker tag "debian:$suite" "$base_image"
		echo "locklab setup: pulled debian:$suite as $base_image" >&2
	else
		if ! command -v debootstrap >/dev/null 2>&1; then
			echo "locklab setup: cannot pull debian:$suite and debootstrap is missing: cannot build $base_image (container mode needs it)" >&2
			[ "${LOCKLAB_SERVERS:-local}" != containers ] || exit 1
			exit 0
		fi
		root="$(mktemp -d /tmp/locklab-debootstrap-XXXXXX)"
		trap 'rm -rf "$root"' EXIT
		echo "locklab setup: no registry answers; building $base_image with debootstrap (a few minutes)" >&2
		$sudo debootstrap --variant=minbase "$suite" "$root" >"$root.log" 2>&1 || {
			echo "locklab setup: debootstrap failed; see $root.log" >&2
			exit 1
		}
		rm -f "$root.log"
		# Smaller image: no apt lists or package caches from the bootstrap.
		$sudo rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
		$sudo tar -C "$root" -c . | docker import -c 'CMD ["/bin/bash"]' - "$base_image" >/dev/null
		echo "locklab setup: built $base_image" >&2
	fi
fi
