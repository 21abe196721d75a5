#!/usr/bin/env bash
# Issue 20's same-run comparisons, on the built binary:
#   1. authenticated GET /api/auth/me: the appliance (SQLite), one server on PostgreSQL, three servers on
#      one PostgreSQL behind a round-robin proxy; rounds alternated;
#   2. durable webhook ingest on PostgreSQL, one server, and on the appliance, alternated: four
#      Alertmanager webhooks (each is rate limited to 100,000/min, about 1,667/s), every body distinct.
#   .ci/bench-cluster.sh [rounds] [seconds] [connections]   (defaults 3, 5, 32)
# Needs wrk, curl, jq, psql and a cluster: export OPSAGENT_TEST_DATABASE_URL=$(.ci/pg-start.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; secs=${2:-5}; conns=${3:-32}
: "${OPSAGENT_TEST_DATABASE_URL:?start a cluster: export OPSAGENT_TEST_DATABASE_URL=\$(.ci/pg-start.sh)}"
work=$(mktemp -d)
pids=()
dbs=()
cleanup() {
  # serve runs in a command substitution (a subshell): its servers' pids are in $work/pids.
  for p in "${pids[@]}" $(cat "$work/pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  for d in "${dbs[@]}"; do psql -q "$OPSAGENT_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/opsagent" .
newdb() { local d="bench_$1_$$"; psql -q "$OPSAGENT_TEST_DATABASE_URL" -c "CREATE DATABASE $d" >/dev/null; dbs+=("$d")
  echo "$OPSAGENT_TEST_DATABASE_URL" | sed "s#/[^/?]*\(?\|\$\)#/$d\1#"; }
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
serve() { # dir [database-url] -> addr
  local dir=$1 url=${2:-} port; port=$(free)
  if [ -n "$url" ]; then "$work/opsagent" serve --addr 127.0.0.1:$port --data-dir "$dir" --database-url "$url" --log-level warn >"$dir.log" 2>&1 &
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

lite=$(serve "$work/lite")
pg1=$(serve "$work/pg1" "$(newdb one)")
url3=$(newdb three)
n1=$(serve "$work/n1" "$url3")
for d in n2 n3; do mkdir -p "$work/$d"; cp -r "$work/n1/vault" "$work/n1/keys" "$work/$d/"; done
n2=$(serve "$work/n2" "$url3"); n3=$(serve "$work/n3" "$url3")
lbport=$(free); "$work/lbproxy" "127.0.0.1:$lbport" "$n1" "$n2" "$n3" 2>"$work/lb.log" & pids+=($!)
pg3="127.0.0.1:$lbport"; sleep 0.5
tl=$(account "$lite"); t1=$(account "$pg1"); t3=$(account "$pg3")
get() { wrk -t2 -c"$conns" -d"${secs}s" -H "Authorization: Bearer $2" "http://$1/api/auth/me" | awk '/Requests\/sec/ {printf "%.0f/s", $2}'; }
echo "authenticated GET /api/auth/me, wrk -t2 -c$conns ${secs}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "round $r: appliance $(get "$lite" "$tl") | PostgreSQL 1 server $(get "$pg1" "$t1") | PostgreSQL 3 servers behind the proxy $(get "$pg3" "$t3")"
done

hooks() { # addr token -> lua file of four webhooks' paths and secrets
  local B="http://$1" tok=$2 proj out="$work/hooks-$1.lua"
  proj=$(curl -s "$B/api/projects" -H "Authorization: Bearer $tok" -H "$J" -d '{"name":"production"}' | jq -r .id)
  echo "hooks = {" >"$out"
  for i in 1 2 3 4; do
    local task hook
    task=$(curl -s "$B/api/tasks" -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
      -d "{\"name\":\"alerts $i\",\"prompt\":\"look\",\"overlap_policy\":\"queue\"}" | jq -r .id)
    hook=$(curl -s -X PUT "$B/api/tasks/$task/webhook" -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
      -d '{"provider":"alertmanager","rate_limit_per_minute":100000}')
    echo "  {path = \"$(echo "$hook" | jq -r .url)\", secret = \"$(echo "$hook" | jq -r .secret)\"}," >>"$out"
  done
  echo "}" >>"$out"
  cat >>"$out" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local h = hooks[(n % 4) + 1]
  local body = '{"version":"4","groupKey":"{}:{alertname=\\"Disk' .. n .. '\\"}","status":"firing","receiver":"opsagent",' ..
    '"groupLabels":{"alertname":"Disk' .. n .. '"},"commonLabels":{"alertname":"Disk' .. n .. '","severity":"warning"},' ..
    '"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Disk' .. n ..
    '","instance":"db-' .. n .. '"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z",' ..
    '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"' .. string.format("%016x", n) .. '"}]}'
  return wrk.format("POST", h.path, {["Authorization"] = "Bearer " .. h.secret, ["content-type"] = "application/json"}, body)
end
LUA
  echo "$out"
}
hl=$(hooks "$lite" "$tl"); h1=$(hooks "$pg1" "$t1")
ingest() { wrk -t2 -c"$((conns * 2))" -d"${secs}s" --latency -s "$2" "http://$1" | awk '/Requests\/sec/ {r = $2} /^ +99%/ {p = $2} /Non-2xx/ {e = $5}
    END {printf "%.0f/s p99 %s%s", r, p, (e ? " non-2xx " e : "")}'; }
echo "durable webhook ingest, four Alertmanager webhooks, wrk -t2 -c$((conns * 2)) ${secs}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "round $r: appliance $(ingest "$lite" "$hl") | PostgreSQL 1 server $(ingest "$pg1" "$h1")"
done
