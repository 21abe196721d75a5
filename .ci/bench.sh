#!/usr/bin/env bash
# One command for issue 21's rows of BENCHMARKS.md's summary table: builds the
# product binary and the bare httprouter baseline, then runs .ci/bench
# (wrk and its own load clients in separate processes, the bare baseline
# alternated in the same run). Arguments go to the driver:
#   .ci/bench.sh                        all rows, short runs
#   .ci/bench.sh tasks me               some rows
#   BASE=main .ci/bench.sh refresh      also an earlier revision, alternated (before/after)
#   .ci/bench.sh -ingest-secs 30 -ingest-runs 10 ingest    the sustained ingest figure (five minutes)
#   .ci/bench.sh evidence changes       issue 36: gathering at the start of a run, a hanging source, the change feed at 100k
# The ingest row also runs its floor, .ci/bare-ingest (a bare durable receiver on the same stack),
# alternated under the same wrk script.
# Needs wrk (apt-get install wrk), curl-free; Linux (/proc, loopback source addresses).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "bench: wrk is missing (apt-get install -y wrk)" >&2; exit 1; }
out=$(mktemp -d)
cleanup() { git worktree remove --force "$out/base-src" >/dev/null 2>&1 || true; rm -rf "$out"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$out/opsagent" .
CGO_ENABLED=0 go build -o "$out/bare" ./.ci/bare
CGO_ENABLED=0 go build -o "$out/bench" ./.ci/bench
CGO_ENABLED=0 go build -o "$out/bare-ingest" ./.ci/bare-ingest
base=()
if [ -n "${BASE:-}" ]; then
  git worktree add -q --detach "$out/base-src" "$BASE"
  (cd "$out/base-src" && CGO_ENABLED=0 go build -o "$out/opsagent-base" .)
  base=(-base "$out/opsagent-base" -base-name "$BASE ($(git rev-parse --short "$BASE"))")
fi
"$out/bench" -bin "$out/opsagent" -bare "$out/bare" -bare-ingest "$out/bare-ingest" "${base[@]}" "$@"
