#!/usr/bin/env bash
# tests/docs/check_reference.sh DOXYGEN OUT (ctest Docs.Reference): builds the API reference
# as `cmake --build build --target docs` does, into a scratch copy of OUT's Doxyfile, and
# fails on any Doxygen warning or a public header without its page.
set -euo pipefail
doxygen=$1 out=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-doxygen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sed -e "s|^OUTPUT_DIRECTORY .*|OUTPUT_DIRECTORY = $tmp|" -e "s|^WARN_LOGFILE .*|WARN_LOGFILE = $tmp/warnings.txt|" \
  "$out/Doxyfile" > "$tmp/Doxyfile"
(cd "$tmp" && "$doxygen" Doxyfile)
[[ -f $tmp/html/index.html ]] || { echo "no html/index.html"; exit 1; }
if [[ -s $tmp/warnings.txt ]]; then
  echo "Doxygen warnings:"; cat "$tmp/warnings.txt"; exit 1
fi
src=$(sed -n 's|^INPUT *= *\([^ ]*\) .*|\1|p' "$tmp/Doxyfile")
for h in "$src"/*.h; do
  page=$(basename "$h" | sed 's/_/__/g; s/\./_8/')
  [[ -f $tmp/html/${page}.html ]] || { echo "no page for $(basename "$h") ($page.html)"; exit 1; }
done
echo "API reference: $(ls "$src"/*.h | wc -l) headers, $(ls "$tmp"/html/*.html | wc -l) pages, no warnings"
