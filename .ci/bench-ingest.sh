#!/usr/bin/env bash
# Webhook ingest on DEFAULT settings (60 s dedupe window on), the built binary
# against a baseline build of another revision, alternated in the same run:
#   .ci/bench-ingest.sh [baseline-rev] [runs] [seconds] [connections]
# (defaults HEAD~1, 6, 5, 64). Each binary gets a fresh data dir, an
# Alertmanager webhook, and wrk posting distinct alert groups (a Lua counter
# makes every body unique, so nothing is deduplicated and every delivery is a
# durable insert). Consecutive runs show whether throughput holds as the
# dedupe window fills. The webhook's own rate limit is raised to its maximum
# (100,000/min, about 1,667/s): above it deliveries are 429s, counted apart.
# Needs wrk, curl, jq, git.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD~1}; runs=${2:-6}; secs=${3:-5}; conns=${4:-64}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  git worktree remove --force "$work/base-src" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/new" .
git worktree add -q --detach "$work/base-src" "$rev"
(cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base" .)

cat >"$work/alerts.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local body = '{"version":"4","groupKey":"{}:{alertname=\\"Disk' .. n .. '\\"}","status":"firing","receiver":"opsagent",' ..
    '"groupLabels":{"alertname":"Disk' .. n .. '"},"commonLabels":{"alertname":"Disk' .. n .. '","severity":"warning"},' ..
    '"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Disk' .. n ..
    '","instance":"db-' .. n .. '"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z",' ..
    '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"' .. string.format("%016x", n) .. '"}]}'
  return wrk.format("POST", nil, nil, body)
end
LUA

start() { # name -> "addr path secret pid"
  local name=$1 addr="" J='content-type: application/json'
  "$work/$name" serve --addr 127.0.0.1:0 --data-dir "$work/data-$name" >"$work/$name.log" 2>&1 &
  local pid=$!; pids+=($pid)
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/.*msg="opsagent listening" addr=\([^ ]*\).*/\1/p' "$work/$name.log" | head -1)
    [ -z "$addr" ] && addr=$(sed -n 's/.*"msg":"opsagent listening".*"addr":"\([^"]*\)".*/\1/p' "$work/$name.log" | head -1)
    [ -n "$addr" ] && break; sleep 0.1
  done
  local B="http://$addr" tok proj task hook
  tok=$(curl -s $B/api/auth/register -H "$J" -d '{"email":"bench@example.com","password":"a long passphrase"}' | jq -r .access_token)
  curl -s $B/api/onboarding/bootstrap -H "Authorization: Bearer $tok" -H "$J" \
    -d '{"org_name":"Bench","project_name":"production","task_template":"disk-pressure"}' >/dev/null
  proj=$(curl -s $B/api/projects -H "Authorization: Bearer $tok" | jq -r '.[] | select(.name=="production") | .id')
  task=$(curl -s $B/api/tasks -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" | jq -r '.items[0].id')
  hook=$(curl -s -X PUT $B/api/tasks/$task/webhook -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
    -d '{"provider":"alertmanager","rate_limit_per_minute":100000}')
  echo "$addr $(echo "$hook" | jq -r .url) $(echo "$hook" | jq -r .secret) $pid"
}
read -r addrN pathN secN pidN < <(start new)
read -r addrB pathB secB pidB < <(start base)
run() { # addr path secret -> "req/s p99"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$work/alerts.lua" -H "Authorization: Bearer $3" \
    -H 'content-type: application/json' "http://$1$2" | awk '/Requests\/sec/ {r = $2} /^ +99%/ {p = $2} /Non-2xx/ {e = $5}
    END {printf "%.0f/s p99 %s%s\n", r, p, (e ? " non-2xx " e : "")}'
}
echo "ingest, default settings, $conns connections, $runs consecutive ${secs}s runs each, alternated"
for r in $(seq 1 "$runs"); do
  if [ $((r % 2)) = 1 ]; then n=$(run "$addrN" "$pathN" "$secN"); b=$(run "$addrB" "$pathB" "$secB")
  else b=$(run "$addrB" "$pathB" "$secB"); n=$(run "$addrN" "$pathN" "$secN"); fi
  echo "run $r: this build $n | baseline ($rev) $b"
done
