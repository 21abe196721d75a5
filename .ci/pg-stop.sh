#!/usr/bin/env bash
# Stops and removes a cluster started by .ci/pg-start.sh: .ci/pg-stop.sh DIR
set -euo pipefail
DIR=$1
case "$DIR" in /tmp/opsagent-pg.*) ;; *) echo "pg-stop: not a pg-start dir: $DIR" >&2; exit 1 ;; esac
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
AS=()
[ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
"${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
rm -rf "$DIR"
