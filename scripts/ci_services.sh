#!/usr/bin/env bash
# Start the servers the Redis and PostgreSQL store tests use, on 127.0.0.1 only.
#
# Idempotent: installs the Debian packages if missing (needs root), starts what is not
# already running, and leaves running servers alone. It exports nothing; the tests read:
#
#   MEMORY_CHAINS_TEST_REDIS_URL=redis://127.0.0.1:6390/0
#   MEMORY_CHAINS_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5433/memory_chains_test
#
# Redis runs without persistence (--save '' --appendonly no). PostgreSQL is a throwaway
# cluster in $MC_PG_DATA (default /tmp/memory_chains_pg) with trust auth on loopback.
set -euo pipefail

REDIS_PORT="${MC_REDIS_PORT:-6390}"
PG_PORT="${MC_PG_PORT:-5433}"
PG_DATA="${MC_PG_DATA:-/tmp/memory_chains_pg}"
PG_DB=memory_chains_test

as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# -- packages ---------------------------------------------------------------------------
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ] && [ -n "${MC_NO_INSTALL:-}" ]; then
    echo "ci_services: ${missing[*]} not installed (MC_NO_INSTALL is set)" >&2
    exit 3
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "ci_services: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"

# -- Redis ------------------------------------------------------------------------------
if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    echo "ci_services: redis already up on 127.0.0.1:$REDIS_PORT"
else
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
        --daemonize yes --dir /tmp --logfile "/tmp/memory_chains_redis_$REDIS_PORT.log"
    for _ in $(seq 50); do
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null
    echo "ci_services: redis started on 127.0.0.1:$REDIS_PORT"
fi

# -- PostgreSQL -------------------------------------------------------------------------
if [ ! -s "$PG_DATA/PG_VERSION" ]; then
    mkdir -p "$PG_DATA"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$PG_DATA"
    as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 \
        --no-locale >/dev/null
fi
if as_postgres "$PG_BIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q; then
    echo "ci_services: postgresql already up on 127.0.0.1:$PG_PORT"
else
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w start \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DATA -c fsync=off" >/dev/null
    echo "ci_services: postgresql started on 127.0.0.1:$PG_PORT"
fi
if ! as_postgres "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q 1; then
    as_postgres "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$PG_DB"
fi
echo "ci_services: MEMORY_CHAINS_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
echo "ci_services: MEMORY_CHAINS_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$PG_DB"
