#!/usr/bin/env bash
# check-julia-syntax.sh — parses the Julia binding and example with the tree-sitter Julia grammar
# (npm: tree-sitter 0.21.1 + tree-sitter-julia 0.23.1, prebuilt, into a temporary directory)
# and fails on any ERROR or MISSING node. Julia itself cannot be installed where libtc is
# built, so this is the syntax check its sources get; it needs node, npm and the npm registry,
# and is not part of ctest. Usage: tools/check-julia-syntax.sh [FILE.jl ...]
set -euo pipefail
files=()
for f in "$@"; do files+=("$(readlink -f "$f")"); done
cd "$(dirname "$0")/.."
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(find "$PWD/bindings/julia" "$PWD/examples/julia" -name '*.jl' | sort)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tc-julia-syntax.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm install --ignore-scripts --no-audit --no-fund --silent \
   tree-sitter@0.21.1 tree-sitter-julia@0.23.1 >/dev/null)
cat >"$tmp/parse.js" <<'JS'
const Parser = require('tree-sitter');
const parser = new Parser();
parser.setLanguage(require('tree-sitter-julia'));
let bad = 0;
for (const f of process.argv.slice(2)) {
  const tree = parser.parse(require('fs').readFileSync(f, 'utf8'), null, {bufferSize: 1 << 22});
  let errors = 0;
  const walk = (n) => {
    if (n.type === 'ERROR' || n.isMissing) {
      errors++;
      console.log(`${f}:${n.startPosition.row + 1}:${n.startPosition.column + 1}: ${n.isMissing ? 'missing' : 'syntax error at'} ${n.text.split('\n')[0].slice(0, 60)}`);
    }
    n.children.forEach(walk);
  };
  walk(tree.rootNode);
  console.log(`${f}: ${errors ? errors + ' error(s)' : 'ok'}`);
  bad += errors;
}
process.exit(bad ? 1 : 0);
JS
NODE_PATH=$tmp/node_modules node "$tmp/parse.js" "${files[@]}"
