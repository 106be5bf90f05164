#!/bin/sh
# Starts a standalone ZooKeeper with the lab's settings (cluster/zookeeper.go).
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
cp=/usr/share/java/zookeeper.jar
[ -f /usr/share/java/slf4j-simple.jar ] && cp="$cp:/usr/share/java/slf4j-simple.jar"
exec java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	-Dzookeeper.jmx.log4j.disable=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
	-cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain /etc/locklab-zoo.cfg
