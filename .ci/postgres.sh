# Start and stop a throwaway PostgreSQL cluster for the tests (sourced by .ci/run; a developer may
# `source .ci/postgres.sh && start_postgres` too, and `stop_postgres` when done).
#
# start_postgres: initdb in a new temporary directory, pg_ctl start on a free port of 127.0.0.1
# (trust authentication, fsync off: the data is thrown away), create the database
# scorer_studio_test, and export SCORER_STUDIO_TEST_PG_URL=postgresql://postgres@127.0.0.1:PORT/...
# It exits non-zero when the server does not start, so CI fails instead of skipping the tests.

_pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  local bin port
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "start_postgres: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2
    return 1
  fi
  PG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/scorer-studio-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$PG_TMP"
  fi
  port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PG_BIN=$bin
  _pg_as_owner "$bin/initdb" -D "$PG_TMP/data" -U postgres -A trust -E UTF8 --no-sync >"$PG_TMP/initdb.log" 2>&1 ||
    { cat "$PG_TMP/initdb.log" >&2; return 1; }
  _pg_as_owner "$bin/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 \
    -o "-p $port -k $PG_TMP -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
    { cat "$PG_TMP/server.log" >&2; return 1; }
  _pg_as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres scorer_studio_test
  export SCORER_STUDIO_TEST_PG_URL="postgresql://postgres@127.0.0.1:$port/scorer_studio_test"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests at $SCORER_STUDIO_TEST_PG_URL"
}

stop_postgres() {
  if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP" ]; then
    _pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
  fi
}
