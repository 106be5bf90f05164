#!/bin/sh
# Starts ZooKeeper with the lab's settings (cluster/zookeeper.go), standalone
# or as a member of an ensemble.
set -eu
mkdir -p /var/lib/locklab-zk
cat >/etc/locklab-zoo.cfg <<CFG
tickTime=${ZOO_TICK_MS:-100}
dataDir=/var/lib/locklab-zk
clientPort=2181
clientPortAddress=0.0.0.0
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
globalOutstandingLimit=100000
maxSessionTimeout=60000
forceSync=no
CFG
# ZOO_MY_ID and ZOO_SERVERS (space-separated server.N=alias:2888:3888
# lines) make the server member N of an ensemble; without them it runs
# standalone. ZooKeeperServerMain would run one server alone whatever its
# config says, so a member runs QuorumPeerMain.
main=org.apache.zookeeper.server.ZooKeeperServerMain
if [ -n "${ZOO_MY_ID:-}" ]; then
	echo "$ZOO_MY_ID" >/var/lib/locklab-zk/myid
	# initLimit and syncLimit as in local mode: 2s and 1s at a 100ms tick.
	printf 'initLimit=20\nsyncLimit=10\n' >>/etc/locklab-zoo.cfg
	for line in ${ZOO_SERVERS:?ZOO_MY_ID needs ZOO_SERVERS}; do
		echo "$line" >>/etc/locklab-zoo.cfg
	done
	main=org.apache.zookeeper.server.quorum.QuorumPeerMain
fi
cp=/usr/share/java/zookeeper.jar
[ -f /usr/share/java/slf4j-simple.jar ] && cp="$cp:/usr/share/java/slf4j-simple.jar"
exec java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	-Dzookeeper.jmx.log4j.disable=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
	-cp "$cp" "$main" /etc/locklab-zoo.cfg
