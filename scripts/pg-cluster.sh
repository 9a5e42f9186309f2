#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: Debian's PostgreSQL binaries, a fresh data
# directory under /tmp, 127.0.0.1 on a free port, trust authentication, one database.
#
#   scripts/pg-cluster.sh start   starts one; prints its postgres:// URL on stdout
#   scripts/pg-cluster.sh url     prints the running cluster's URL
#   scripts/pg-cluster.sh stop    stops it and deletes its directory
#
# The running cluster is remembered in $FORAGER_PG_STATE (default target/pg-cluster of this
# checkout), so start and stop pair up per checkout. initdb refuses to run as root: as root the
# server runs as the `postgres` user (Debian's package creates it), else as the caller.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${FORAGER_PG_STATE:-$PWD/target/pg-cluster}
DB=forager

pg_bin() {
  if [ -n "${PGBIN:-}" ]; then echo "$PGBIN"; return; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
    echo "pg-cluster: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (scripts/setup.sh installs Debian's postgresql)" >&2
    exit 1
  fi
  echo "$d"
}

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  if [ -f "$STATE" ] && [ -d "$(sed -n 1p "$STATE")" ]; then
    echo "pg-cluster: one is already running ($(sed -n 2p "$STATE")); stop it first" >&2
    exit 1
  fi
  local bin dir port url
  bin=$(pg_bin)
  dir=$(mktemp -d /tmp/forager-pg-XXXXXX)
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
  local tries=0
  while :; do
    port=$(free_port)
    # fsync off: a test cluster is thrown away, durability buys nothing; many connections:
    # tests run in parallel, each with its own database and pool.
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=64MB" \
      start >/dev/null; then
      break
    fi
    tries=$((tries + 1))
    if [ $tries -ge 3 ]; then
      cat "$dir/server.log" >&2
      rm -rf "$dir"
      exit 1
    fi
  done
  url="postgres://postgres@127.0.0.1:$port/$DB"
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$DB"
  mkdir -p "$(dirname "$STATE")"
  printf '%s\n%s\n' "$dir" "$url" >"$STATE"
  echo "pg-cluster: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $url (data in $dir)" >&2
  echo "$url"
}

stop() {
  [ -f "$STATE" ] || { echo "pg-cluster: none running" >&2; return 0; }
  local dir
  dir=$(sed -n 1p "$STATE")
  if [ -d "$dir/data" ]; then
    as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  case "$dir" in /tmp/forager-pg-*) rm -rf "$dir" ;; esac
  rm -f "$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) [ -f "$STATE" ] && sed -n 2p "$STATE" || { echo "pg-cluster: none running" >&2; exit 1; } ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
