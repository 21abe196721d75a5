#!/usr/bin/env bash
# Runs the README's "first hour" recipe verbatim, twice, against a fresh
# server, and checks what a new user would see: a token, the project id
# sent as X-Project-ID, a task, and the webhook URL with its note.
#   .ci/first-hour.sh [path/to/opsagent]   (builds the binary when not given)
# Needs bash, curl and jq (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "first-hour: $tool is not installed" >&2; exit 1; }
done
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
  CGO_ENABLED=0 go build -o "$work/opsagent" .
  bin="$work/opsagent"
fi

# The recipe, exactly as the README shows it.
sed -n '/<!-- first-hour:begin/,/<!-- first-hour:end/p' README.md | sed '1,2d;$d' | sed '$d' > "$work/recipe.sh"
grep -q 'api/auth/login' "$work/recipe.sh" || { echo "first-hour: recipe not found in README.md" >&2; exit 1; }

"$bin" serve --addr 127.0.0.1:0 --data-dir "$work/data" >"$work/server.log" 2>&1 &
pid=$!
addr=""
for _ in $(seq 1 100); do
  addr=$(sed -n 's/.*msg="opsagent listening" addr=\([^ ]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "first-hour: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
export B="http://$addr"

for round in 1 2; do
  out=$(bash -c "set -euo pipefail; source '$work/recipe.sh'; echo \"TOKEN=\${TOKEN:0:8} PROJECT=\$PROJECT TASK=\$TASK\"" 2>&1) || {
    echo "first-hour: round $round failed:" >&2; echo "$out" >&2; exit 1; }
  echo "round $round: $(echo "$out" | tail -1)"
  webhook=$(echo "$out" | sed '$d')
  ids=$(echo "$out" | tail -1)
  [[ $ids =~ TOKEN=eyJ ]] || { echo "first-hour: round $round got no token: $out" >&2; exit 1; }
  [[ $ids =~ PROJECT=[0-9a-f-]{36} ]] || { echo "first-hour: round $round got no project id: $out" >&2; exit 1; }
  [[ $ids =~ TASK=[0-9a-f-]{36} ]] || { echo "first-hour: round $round got no task id: $out" >&2; exit 1; }
  url=$(echo "$webhook" | jq -r .url)
  [[ $url == /api/webhooks/* ]] || { echo "first-hour: round $round webhook url $url" >&2; exit 1; }
  note=$(echo "$webhook" | jq -r .url_note)
  [[ $note == *--base-url* ]] || { echo "first-hour: round $round: no url_note naming --base-url: $webhook" >&2; exit 1; }
  if [ "$round" = 1 ]; then
    [[ $(echo "$webhook" | jq -r .secret) == whsec_* ]] || { echo "first-hour: the first round shows no secret: $webhook" >&2; exit 1; }
    first="$ids"
  else
    # The second run signed in to the same account and found the same project and task.
    [ "${ids#TOKEN=* }" = "${first#TOKEN=* }" ] || { echo "first-hour: second round differs: $first vs $ids" >&2; exit 1; }
  fi
done
# The "Rules on commands" example, as a reader runs it after the recipe (it uses the recipe's
# variables): each call must be accepted, and the evaluation must say what the README says.
sed -n '/<!-- rules-example:begin/,/<!-- rules-example:end/p' README.md | sed '1,2d;$d' | sed '$d' > "$work/rules.sh"
grep -q 'api/rules/evaluate' "$work/rules.sh" || { echo "first-hour: rules example not found in README.md" >&2; exit 1; }
out=$(bash -c "set -euo pipefail; source '$work/recipe.sh' >/dev/null; source '$work/rules.sh'" 2>&1) || {
  echo "first-hour: the rules example failed:" >&2; echo "$out" >&2; exit 1; }
if echo "$out" | jq -e 'select(type == "object" and (.detail | type) == "array")' >/dev/null 2>&1; then
  echo "first-hour: the rules example got a 422: $out" >&2; exit 1
fi
echo "$out" | tail -1 | jq -e '.verdict == "block" and .parsed == "rm -rf /srv via nice, env" and .effects == ["deletes_files"]' >/dev/null || {
  echo "first-hour: the rules example's evaluation differs from the README: $out" >&2; exit 1; }
echo "rules example: $(echo "$out" | tail -1 | jq -c '{verdict, parsed}')"
# The effective configuration names the sign-up policy now in force. (grep
# reads it all: with -q it would stop at the match, and print-config, still
# writing the lines after it, would die of SIGPIPE and fail the pipeline.)
"$bin" serve --print-config --data-dir "$work/data" | grep -x 'signup=invite' >/dev/null || { echo "first-hour: print-config does not show signup=invite" >&2; exit 1; }
echo "first-hour: ok"
