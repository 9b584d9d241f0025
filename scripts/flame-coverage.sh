#!/usr/bin/env bash
# flame-coverage: how many genome files of a directory warpmc reads with
# every variation implemented, and which variations the others lack.
#
#   scripts/flame-coverage.sh DIR            # uses target/release/warpmc
#   WARPMC_BIN=path/to/warpmc scripts/flame-coverage.sh DIR
#
# For each *.flame / *.flam3 / *.xml file it runs `warpmc flame info` (which
# reads as `flame render` does by default) and prints one line per file,
# then the totals and the missing variations with the number of files that
# use each. A file "renders" when `flame info` says so; it is "complete"
# when nothing had to be dropped.
set -euo pipefail

dir=${1:?usage: scripts/flame-coverage.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${WARPMC_BIN:-$root/target/release/warpmc}
if [ ! -x "$bin" ]; then
  echo "flame-coverage: no warpmc binary at $bin (cargo build --release, or set WARPMC_BIN)" >&2
  exit 2
fi

shopt -s nullglob nocaseglob
files=("$dir"/*.flame "$dir"/*.flam3 "$dir"/*.xml)
if [ ${#files[@]} -eq 0 ]; then
  echo "flame-coverage: no .flame, .flam3 or .xml files in $dir" >&2
  exit 2
fi

for f in "${files[@]}"; do
  if out=$("$bin" flame info "$f" 2>&1); then
    printf '%s\t%s\n' "$(basename "$f")" "$(printf '%s\n' "$out" | grep -E '^(renders|supported):' | tr '\n' ' ')"
  else
    printf '%s\terror: %s\n' "$(basename "$f")" "$(printf '%s\n' "$out" | tail -1)"
  fi
done | python3 -c '
import collections, re, sys
rows = [line.rstrip("\n").split("\t", 1) for line in sys.stdin]
renders = complete = 0
missing = collections.Counter()
for name, status in rows:
    print(f"{name}: {status}")
    if "renders: yes" in status:
        renders += 1
    if "supported: yes" in status:
        complete += 1
    m = re.search(r"supported: no \(dropped: ([^)]*)\)", status)
    if m:
        names = [n.strip() for n in m.group(1).split(",")]
        # Parameters of a dropped variation are listed too; count variations.
        variations = [n for n in names if not any(n.startswith(o + "_") for o in names if o != n)]
        missing.update(set(variations))
print(f"{len(rows)} files: {renders} render, {complete} with every variation implemented")
if missing:
    print("missing variations (files using each): " + ", ".join(f"{k} ({v})" for k, v in missing.most_common()))
'
