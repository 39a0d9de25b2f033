#!/usr/bin/env bash
# Throwaway Redis and PostgreSQL on loopback for the store integration tests.
#
# Executed:  eval "$(scripts/services.sh start)"   # prints `export MCP_TASKS_TEST_...=...` lines on stdout
#            trap 'scripts/services.sh stop' EXIT  # idempotent; safe to call when nothing runs
# Sourced:   . scripts/services.sh; services_start; trap services_stop EXIT   # exports into the current shell
#
# Everything (data, sockets, logs, the env file) lives in one state directory under ${TMPDIR:-/tmp}, removed by stop.
# Ports are fixed so one state directory means one set of services; override with the variables below.
# Logs and progress go to stderr, so stdout stays eval-able.

: "${MCP_TASKS_REDIS_PORT:=6390}"
: "${MCP_TASKS_PG_PORT:=5440}"
: "${MCP_TASKS_SERVICES_DIR:=${TMPDIR:-/tmp}/mcp-tasks-services}"

_svc_log() { echo "services: $*" >&2; }

# Runs a command as root (directly, or through passwordless sudo) for the package install.
_svc_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else
    _svc_log "need root to run: $*"
    return 1
  fi
}

# PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user.
_svc_as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

_svc_pg_bindir() {
  local dir
  dir=$(pg_config --bindir 2>/dev/null)
  # Debian's pg_config may belong to the client package; the server binaries are in the versioned directory.
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
  for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
  done
  _svc_log "PostgreSQL server binaries (initdb, pg_ctl) not found"
  return 1
}

_svc_redis_url() { echo "redis://127.0.0.1:${MCP_TASKS_REDIS_PORT}"; }
_svc_pg_url() { echo "postgres://postgres@127.0.0.1:${MCP_TASKS_PG_PORT}/postgres"; }

_svc_port_busy() {
  # bash's /dev/tcp: a successful connect means something already listens there.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_svc_install_redis() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 && return 0
  _svc_log "installing redis-server from Debian packages"
  _svc_as_root env DEBIAN_FRONTEND=noninteractive apt-get update >&2 || return 1
  _svc_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >&2 || return 1
}

_svc_start_redis() {
  local dir="$MCP_TASKS_SERVICES_DIR/redis" pid i
  if _svc_port_busy "$MCP_TASKS_REDIS_PORT"; then
    _svc_log "port $MCP_TASKS_REDIS_PORT is already in use; not starting Redis"
    return 1
  fi
  mkdir -p "$dir" || return 1
  # Foreground server sent to the background: it exits within 0.1 s on SIGTERM (a daemonized one takes ~2 s).
  redis-server --bind 127.0.0.1 --port "$MCP_TASKS_REDIS_PORT" --protected-mode yes --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/redis.log" </dev/null >>"$dir/redis.log" 2>&1 &
  pid=$!
  echo "$pid" >"$MCP_TASKS_SERVICES_DIR/redis.pid"
  for i in $(seq 1 100); do
    if redis-cli -h 127.0.0.1 -p "$MCP_TASKS_REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
      _svc_log "redis ready on 127.0.0.1:$MCP_TASKS_REDIS_PORT (pid $pid)"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  _svc_log "redis did not start; log follows"
  tail -n 30 "$dir/redis.log" >&2
  return 1
}

_svc_start_pg() {
  local bindir data="$MCP_TASKS_SERVICES_DIR/pg" run="$MCP_TASKS_SERVICES_DIR/pgrun"
  bindir=$(_svc_pg_bindir) || return 1
  if _svc_port_busy "$MCP_TASKS_PG_PORT"; then
    _svc_log "port $MCP_TASKS_PG_PORT is already in use; not starting PostgreSQL"
    return 1
  fi
  # The data directory and `run` (socket, logs) belong to the server's user.
  mkdir -p "$run" "$data" || return 1
  chmod 700 "$data" || return 1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$run" "$data" || return 1
    if ! runuser -u postgres -- test -w "$run"; then
      _svc_log "the postgres user cannot reach $MCP_TASKS_SERVICES_DIR; set TMPDIR to a world-traversable directory"
      return 1
    fi
  fi
  if ! _svc_as_pg "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$run/initdb.log" 2>&1; then
    _svc_log "initdb failed; log follows"
    tail -n 30 "$run/initdb.log" >&2
    return 1
  fi
  # fsync and synchronous_commit off: test speed only, never for real data. pg_stat_statements (in Debian's server
  # package) lets bench:distributed count the statements a task costs; the server starts without it when absent.
  local preload=''
  if [ -f "$bindir/../lib/pg_stat_statements.so" ]; then preload=' -c shared_preload_libraries=pg_stat_statements'; fi
  if ! _svc_as_pg "$bindir/pg_ctl" -D "$data" -l "$run/pg.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $MCP_TASKS_PG_PORT -k '$run' -c fsync=off -c synchronous_commit=off$preload" \
    start >&2; then
    _svc_log "postgres did not start; log follows"
    tail -n 30 "$run/pg.log" >&2
    return 1
  fi
  _svc_log "postgres ready on 127.0.0.1:$MCP_TASKS_PG_PORT"
}

# Starts both services and exports the test URLs (also written to $MCP_TASKS_SERVICES_DIR/env).
services_start() {
  # Leftovers of a run that never reached stop would hold the ports.
  services_stop || return 1
  _svc_install_redis || return 1
  mkdir -p "$MCP_TASKS_SERVICES_DIR" || return 1
  chmod 755 "$MCP_TASKS_SERVICES_DIR" || return 1
  if ! _svc_start_redis || ! _svc_start_pg; then
    services_stop
    return 1
  fi
  {
    echo "export MCP_TASKS_TEST_REDIS_URL=$(_svc_redis_url)"
    echo "export MCP_TASKS_TEST_POSTGRES_URL=$(_svc_pg_url)"
  } >"$MCP_TASKS_SERVICES_DIR/env"
  export MCP_TASKS_TEST_REDIS_URL MCP_TASKS_TEST_POSTGRES_URL
  MCP_TASKS_TEST_REDIS_URL=$(_svc_redis_url)
  MCP_TASKS_TEST_POSTGRES_URL=$(_svc_pg_url)
}

# True while `pid` runs the named program. An exited child of a vanished parent can stay a zombie (kill -0 still
# succeeds) until init reaps it; its cmdline is empty, so it does not count.
_svc_running() {
  tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q "$2"
}

# Stops whatever this script started and removes the state directory. Idempotent; safe in an EXIT trap, also
# under `set -e` (no step fails when a server is already gone).
services_stop() {
  local state="$MCP_TASKS_SERVICES_DIR" pid bindir i
  [ -d "$state" ] || return 0
  if [ -f "$state/redis.pid" ]; then
    pid=$(cat "$state/redis.pid" 2>/dev/null) || pid=""
    # Only signal the PID if it is still our redis-server (PIDs get reused).
    if [ -n "$pid" ] && _svc_running "$pid" redis-server; then
      kill -TERM "$pid" 2>/dev/null || true
      for i in $(seq 1 50); do _svc_running "$pid" redis-server || break; sleep 0.1; done
      if _svc_running "$pid" redis-server; then kill -KILL "$pid" 2>/dev/null || true; fi
      _svc_log "redis stopped"
    fi
    rm -f "$state/redis.pid"
  fi
  if [ -f "$state/pg/postmaster.pid" ]; then
    bindir=$(_svc_pg_bindir) || bindir=""
    if [ -z "$bindir" ] || ! _svc_as_pg "$bindir/pg_ctl" -D "$state/pg" -m fast -w -t 20 stop >&2; then
      pid=$(head -n 1 "$state/pg/postmaster.pid" 2>/dev/null) || pid=""
      if [ -n "$pid" ] && _svc_running "$pid" postgres; then
        kill -QUIT "$pid" 2>/dev/null || true
      fi
    fi
    _svc_log "postgres stopped"
  fi
  rm -rf "$state"
}

# Executed rather than sourced: dispatch on the first argument.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  case "${1:-}" in
    start) services_start && cat "$MCP_TASKS_SERVICES_DIR/env" ;;
    stop) services_stop ;;
    env) if [ -f "$MCP_TASKS_SERVICES_DIR/env" ]; then cat "$MCP_TASKS_SERVICES_DIR/env"; else exit 1; fi ;;
    *)
      echo "usage: $0 start|stop|env" >&2
      exit 2
      ;;
  esac
fi
