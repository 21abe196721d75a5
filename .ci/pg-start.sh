#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests (issue 20), without Docker: Debian's postgresql
# package, initdb on a fresh temp dir, the server on a loopback port and a Unix socket in that dir.
# Prints the DSN the tests read from OPSAGENT_TEST_DATABASE_URL:
#   export OPSAGENT_TEST_DATABASE_URL=$(.ci/pg-start.sh)
# Stop it with: .ci/pg-stop.sh DIR (DIR is printed on stderr), or let the machine discard it.
# As root (CI), the cluster runs as the postgres user: PostgreSQL refuses to run as root.
set -euo pipefail
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/initdb" ] || { echo "pg-start: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
PORT=${PGPORT_TEST:-55432}
# The first free loopback port from there (a previous run's cluster may still hold one).
while (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; do PORT=$((PORT + 1)); done
DIR=$(mktemp -d /tmp/opsagent-pg.XXXXXX)
chmod 755 "$DIR"
AS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$DIR"
  AS=(runuser -u postgres --)
fi
"${AS[@]}" "$PGBIN/initdb" -D "$DIR/data" -U opsagent --auth=trust -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
  || { cat "$DIR/initdb.log" >&2; exit 1; }
# Tests create a database each and several server processes each hold a few connections; fsync stays on
# (the API promises durable acknowledgements, and the benchmarks measure that).
# PG_OPTS adds server options (e.g. PG_OPTS="-c shared_preload_libraries=pg_stat_statements" for the
# bench's PGSS=1).
# A port that looked free can be taken before the server binds it (or be held by a cluster still
# shutting down): on "Address already in use" the next port is tried, a few times.
for attempt in 1 2 3 4 5; do
  if "${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=128MB ${PG_OPTS:-}" start >&2; then
    break
  fi
  if [ "$attempt" = 5 ] || ! grep -q "Address already in use" "$DIR/server.log"; then
    cat "$DIR/server.log" >&2
    exit 1
  fi
  PORT=$((PORT + 1))
  while (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; do PORT=$((PORT + 1)); done
done
echo "pg-start: cluster in $DIR on 127.0.0.1:$PORT" >&2
echo "postgres://opsagent@127.0.0.1:$PORT/postgres?sslmode=disable"
