#!/usr/bin/env bash
# PgBouncer (Debian's package) in front of the test PostgreSQL, in the pooling mode that
# deploy/README.md recommends (transaction), for the tests and CI:
#
#   scripts/pgbouncer.sh start DIR   write DIR/pgbouncer.ini, start PgBouncer, wait until it answers;
#                                    prints its URL (database postgres) for TEST_PGBOUNCER_URL
#   scripts/pgbouncer.sh stop DIR    stop the PgBouncer started in DIR (by its saved PID)
#
# Settings (environment): PGBOUNCER_PORT (6432) on 127.0.0.1, in front of PGBOUNCER_UPSTREAM_HOST
# (127.0.0.1) : PGBOUNCER_UPSTREAM_PORT (5432); PGBOUNCER_USER (postgres) is the one user it admits,
# without a password (auth_type trust), as the test server admits it. Every database name is served
# (`*`), so a test may create a fresh database and connect to it through PgBouncer at once.
set -euo pipefail

usage() {
  echo "usage: scripts/pgbouncer.sh start|stop DIR" >&2
  exit 2
}
cmd=${1:-}
dir=${2:-}
[ -n "$dir" ] || usage
port=${PGBOUNCER_PORT:-6432}
user=${PGBOUNCER_USER:-postgres}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/pgbouncer.pid" ] && kill -0 "$(cat "$dir/pgbouncer.pid")" 2>/dev/null; then
    echo "PgBouncer already runs from $dir (PID $(cat "$dir/pgbouncer.pid"))" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "127.0.0.1:$port is already taken (a PgBouncer of the system?); set PGBOUNCER_PORT" >&2
    exit 1
  fi
  printf '"%s" ""\n' "$user" >"$dir/userlist.txt"
  cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=${PGBOUNCER_UPSTREAM_HOST:-127.0.0.1} port=${PGBOUNCER_UPSTREAM_PORT:-5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
; TCP only: no socket file in /tmp shared with other PostgreSQL tools.
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
; Server connections per database and user: the loads' COPYs and the exports' downloads each hold
; one for their whole length, so this must cover them with room for every other query.
default_pool_size = 40
max_client_conn = 500
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  # PgBouncer refuses to run as root: as root (CI), it drops to the PostgreSQL system user.
  as=()
  if [ "$(id -u)" -eq 0 ]; then
    system_user=postgres
    getent passwd "$system_user" >/dev/null || system_user=nobody
    chown -R "$system_user" "$dir"
    as=(-u "$system_user")
  fi
  pgbouncer -d "${as[@]}" "$dir/pgbouncer.ini"
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "postgres://$user@127.0.0.1:$port/postgres"
      exit 0
    fi
    sleep 0.1
  done
  echo "PgBouncer did not start listening on 127.0.0.1:$port; its log:" >&2
  cat "$dir/pgbouncer.log" >&2 || true
  exit 1
  ;;
stop)
  pidfile="$dir/pgbouncer.pid"
  [ -f "$pidfile" ] || exit 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || exit 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || exit 0
    sleep 0.1
  done
  echo "PgBouncer (PID $pid) did not stop within 5 s" >&2
  exit 1
  ;;
*)
  usage
  ;;
esac
