#!/usr/bin/env bash
# Cost of the billing quota checks on the create routes they guard (issue 16):
# the same built binary twice, --billing off (no gate at all) against
# --billing showback on a plan whose limits are high enough never to refuse
# (so every create runs its check), alternated in the same run:
#   [ROUTES="projects tasks ingest"] [SAME=1] .ci/bench-billing.sh [runs] [seconds] [connections]   (defaults 4, 5, 16)
# Routes: POST /api/projects (projects quota), POST /api/tasks with
# enabled=true (enabled-tasks quota) and webhook ingest (monthly events
# counter bumped in the group commit). wrk's Lua counter makes every name and
# alert unique; ingest spreads over four webhooks (each is rate-limited to
# 100,000/min). Rates count 2xx answers only; beside each, the server's own CPU
# time (user+system from /proc) per 2xx answer, which a shared machine's load
# disturbs far less than throughput. Needs wrk, curl, jq.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-4}; secs=${2:-5}; conns=${3:-16}
work=$(mktemp -d)
# start runs in a subshell: the servers' pids go to a file so cleanup finds them.
cleanup() { [ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/opsagent" .
cat >"$work/plans.json" <<'JSON'
[{"id": "bench", "name": "Bench", "limits": {"members": 1000000, "projects": 1000000, "enabled_tasks": 1000000,
  "connectors": 1000000, "webhook_events_per_month": 100000000}}]
JSON
cat >"$work/project.lua" <<'LUA'
local n = 0
request = function() n = n + 1; return wrk.format("POST", nil, nil, '{"name":"bench-' .. n .. '"}') end
LUA
cat >"$work/task.lua" <<'LUA'
local n = 0
request = function() n = n + 1
  return wrk.format("POST", nil, nil, '{"name":"t' .. n .. '","prompt":"check the disk","enabled":true}') end
LUA

start() { # name flags... -> "addr token project hookpath secret"
  local name=$1; shift
  local addr="" J='content-type: application/json'
  "$work/opsagent" serve --addr 127.0.0.1:0 --data-dir "$work/data-$name" --signup open "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  echo "$pid" >>"$work/pids"
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/.*msg="opsagent listening" addr=\([^ ]*\).*/\1/p' "$work/$name.log" | head -1)
    [ -n "$addr" ] && break; sleep 0.1
  done
  local B="http://$addr" tok proj task hook hooks=""
  tok=$(curl -s $B/api/auth/register -H "$J" -d '{"email":"bench@example.com","password":"a long passphrase"}' | jq -r .access_token)
  proj=$(curl -s $B/api/projects -H "Authorization: Bearer $tok" -H "$J" -d '{"name":"production"}' | jq -r .id)
  # Four webhooks: one is capped at 100,000 deliveries a minute (its own rate limit).
  for i in 1 2 3 4; do
    task=$(curl -s $B/api/tasks -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" -d '{"name":"on alert '$i'","prompt":"look","enabled":true}' | jq -r .id)
    hook=$(curl -s -X PUT $B/api/tasks/$task/webhook -H "Authorization: Bearer $tok" -H "X-Project-ID: $proj" -H "$J" \
      -d '{"provider":"generic","scheme":"bearer","rate_limit_per_minute":100000,"dedupe_window_seconds":0}')
    hooks="$hooks{\"$(echo "$hook" | jq -r .url)\", \"Bearer $(echo "$hook" | jq -r .secret)\"},"
  done
  cat >"$work/alerts-$name.lua" <<LUA
local hooks = {$hooks}
local n = 0
request = function() n = n + 1
  local h = hooks[(n % 4) + 1]
  return wrk.format("POST", h[1], {["Host"] = wrk.headers["Host"], ["Authorization"] = h[2], ["content-type"] = "application/json"}, '{"alert":"disk","n":' .. n .. '}') end
LUA
  echo "$addr $tok $proj $pid"
}
read -r addrO tokO projO pidO < <(start off --billing off)
# SAME=1 starts the second server with --billing off too: the A/A noise floor.
if [ -n "${SAME:-}" ]; then read -r addrS tokS projS pidS < <(start showback --billing off)
else read -r addrS tokS projS pidS < <(start showback --billing showback --billing-plans "$work/plans.json" --billing-default-plan bench); fi
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user+system ticks of a server
wrkrun() { # url script auth project pid -> "2xx/s, server CPU per 2xx request"
  local c0 c1
  c0=$(cpu "$5")
  wrk -t2 -c"$conns" -d"${secs}s" -s "$work/$2" -H "Authorization: Bearer $3" -H "X-Project-ID: $4" \
    -H 'content-type: application/json' "$1" >"$work/wrk.out"
  c1=$(cpu "$5")
  awk -v s="$secs" -v ticks=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n = $1} /Non-2xx/ {e = $5}
    END {ok = n - e; printf "%.0f/s, %.0f us CPU/req%s\n", ok / s, (ok ? ticks / hz * 1e6 / ok : 0), (e ? " (" e " non-2xx)" : "")}' "$work/wrk.out"
}
route() { # name mode -> req/s
  case "$1-$2" in
    projects-off) wrkrun "http://$addrO/api/projects" project.lua "$tokO" "$projO" "$pidO" ;;
    projects-showback) wrkrun "http://$addrS/api/projects" project.lua "$tokS" "$projS" "$pidS" ;;
    tasks-off) wrkrun "http://$addrO/api/tasks" task.lua "$tokO" "$projO" "$pidO" ;;
    tasks-showback) wrkrun "http://$addrS/api/tasks" task.lua "$tokS" "$projS" "$pidS" ;;
    ingest-off) wrkrun "http://$addrO/" alerts-off.lua "$tokO" "$projO" "$pidO" ;;
    ingest-showback) wrkrun "http://$addrS/" alerts-showback.lua "$tokS" "$projS" "$pidS" ;;
  esac
}
echo "billing quota checks, $conns connections, $runs alternated ${secs}s runs per route; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for rt in ${ROUTES:-projects tasks ingest}; do
  for r in $(seq 1 "$runs"); do
    if [ $((r % 2)) = 1 ]; then o=$(route $rt off); s=$(route $rt showback)
    else s=$(route $rt showback); o=$(route $rt off); fi
    echo "$rt run $r: billing off $o | showback (quota checked) $s"
    echo "$rt $o | $s" >>"$work/rounds"
  done
done
# Per route: median and mean of each side's rounds, and showback against off.
echo "summary (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
for rt in ${ROUTES:-projects tasks ingest}; do
  grep "^$rt " "$work/rounds" | awk -F'|' -v rt="$rt" '
    function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
    function pct(b, a) { return a ? sprintf("%+.1f %%", (b - a) / a * 100) : "n/a" }
    function num(s, re) { match(s, re); return substr(s, RSTART, RLENGTH) + 0 }
    { n++; ro[n] = num($1, "[0-9]+/s"); co[n] = num($1, "[0-9]+ us"); rs[n] = num($2, "[0-9]+/s"); cs[n] = num($2, "[0-9]+ us")
      sro += ro[n]; sco += co[n]; srs += rs[n]; scs += cs[n]
      # Pooled (all CPU over all rows) and the marginal cost: the slope of the
      # CPU of each round against its rows, which leaves out the CPU a server
      # spends per second whatever its rate (timers, the audit writer), the
      # part that makes a slow round look expensive per row.
      po += co[n] * ro[n]; ps += cs[n] * rs[n]
      xo += ro[n]; yo += co[n] * ro[n]; xxo += ro[n] * ro[n]; xyo += ro[n] * co[n] * ro[n]
      xs += rs[n]; ys += cs[n] * rs[n]; xxs += rs[n] * rs[n]; xys += rs[n] * cs[n] * rs[n] }
    END { mro = med(ro, n); mco = med(co, n); mrs = med(rs, n); mcs = med(cs, n)
      printf "%s (%d rounds): CPU/row median %.0f -> %.0f us (%s), mean %.0f -> %.0f us (%s); 2xx/s median %.0f -> %.0f (%s), mean %.0f -> %.0f (%s)\n",
        rt, n, mco, mcs, pct(mcs, mco), sco/n, scs/n, pct(scs/n, sco/n), mro, mrs, pct(mrs, mro), sro/n, srs/n, pct(srs/n, sro/n)
      so = (n * xyo - xo * yo) / (n * xxo - xo * xo); ss = (n * xys - xs * ys) / (n * xxs - xs * xs)
      printf "%s: CPU/row pooled %.0f -> %.0f us (%s); marginal (slope of CPU over rows) %.0f -> %.0f us (%s)\n",
        rt, po/xo, ps/xs, pct(ps/xs, po/xo), so, ss, pct(ss, so) }'
done
