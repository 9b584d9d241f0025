#!/usr/bin/env bash
# Regenerates the flam3 reference outputs (*.out.flam3) of the interpolation
# tests from the control points (*.in.flam3, written by make_inputs.py) with
# flam3-genome 3.1.1 (Debian's flam3-utils). Palettes in the outputs are
# thinned to a subset of entries to keep the files small; the tests compare
# the entries that are present.
set -euo pipefail
cd "$(dirname "$0")"
command -v flam3-genome >/dev/null || { echo "flam3-genome (flam3-utils) is needed" >&2; exit 1; }

# thin KEEP_EVERY [ALSO_EVERY]: keeps <color> lines whose index is a multiple
# of either number.
thin() {
    python3 -c '
import re, sys
a = [int(x) for x in sys.argv[1:]]
for line in sys.stdin:
    m = re.search(r"<color index=\"(\d+)\"", line)
    if m is None or any(int(m.group(1)) % k == 0 for k in a):
        sys.stdout.write(line)
' "$@"
}

animate() { # name begin end thin-args... (extra environment before the call)
    local name=$1 begin=$2 end=$3
    shift 3
    env noedits=1 animate="$name.in.flam3" begin="$begin" end="$end" flam3-genome | thin "$@" >"$name.out.flam3"
}

animate basic -1 5 32
animate padding 0 4 64
animate padding_linear 0 4 64
animate compat 0 4 64
for mode in hsv hsv_circular rgb sweep; do
    animate "palette_$mode" 1 3 4 5
done
# Smooth: only the two middle segments have neighbours on both sides; on
# the outer ones flam3's reader has already switched to linear (with a
# warning).
animate smooth 1 39 32 2>/dev/null
stagger=0.6 animate stagger 0 8 64
env noedits=1 sequence=sequence.in.flam3 nframes=4 flam3-genome | thin 64 >sequence.out.flam3
# Motion elements (flam3-genome's loops and transitions apply them).
env noedits=1 sequence=motion.in.flam3 nframes=5 flam3-genome | thin 64 >motion.out.flam3
