#!/usr/bin/env bash
# Vendors the console's browser libraries from npm, pinned by web/npm/package-lock.json,
# into committed files so that `go run . serve` needs no Node step:
#   web/dist/vendor/  served by the console (Preact + hooks, htm, uPlot and its CSS)
#   web/testdata/     axe-core, injected by the browser tests only (never served)
# CI runs this and fails when the committed copies differ from what the lock yields
# (`web/vendor.sh --check`).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --prefix npm --ignore-scripts --no-audit --no-fund >/dev/null
m=npm/node_modules
out=dist/vendor
rm -rf "$out" && mkdir -p "$out" testdata
# The hooks module imports the bare name "preact"; browsers need a path, and the strict CSP
# forbids an inline import map, so the import is rewritten to the sibling file.
cp "$m/preact/dist/preact.mjs" "$out/preact.mjs"
sed 's#from"preact"#from"./preact.mjs"#g' "$m/preact/hooks/dist/hooks.mjs" >"$out/hooks.mjs"
cp "$m/htm/dist/htm.module.js" "$out/htm.mjs"
# uPlot ships its ES module unminified (145 KB); its minified build (51 KB) is the same code as a
# script that sets one variable, so the module is that script plus the export (the binary's budget).
{ cat "$m/uplot/dist/uPlot.iife.min.js"; printf '\nexport default uPlot;\n'; } >"$out/uplot.mjs"
grep -q '^var uPlot=function' "$out/uplot.mjs" || { echo "uPlot's minified build no longer starts as one variable" >&2; exit 1; }
cp "$m/uplot/dist/uPlot.min.css" "$out/uplot.css"
for p in preact htm uplot; do cp "$m/$p/LICENSE" "$out/LICENSE.$p"; done
cp "$m/axe-core/axe.min.js" testdata/axe.min.js
grep -q 'from"preact"' "$out/hooks.mjs" && { echo "hooks.mjs still imports the bare name" >&2; exit 1; }
if [ "${1:-}" = --check ]; then
  cd .. && git diff --exit-code --stat -- web/dist/vendor web/testdata || {
    echo "web/dist/vendor or web/testdata differ from web/npm/package-lock.json: run web/vendor.sh and commit" >&2; exit 1; }
  test -z "$(git status --porcelain --untracked-files=all -- web/dist/vendor web/testdata)" || {
    echo "untracked vendored files: run web/vendor.sh and commit" >&2; exit 1; }
fi
