#!/usr/bin/env bash
# Dedupe-heavy end-to-end check of a built binary: 200 distinct Alertmanager bodies sent over and over by wrk
# to one webhook (default 60 s window), then the server restarted and the same bodies sent again inside the
# window. Every delivery after the first of each body must be answered "duplicate"; the task must hold 200 events.
#   .ci/dedupe-e2e.sh BIN [SECS]   (wrk's response counts, the events stored and the server's RSS; exit 1 if wrong)
set -euo pipefail
BIN=$1; SECS=${2:-10}
DIR=$(mktemp -d /tmp/dedupe-e2e.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$DIR"' EXIT
start() {
  "$BIN" serve --addr 127.0.0.1:0 --data-dir "$DIR/data" >"$DIR/log" 2>&1 & PID=$!
  for i in $(seq 1 500); do ADDR=$(grep -o 'opsagent listening.*addr="\?[0-9.:]*' "$DIR/log" | grep -o '[0-9.]*:[0-9]*$' || true); [ -n "$ADDR" ] && break; sleep 0.02; done
  URL=http://$ADDR
}
start
PW="a long passphrase for the benchmark"
TOK=$(curl -s -X POST "$URL/api/auth/register" -H 'Content-Type: application/json' -d "{\"email\":\"e2e@example.com\",\"password\":\"$PW\"}" | jq -r .access_token)
curl -s -X POST "$URL/api/onboarding/bootstrap" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
  -d '{"org_name":"E2E","project_name":"production","task_template":"disk-pressure"}' >/dev/null
PROJ=$(curl -s "$URL/api/projects" -H "Authorization: Bearer $TOK" | jq -r '.[] | select(.name=="production") | .id')
H=(-H "Authorization: Bearer $TOK" -H "X-Project-ID: $PROJ" -H 'Content-Type: application/json')
TASK=$(curl -s -X POST "$URL/api/tasks" "${H[@]}" -d '{"name":"dedupe e2e","prompt":"Investigate."}' | jq -r .id)
HOOK=$(curl -s -X PUT "$URL/api/tasks/$TASK/webhook" "${H[@]}" -d '{"provider":"alertmanager","rate_limit_per_minute":100000}')
HPATH=$(echo "$HOOK" | jq -r .url); SECRET=$(echo "$HOOK" | jq -r .secret)
cat >"$DIR/dup.lua" <<LUA
local n = 0
request = function()
  n = n + 1
  local id = "d" .. (n % 200)
  local body = '{"version":"4","groupKey":"{}:{alertname=\\\\"Disk' .. id .. '\\\\"}","status":"firing","receiver":"opsagent",' ..
    '"groupLabels":{"alertname":"Disk' .. id .. '"},"commonLabels":{"alertname":"Disk' .. id .. '","severity":"warning"},' ..
    '"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Disk' .. id ..
    '","instance":"db-' .. id .. '"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z",' ..
    '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"' .. id .. '"}]}'
  return wrk.format("POST", "$HPATH", {["Authorization"] = "Bearer $SECRET", ["Content-Type"] = "application/json"}, body)
end
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) dups = 0; stored = 0; other = 0 end
function response(status, headers, body)
  if body:find('"duplicate"') then dups = dups + 1 elseif status < 300 then stored = stored + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local d, s, o = 0, 0, 0
  for _, t in ipairs(threads) do d = d + t:get("dups"); s = s + t:get("stored"); o = o + t:get("other") end
  io.write(string.format("responses: %d duplicate, %d stored, %d other\n", d, s, o))
end
LUA
count() { curl -s "$URL/api/tasks/$TASK/webhook/events?limit=1" "${H[@]}" | jq .total; }
wrk -t2 -c64 -d${SECS}s -s "$DIR/dup.lua" "$URL" | grep -E "Requests/sec|responses"
N=$(count); echo "events stored: $N (want 200); RSS $(grep VmRSS /proc/$PID/status)"
[ "$N" = 200 ] || exit 1
kill $PID; wait $PID || true
start
wrk -t2 -c64 -d5s -s "$DIR/dup.lua" "$URL" | grep -E "Requests/sec|responses"
N=$(count); echo "after restart: events stored: $N (want 200); RSS $(grep VmRSS /proc/$PID/status)"
[ "$N" = 200 ] || exit 1
