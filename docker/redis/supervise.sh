#!/bin/sh
# PID 1 of the lab's Redis container: runs the server given as arguments and,
# on the lab's signals, crashes it and starts it again inside the same
# container. The container keeps its network and its published port
# (docker-proxy), so a server crash and restart cost what they cost in local
# mode (tens of ms) instead of a container's teardown and creation (0.4s and
# more), during which every dial to the port is refused: go-redis stops
# dialling for a second after PoolSize refused dials, longer than the
# hand-off of the server-restart scenario.
#   HUP:  SIGKILL the server and start nothing (a crash of the server alone;
#         the lab's server-kill and server-restart-empty faults)
#   USR1: SIGKILL the server if it runs, start it again keeping the data dir
#   USR2: the same with the data dir ($LOCKLAB_DATA_DIR) emptied first
# A crash of the whole container (`docker kill`) still kills this shell too.
mode=""
pid=""
trap 'mode=down; [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null' HUP
trap 'mode=keep; [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null' USR1
trap 'mode=wipe; [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null' USR2
"$@" &
pid=$!
while :; do
	if [ -n "$pid" ]; then
		wait "$pid"
		status=$?
		# A trapped signal also ends wait; go on only once the server is reaped.
		if kill -0 "$pid" 2>/dev/null; then
			continue
		fi
		if [ -z "$mode" ]; then
			exit "$status" # the server stopped by itself: so does the container
		fi
		pid=""
	else
		# Down until USR1 or USR2: a trapped signal ends wait at once; the
		# sleep only bounds the wait for one that came just before it (the
		# lab tells this child from the server by its command name).
		sleep 1 &
		[ "$mode" != down ] || wait $!
		kill "$!" 2>/dev/null
	fi
	case "$mode" in
	down | "")
		continue
		;;
	wipe)
		find "$LOCKLAB_DATA_DIR" -mindepth 1 -delete
		;;
	esac
	mode=""
	"$@" &
	pid=$!
done
