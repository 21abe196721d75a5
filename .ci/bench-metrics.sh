#!/usr/bin/env bash
# What the HTTP metrics middleware costs: the same binary twice on loopback,
# default settings (A) against --disable-http-metrics (B), wrk on the
# authenticated GET /api/auth/me, rounds alternated in the same run.
#   .ci/bench-metrics.sh [rounds] [seconds]     (defaults 3 and 10)
# Needs wrk, curl and jq. Prints, per round, throughput and the server's CPU
# time per request (from /proc/PID/stat, so other load on a shared machine
# disturbs it far less than throughput), and the means.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; secs=${2:-10}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/opsagent" .

start() { # name, extra flags...
  local name=$1; shift
  "$work/opsagent" serve --addr 127.0.0.1:0 --data-dir "$work/$name" "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/.*msg="opsagent listening" addr=\([^ ]*\).*/\1/p' "$work/$name.log" | head -1)
    [ -n "$addr" ] && break; sleep 0.1
  done
  local token
  token=$(curl -s "http://$addr/api/auth/register" -H 'content-type: application/json' \
    -d '{"email":"bench@example.com","password":"a long passphrase"}' | jq -r .access_token)
  echo "$addr $token $pid"
}
read -r addrA tokA pidA < <(start a)
# B_FLAGS="" compares the build with itself (the noise floor).
read -r addrB tokB pidB < <(start b ${B_FLAGS---disable-http-metrics})
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # addr token pid -> "req/s µs-CPU-per-request"
  local c0 out c1
  c0=$(cpu "$3")
  out=$(wrk -t2 -c32 -d"${secs}s" -H "Authorization: Bearer $2" "http://$1/api/auth/me")
  c1=$(cpu "$3")
  echo "$out" | awk -v c0="$c0" -v c1="$c1" -v tck="$tck" '
    /requests in/ {n = $1} /Requests\/sec/ {r = $2}
    END {printf "%.0f %.1f\n", r, (c1 - c0) / tck * 1e6 / n}'
}
run "$addrA" "$tokA" "$pidA" >/dev/null; run "$addrB" "$tokB" "$pidB" >/dev/null   # warm-up
: >"$work/results"
for r in $(seq 1 "$rounds"); do
  # Alternate which goes first, so drift in the machine's load cancels.
  if [ $((r % 2)) = 1 ]; then a=$(run "$addrA" "$tokA" "$pidA"); b=$(run "$addrB" "$tokB" "$pidB")
  else b=$(run "$addrB" "$tokB" "$pidB"); a=$(run "$addrA" "$tokA" "$pidA"); fi
  echo "$a $b" >>"$work/results"
  echo "$a $b" | awk -v r="$r" '{printf "round %d: with metrics %s req/s %s µs CPU/req; without %s req/s %s µs CPU/req\n", r, $1, $2, $3, $4}'
done
awk '{ra += $1; ca += $2; rb += $3; cb += $4; n++}
  END {printf "mean: with metrics %.0f req/s, %.1f µs CPU/req; without %.0f req/s, %.1f µs CPU/req\n", ra/n, ca/n, rb/n, cb/n;
       printf "middleware cost: %.1f%% of CPU per request, %.1f%% of throughput\n", (ca-cb)/cb*100, (rb-ra)/rb*100}' "$work/results"
