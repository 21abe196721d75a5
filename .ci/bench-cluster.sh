#!/usr/bin/env bash
# Issue 20's same-run comparisons, on the built binary:
#   1. authenticated GET /api/auth/me: the appliance (SQLite), one server on PostgreSQL, three servers on
#      one PostgreSQL behind a round-robin proxy; rounds alternated;
#   2. durable webhook ingest on PostgreSQL, one server, and on the appliance, alternated: four
#      Alertmanager webhooks (each is rate limited to 100,000/min, about 1,667/s), every body distinct;
#      their tasks on the default overlap_policy skip, as issue 21's ingest row (OVERLAP=queue: a run
#      queued per delivery).
#   .ci/bench-cluster.sh [rounds] [seconds] [connections]   (defaults 3, 5, 32)
# BASE=<rev> also builds that revision and runs it as a second PostgreSQL server (its own database) in the
# ingest rounds, alternated with this tree's: a same-run before/after.
# The ingest rounds also run the floor, .ci/bare-ingest on PostgreSQL (its own database in the same cluster:
# Go's HTTP server, group commit, one multi-row INSERT per batch, synchronous_commit on; no authentication,
# parsing, dedupe, tenancy or dispatch), under the same wrk script: what this machine allows on PostgreSQL.
# ROWS=ingest runs only the ingest comparison (ROWS=me only the GETs). Each ingest figure carries the CPU per
# event of the server process and, on PostgreSQL, of the cluster's backends (every child of the postmaster
# that OPSAGENT_TEST_DATABASE_URL reaches: use a cluster of your own), from /proc, so a busy machine's
# throughput can be read against the work done.
# Needs wrk, curl, jq, psql and a cluster: export OPSAGENT_TEST_DATABASE_URL=$(.ci/pg-start.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; secs=${2:-5}; conns=${3:-32}
: "${OPSAGENT_TEST_DATABASE_URL:?start a cluster: export OPSAGENT_TEST_DATABASE_URL=\$(.ci/pg-start.sh)}"
work=$(mktemp -d)
pids=()
cleanup() {
  # serve runs in a command substitution (a subshell): its servers' pids are in $work/pids.
  for p in "${pids[@]}" $(cat "$work/pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  # newdb runs in a command substitution (a subshell): its databases are listed in $work/dbs.
  local dbs=(); [ -s "$work/dbs" ] && mapfile -t dbs <"$work/dbs"
  [ -z "${KEEP:-}" ] || { echo "kept databases (KEEP=1): ${dbs[*]}" >&2; dbs=(); }
  for d in "${dbs[@]}"; do psql -q "$OPSAGENT_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/opsagent" .
CGO_ENABLED=0 go build -o "$work/bare-ingest" ./.ci/bare-ingest
if [ -n "${BASE:-}" ]; then # an export of the revision (no worktree is registered)
  mkdir -p "$work/base-src" && git archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/opsagent-base" .)
fi
newdb() { local d="bench_$1_$$"; psql -q "$OPSAGENT_TEST_DATABASE_URL" -c "CREATE DATABASE $d" >/dev/null; echo "$d" >>"$work/dbs"
  echo "$OPSAGENT_TEST_DATABASE_URL" | sed "s#/[^/?]*\(?\|\$\)#/$d\1#"; }
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
serve() { # dir [database-url [binary]] -> addr
  local dir=$1 url=${2:-} bin=${3:-$work/opsagent} port; port=$(free)
  if [ -n "$url" ]; then "$bin" serve --addr 127.0.0.1:$port --data-dir "$dir" --database-url "$url" --log-level warn >"$dir.log" 2>&1 &
  else "$work/opsagent" serve --addr 127.0.0.1:$port --data-dir "$dir" --log-level warn >"$dir.log" 2>&1 & fi
  echo $! >>"$work/pids"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  echo "127.0.0.1:$port"
}
# A round-robin reverse proxy (Go's httputil, as small as the test's).
mkdir -p "$work/lb"
cat >"$work/lb/main.go" <<'GO'
package main

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
)

func main() {
	var ts []*url.URL
	for _, a := range os.Args[2:] {
		u, _ := url.Parse("http://" + a)
		ts = append(ts, u)
	}
	var n atomic.Uint64
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(ts[n.Add(1)%uint64(len(ts))]) }}
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 256}
	panic(http.ListenAndServe(os.Args[1], rp))
}
GO
(cd "$work/lb" && CGO_ENABLED=0 go build -o "$work/lbproxy" main.go)
J='content-type: application/json'
account() { # addr -> token
  curl -s "http://$1/api/auth/register" -H "$J" -d '{"email":"bench@example.com","password":"a long passphrase"}' | jq -r .access_token; }

rows=${ROWS:-me ingest}
# The bench tasks' overlap_policy: skip (the default of a task, and what issue 21's ingest row runs: while a
# task's run is in progress its alerts are recorded as skipped on the event) or queue (every alert queues a
# run of its own: a session and a task run per delivery, the runs trailing the deliveries).
overlap=${OVERLAP:-skip}
lite=$(serve "$work/lite")
url1=$(newdb one); pg1=$(serve "$work/pg1" "$url1")
tl=$(account "$lite"); t1=$(account "$pg1")
# The server processes by address (serve's pids file is in start order: lite, pg1, ...).
litepid=$(sed -n 1p "$work/pids"); pg1pid=$(sed -n 2p "$work/pids")
if [ -n "${BASE:-}" ]; then
  urlb=$(newdb base); pgb=$(serve "$work/pgb" "$urlb" "$work/opsagent-base"); tb=$(account "$pgb"); pgbpid=$(tail -1 "$work/pids")
fi
pgmaster=$(head -1 "$(psql -Atq "$OPSAGENT_TEST_DATABASE_URL" -c "SHOW data_directory")/postmaster.pid" 2>/dev/null || true)
ticks() { # pids... -> their utime+stime in clock ticks
  local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
# PostgreSQL's CPU for one server: the backends connected to its database and the cluster's own processes
# (WAL writer, checkpointer, autovacuum...), not the other server's backends (its queued runs go on running
# in the rounds that follow its own).
pgticks() { # database -> clock ticks
  [ -n "$pgmaster" ] || { echo 0; return; }
  ticks "$pgmaster" $(psql -Atq "$OPSAGENT_TEST_DATABASE_URL" -c "SELECT pid FROM pg_stat_activity
    WHERE (datname = '$1' OR backend_type <> 'client backend') AND pid <> pg_backend_pid()"); }
dbof() { echo "$1" | sed 's#.*/\([^/?]*\).*#\1#'; }
if [[ " $rows " == *" me "* ]]; then
url3=$(newdb three)
n1=$(serve "$work/n1" "$url3")
for d in n2 n3; do mkdir -p "$work/$d"; cp -r "$work/n1/vault" "$work/n1/keys" "$work/$d/"; done
n2=$(serve "$work/n2" "$url3"); n3=$(serve "$work/n3" "$url3")
lbport=$(free); "$work/lbproxy" "127.0.0.1:$lbport" "$n1" "$n2" "$n3" 2>"$work/lb.log" & pids+=($!)
pg3="127.0.0.1:$lbport"; sleep 0.5
t3=$(account "$pg3")
get() { wrk -t2 -c"$conns" -d"${secs}s" -H "Authorization: Bearer $2" "http://$1/api/auth/me" | awk '/Requests\/sec/ {printf "%.0f/s", $2}'; }
echo "authenticated GET /api/auth/me, wrk -t2 -c$conns ${secs}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "round $r: appliance $(get "$lite" "$tl") | PostgreSQL 1 server $(get "$pg1" "$t1") | PostgreSQL 3 servers behind the proxy $(get "$pg3" "$t3")"
done
fi
[[ " $rows " == *" ingest "* ]] || exit 0

hooks() { # addr token -> lua file of four webhooks' paths and secrets
  local B="http://$1" tok=$2 proj out="$work/hooks-$1.lua"
  proj=$(curl -s "$B/api/projects" -H "Authorization: Bearer $tok" -H "$J" -d '{"name":"production"}' | jq -r .id)
  echo "hooks = {" >"$out"
  for i in 1 2 3 4; do
    local task hook
    task=$(curl -s "$B/api/tasks" -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
      -d "{\"name\":\"alerts $i\",\"prompt\":\"look\",\"overlap_policy\":\"$overlap\"}" | jq -r .id)
    hook=$(curl -s -X PUT "$B/api/tasks/$task/webhook" -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
      -d '{"provider":"alertmanager","rate_limit_per_minute":100000}')
    echo "  {path = \"$(echo "$hook" | jq -r .url)\", secret = \"$(echo "$hook" | jq -r .secret)\"}," >>"$out"
  done
  echo "}" >>"$out"
  cat >>"$out" <<'LUA'
-- Every wrk run (its label is the script's argument) and every thread sends its own alerts: repeated
-- bodies would be answered by the 60 s dedupe window as cheap duplicates, not stored.
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
local run = "r"
function init(args) run = args[1] or "r" end
local n = 0
request = function()
  n = n + 1
  local h = hooks[(n % 4) + 1]
  local id = run .. "-" .. tid .. "-" .. n
  local body = '{"version":"4","groupKey":"{}:{alertname=\\"Disk' .. id .. '\\"}","status":"firing","receiver":"opsagent",' ..
    '"groupLabels":{"alertname":"Disk' .. id .. '"},"commonLabels":{"alertname":"Disk' .. id .. '","severity":"warning"},' ..
    '"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Disk' .. id ..
    '","instance":"db-' .. id .. '"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z",' ..
    '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"' .. id .. '"}]}'
  return wrk.format("POST", h.path, {["Authorization"] = "Bearer " .. h.secret, ["content-type"] = "application/json"}, body)
end
LUA
  echo "$out"
}
urlf=$(newdb floor); mkdir -p "$work/floor"
"$work/bare-ingest" 127.0.0.1:0 "$work/floor" "$urlf" >"$work/floor.addr" 2>"$work/floor.log" & floorpid=$!; pids+=($floorpid)
for _ in $(seq 1 100); do [ -s "$work/floor.addr" ] && break; sleep 0.1; done
floor=$(head -1 "$work/floor.addr")
hl=$(hooks "$lite" "$tl"); h1=$(hooks "$pg1" "$t1"); [ -z "${BASE:-}" ] || hb=$(hooks "$pgb" "$tb")
hz=$(getconf CLK_TCK)
ingest() { # addr lua server-pid database-or-empty run-label -> throughput, p99, CPU per event (server, PostgreSQL)
  local s0 g0 e0 out
  s0=$(ticks "$3"); g0=$(pgticks "$4"); e0=$(ended "$4")
  out=$(wrk -t2 -c"$((conns * 2))" -d"${secs}s" --latency -s "$2" "http://$1" -- "$5")
  echo "$out" | awk -v s="$(( $(ticks "$3") - s0 ))" -v g="$(( $(pgticks "$4") - g0 ))" -v hz="$hz" -v pg="$4" \
    -v runs="$(( $(ended "$4") - e0 ))" -v secs="$secs" '
    /requests in/ {n = $1} /Requests\/sec/ {r = $2} /^ +99%/ {p = $2} /Non-2xx/ {e = $5}
    END {printf "%.0f/s p99 %s%s, CPU/event server %.0f µs", r, p, (e ? " non-2xx " e : ""), s / hz / (n - e) * 1e6
      if (pg) printf " + PostgreSQL %.0f µs", g / hz / (n - e) * 1e6
      if (runs > 0) printf ", runs ended %.0f/s", runs / secs}'; }
# The queued runs the server ended (the bench tasks queue a run per delivery and run one at a time per task:
# the runs trail the deliveries, and their CPU falls in whichever rounds they end in): read CPU per event
# against it. 0 for a database without agent sessions (the floor's).
ended() { [ -n "$1" ] || { echo 0; return; }
  psql -Atq "$(echo "$OPSAGENT_TEST_DATABASE_URL" | sed "s#/[^/?]*\(?\|\$\)#/$1\1#")" -c \
    "SELECT count(*) FROM agent_sessions WHERE ended_at IS NOT NULL" 2>/dev/null || echo 0; }
if [ -n "${PGSS:-}" ]; then
  psql -q "$OPSAGENT_TEST_DATABASE_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
fi
echo "durable webhook ingest, four Alertmanager webhooks, wrk -t2 -c$((conns * 2)) ${secs}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  a=$(ingest "$lite" "$hl" "$litepid" "" "r$r")
  if [ -n "${BASE:-}" ] && [ $((r % 2)) = 0 ]; then # the base goes first every other round
    b=$(ingest "$pgb" "$hb" "$pgbpid" "$(dbof "$urlb")" "r$r"); p=$(ingest "$pg1" "$h1" "$pg1pid" "$(dbof "$url1")" "r$r")
  else
    p=$(ingest "$pg1" "$h1" "$pg1pid" "$(dbof "$url1")" "r$r"); [ -z "${BASE:-}" ] || b=$(ingest "$pgb" "$hb" "$pgbpid" "$(dbof "$urlb")" "r$r")
  fi
  f=$(ingest "$floor" "$h1" "$floorpid" "$(dbof "$urlf")" "r$r")
  line="round $r: appliance $a | PostgreSQL 1 server $p"
  [ -z "${BASE:-}" ] || line="$line | PostgreSQL, $BASE $b"
  line="$line | floor (bare-ingest on PostgreSQL) $f"
  echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
done
# What the PostgreSQL server stored: every 2xx above should be an event of its own, not a dedupe answer, so
# this count should be the sum of its rounds' rates times the seconds.
stored=$(psql -Atq "$url1" -c "SELECT greatest(count(*), 1) FROM webhook_events")
psql -Atq "$url1" -c "SELECT 'PostgreSQL server stored ' || count(*) || ' events; statuses: ' ||
  (SELECT string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM webhook_events GROUP BY status) s)
  FROM webhook_events"
# PGSS=1: the PostgreSQL server's statements from pg_stat_statements (the cluster needs
# shared_preload_libraries = 'pg_stat_statements'; the extension is created here), reset before the ingest
# rounds: calls and time per stored event, the most expensive first.
if [ -n "${PGSS:-}" ]; then
  psql -Atq "$OPSAGENT_TEST_DATABASE_URL" -F ' | ' -c "SELECT round(s.calls::numeric / $stored, 2) || ' calls/event', round((s.total_exec_time * 1000 / $stored)::numeric, 1) || ' µs/event',
    round(s.wal_bytes::numeric / $stored) || ' WAL B/event', s.rows, left(regexp_replace(s.query, '\s+', ' ', 'g'), 160)
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$(dbof "$url1")'
    ORDER BY s.total_exec_time DESC LIMIT ${PGSS_TOP:-40}"
fi
