#!/bin/sh
# PID 1 of the lab's Redis container: runs the server given as arguments and,
# on the lab's signal, SIGKILLs it and starts it again in the same container.
# The container keeps its network and its published port (docker-proxy), so a
# restart costs what the server's own start costs (tens of ms) instead of a
# container's teardown and creation (0.4s and more), during which every dial
# to the port is refused: go-redis stops dialling for a second after PoolSize
# refused dials, longer than the hand-off of the server-restart scenario.
#   USR1: restart, keeping the data dir
#   USR2: restart with the data dir ($LOCKLAB_DATA_DIR) emptied
# A crash of the whole server (`docker kill`) still kills this shell too.
mode=""
trap 'mode=keep; kill -KILL "$pid" 2>/dev/null' USR1
trap 'mode=wipe; kill -KILL "$pid" 2>/dev/null' USR2
"$@" &
pid=$!
while :; do
	wait "$pid"
	status=$?
	# A trapped signal also ends wait; go on only once the server is reaped.
	if kill -0 "$pid" 2>/dev/null; then
		continue
	fi
	if [ -z "$mode" ]; then
		exit "$status" # the server stopped by itself: so does the container
	fi
	if [ "$mode" = wipe ]; then
		find "$LOCKLAB_DATA_DIR" -mindepth 1 -delete
	fi
	mode=""
	"$@" &
	pid=$!
done
