#!/usr/bin/env bash
# A real S3-compatible store for the tests and CI: a single-node Ceph cluster (one monitor, one
# in-memory OSD, no manager) with the RADOS Gateway on loopback. Unlike s3rver it verifies SigV4
# signatures, so a wrong secret or a tampered presigned URL is refused as AWS S3 refuses it.
#
#   scripts/ceph-rgw.sh start DIR   start it; state, logs and PIDs under DIR (~15 s, ~700 MB RSS)
#   scripts/ceph-rgw.sh stop DIR    end the processes that `start DIR` started (by their saved PIDs)
#
# Settings (environment), every port its own so that two clusters can run side by side:
#   RGW_PORT (7480)            the S3 endpoint, http://127.0.0.1:$RGW_PORT (path style, any region)
#   MON_PORT (3300)            the monitor's msgr2 port
#   MON_V1_PORT (6789)         the monitor's legacy msgr1 port
#   OSD_PORT_MIN/MAX (6800/7300)  the range the OSD binds its four ports in
#   S3_KEY, S3_SECRET          the gateway user's credentials (defaults below)
#   CEPH_RGW_TIMEOUT (120)     seconds each stage may take before `start` gives up
# Needs Debian's packages radosgw ceph-mon ceph-osd ceph-common.
#
# What is not obvious: with `auth ... = none` the gateway cannot reach the monitor (error -13)
# unless every `ms ... mode` is crc; one OSD needs pool size 1, 8 PGs and a high `mon max pg per
# osd`; without `cluster addr` the OSD listens on every interface.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
B=$(realpath -m "$2")
RGW_PORT=${RGW_PORT:-7480}
MON_PORT=${MON_PORT:-3300}
MON_V1_PORT=${MON_V1_PORT:-6789}
OSD_PORT_MIN=${OSD_PORT_MIN:-6800}
OSD_PORT_MAX=${OSD_PORT_MAX:-7300}
S3_KEY=${S3_KEY:-DXTESTACCESSKEY0001}
S3_SECRET=${S3_SECRET:-dx-test-secret-key-0123456789abcdef}
TIMEOUT=${CEPH_RGW_TIMEOUT:-120}
# Every process gets this configuration on its command line, which is also how `stop` recognises
# its own processes (a saved PID may since belong to something else).
CONF="$B/ceph.conf"
DAEMONS=(rgw osd mon)

# Whether the process `pid` is alive and was started with this cluster's configuration.
ours() {
  local pid=$1
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-c $CONF "
}

# Stops the daemons in turn, the gateway first (each needs the ones after it to shut down cleanly).
stop_all() {
  local name pid deadline
  for name in "${DAEMONS[@]}"; do
    [ -f "$B/$name.pid" ] || continue
    pid=$(cat "$B/$name.pid")
    rm -f "$B/$name.pid"
    ours "$pid" || continue
    kill "$pid" 2>/dev/null || true
    # (A process that exited but was not reaped yet has an empty command line: not `ours` any more.)
    deadline=$((SECONDS + 15))
    while ours "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if ours "$pid"; then
      echo "ceph-rgw: $name (pid $pid) did not stop on SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

if [ "$cmd" = stop ]; then
  [ -f "$CONF" ] || { echo "ceph-rgw: no cluster under $B" >&2; exit 0; }
  stop_all
  exit 0
fi
[ "$cmd" = start ] || usage

for tool in ceph-mon ceph-osd radosgw ceph monmaptool radosgw-admin; do
  command -v "$tool" >/dev/null || {
    echo "ceph-rgw: $tool not found (apt-get install radosgw ceph-mon ceph-osd ceph-common)" >&2
    exit 1
  }
done
for port in "$RGW_PORT" "$MON_PORT" "$MON_V1_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "ceph-rgw: 127.0.0.1:$port is already in use (set RGW_PORT, MON_PORT, MON_V1_PORT)" >&2
    exit 1
  fi
done
# DIR is wiped: only an empty directory, or one this script made before, and never a live cluster.
if [ -e "$B" ] && [ -n "$(ls -A "$B")" ] && [ ! -f "$CONF" ]; then
  echo "ceph-rgw: $B is neither empty nor a cluster directory of this script" >&2
  exit 1
fi
for name in "${DAEMONS[@]}"; do
  if [ -f "$B/$name.pid" ] && ours "$(cat "$B/$name.pid")"; then
    echo "ceph-rgw: a cluster is already running under $B (stop it first)" >&2
    exit 1
  fi
done
rm -rf "$B"
mkdir -p "$B"/{run,log,mon.a,osd.0,rgw.a}

fail() {
  echo "ceph-rgw: $1" >&2
  local log
  for log in "$B"/log/*; do
    [ -s "$log" ] || continue
    echo "---- last lines of $log" >&2
    tail -n 25 "$log" >&2
  done
  stop_all
  exit 1
}

# Runs `check` until it succeeds; fails with the logs' tails when `pid` died or TIMEOUT passed.
wait_for() {
  local what=$1 pid=$2
  shift 2
  local started=$SECONDS deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || fail "$what: the process exited"
    [ $SECONDS -lt $deadline ] || fail "$what: not ready after ${TIMEOUT}s"
    sleep 0.5
  done
  echo "ceph-rgw: $what ready after $((SECONDS - started))s"
}

start_daemon() {
  local name=$1
  shift
  "$@" -c "$CONF" -f >"$B/log/$name.out" 2>&1 &
  echo $! >"$B/$name.pid"
}

FSID=$(cat /proc/sys/kernel/random/uuid)
MON_ADDRS="[v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_V1_PORT]"
cat >"$CONF" <<CONF
[global]
fsid = $FSID
mon host = $MON_ADDRS
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind port min = $OSD_PORT_MIN
ms bind port max = $OSD_PORT_MAX
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms cluster mode = crc
ms service mode = crc
ms mon service mode = crc
ms mon cluster mode = crc
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
run dir = $B/run
log file = $B/log/\$name.log
admin socket = $B/run/\$name.asok
[mon.a]
mon data = $B/mon.a
[osd.0]
osd data = $B/osd.0
osd objectstore = memstore
memstore device bytes = 4294967296
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $B/rgw.a
# On SIGTERM the gateway waits this long for requests in flight (default 120 s).
rgw exit timeout secs = 5
CONF
export CEPH_CONF="$CONF"

ceph-authtool --create-keyring "$B/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "$MON_ADDRS" "$B/monmap" >/dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$B/monmap" --keyring "$B/mon.keyring" \
  >"$B/log/mon-mkfs.out" 2>&1 || fail "the monitor's mkfs failed"
start_daemon mon ceph-mon -i a
wait_for "the monitor" "$(cat "$B/mon.pid")" ceph -s --connect-timeout 2

OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ID=$(ceph osd new "$OSD_UUID") || fail "ceph osd new failed"
ceph-osd -c "$CONF" -i "$ID" --mkfs --osd-uuid "$OSD_UUID" >"$B/log/osd-mkfs.out" 2>&1 ||
  fail "the OSD's mkfs failed"
start_daemon osd ceph-osd -i "$ID"
osd_up() { ceph osd stat --connect-timeout 2 | grep -q "1 up"; }
wait_for "the OSD" "$(cat "$B/osd.pid")" osd_up

# Whether the gateway answers HTTP (bash alone: a fresh machine may have no curl).
rgw_answers() {
  exec 3<>"/dev/tcp/127.0.0.1/$RGW_PORT" || return 1
  printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  local status=''
  read -r -t 5 status <&3 || true
  exec 3<&-
  [[ $status == HTTP/* ]]
}
start_daemon rgw radosgw -n client.rgw.a
wait_for "the RADOS Gateway" "$(cat "$B/rgw.pid")" rgw_answers
radosgw-admin user create --uid=dx --display-name=dx --access-key="$S3_KEY" --secret="$S3_SECRET" \
  >"$B/log/user-create.out" 2>&1 || fail "could not create the gateway's user"

echo "ceph-rgw: S3 at http://127.0.0.1:$RGW_PORT (access key $S3_KEY), monitor $MON_ADDRS;" \
  "pids mon $(cat "$B/mon.pid") osd $(cat "$B/osd.pid") rgw $(cat "$B/rgw.pid")"
