#!/usr/bin/env bash
# flame-coverage: how many genomes (and genome files) of a directory warpmc
# renders with every variation implemented, and which variations the
# others lack.
#
#   scripts/flame-coverage.sh DIR            # uses target/release/warpmc
#   WARPMC_BIN=path/to/warpmc scripts/flame-coverage.sh DIR
#
# For each *.flame / *.flam3 / *.xml file under DIR (subdirectories too) it
# runs `warpmc flame info` (which reads as `flame render` does by default)
# and prints one line per file, then the totals: genomes and files that
# render, genomes and files that render with every variation implemented, and the
# missing variations with the number of genomes (and files) that use each.
# A file that cannot be read at all counts its <flame> elements as genomes
# that do not render.
set -euo pipefail

dir=${1:?usage: scripts/flame-coverage.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${WARPMC_BIN:-$root/target/release/warpmc}
if [ ! -x "$bin" ]; then
  echo "flame-coverage: no warpmc binary at $bin (cargo build --release, or set WARPMC_BIN)" >&2
  exit 2
fi
if [ ! -d "$dir" ]; then
  echo "flame-coverage: $dir is not a directory" >&2
  exit 2
fi

mapfile -d '' files < <(find "$dir" -type f \( -iname '*.flame' -o -iname '*.flam3' -o -iname '*.xml' \) -print0 | sort -z)
if [ ${#files[@]} -eq 0 ]; then
  echo "flame-coverage: no .flame, .flam3 or .xml files in $dir" >&2
  exit 2
fi

for f in "${files[@]}"; do
  rel=${f#"$dir"/}
  if out=$("$bin" flame info "$f" 2>&1); then
    printf '%s\t%s\n' "$rel" "$(printf '%s\n' "$out" | grep -E '^(genomes:|missing \(|renders:|supported:)' | tr '\n' '\t')"
  else
    # Unreadable: its genomes, counted from the markup, render not.
    n=$(python3 -c 'import re, sys; print(len(re.findall(r"<flame[\s>]", open(sys.argv[1], errors="replace").read())))' "$f")
    printf '%s\terror: %s\tflames: %s\n' "$rel" "$(printf '%s\n' "$out" | tail -1)" "$n"
  fi
done | python3 -c '
import collections, re, sys
files = renders = complete = 0
genomes = genomes_rendering = genomes_complete = 0
missing = collections.Counter()
missing_files = collections.Counter()
for line in sys.stdin:
    name, *fields = line.rstrip("\n").split("\t")
    status = "\t".join(fields)
    files += 1
    m = re.search(r"genomes: (\d+) of (\d+) render with every variation implemented \((\d+) render\)", status)
    if m is None:
        n = int(re.search(r"flames: (\d+)", status).group(1))
        genomes += n
        print(f"{name}: {n} genome(s), not read: {fields[0]}")
        continue
    good, total, rendering = int(m.group(1)), int(m.group(2)), int(m.group(3))
    genomes += total
    genomes_complete += good
    genomes_rendering += rendering
    if "renders: yes" in status:
        renders += 1
    if "supported: yes" in status:
        complete += 1
    m = re.search(r"missing \(genomes using each\): ([^\t]*)", status)
    lacking = ""
    if m:
        lacking = "; missing " + m.group(1)
        for item in m.group(1).split(", "):
            var, count = re.fullmatch(r"(.*) \((\d+)\)", item).groups()
            missing[var] += int(count)
            missing_files[var] += 1
    refused = ""
    if rendering < total:
        why = re.search(r"renders: no \((.*)\)", status)
        reason = why.group(1) if why else "?"
        refused = f"; {total - rendering} not rendered (first: {reason})"
    print(f"{name}: {good} of {total} genome(s) render with every variation{lacking}{refused}")
print(f"{genomes} genomes in {files} files: {genomes_rendering} genomes ({renders} whole files) render; "
      f"{genomes_complete} genomes ({complete} files) render with every variation implemented")
if missing:
    ranked = sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))
    print("missing variations (genomes, files using each): "
          + ", ".join(f"{k} ({v}, {missing_files[k]})" for k, v in ranked))
'
