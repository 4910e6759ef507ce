#!/bin/sh
# Crash and restart a server, for `seedkv-sim probe --restart-cmd`.
#
#   restart-server.sh PIDFILE LOGFILE SERVER-COMMAND...
#
# Kills the process named in PIDFILE with SIGKILL (a crash: nothing is
# flushed), waits until it is gone (or a zombie: its sockets are closed),
# then starts SERVER-COMMAND in the background, appending its output to
# LOGFILE, and writes its pid to PIDFILE. The first call (no PIDFILE) only
# starts it. The probe waits for PONG itself. Example:
#
#   sim/scripts/restart-server.sh /tmp/s/pid /tmp/s/log \
#       redis-server --port 7000 --dir /tmp/s --appendonly yes --appendfsync always
#   seedkv-sim probe --addr 127.0.0.1:7000 --restart-cmd \
#       "sim/scripts/restart-server.sh /tmp/s/pid /tmp/s/log redis-server --port 7000 --dir /tmp/s --appendonly yes --appendfsync always"
set -eu
pidfile=$1
logfile=$2
shift 2
if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    kill -9 "$pid" 2>/dev/null || true
    # At most 10 s: gone, or a zombie nobody reaped yet.
    i=0
    while [ -d "/proc/$pid" ] && ! grep -q ') Z ' "/proc/$pid/stat" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt 1000 ]; then
            echo "restart-server.sh: pid $pid survives SIGKILL" >&2
            exit 1
        fi
        sleep 0.01
    done
fi
"$@" </dev/null >>"$logfile" 2>&1 &
echo $! >"$pidfile"
