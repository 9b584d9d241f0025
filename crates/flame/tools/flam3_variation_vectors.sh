#!/bin/sh
# Rebuilds crates/flame/tests/data/variations/flam3_vectors.txt from flam3
# 3.1.1's own code (see flam3_variation_vectors.c). Needs gcc, libxml2's
# headers and flam3-3.1.1's sources unpacked in $FLAM3. Run from anywhere.
#
# flam3 is compiled without -ffast-math (its own build uses -O3
# -ffast-math) so that the reference is plain IEEE double arithmetic; its
# three random functions in flam3.c are renamed away so that the harness's
# logged word stream replaces them.
set -eu
: "${FLAM3:?set FLAM3 to the unpacked flam3-3.1.1 source directory}"
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../tests/data/variations/flam3_vectors.txt"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cflags="-O2 -w -std=gnu99 -I$FLAM3 -I/usr/include/libxml2 -DGIT_REV=\"\" -DPACKAGE_DATA_DIR=\"/usr/share/flam3\""
gcc $cflags -Dflam3_random_isaac_01=flam3_orig_isaac_01 -Dflam3_random_isaac_11=flam3_orig_isaac_11 \
    -Dflam3_random_isaac_bit=flam3_orig_isaac_bit -c "$FLAM3/flam3.c" -o "$build/flam3.o"
for f in parser variations interpolation palettes isaac filters png jpeg; do
    gcc $cflags -c "$FLAM3/$f.c" -o "$build/$f.o"
done
gcc $cflags "$here/flam3_variation_vectors.c" "$build"/*.o -lxml2 -lpng -ljpeg -lz -lm -lpthread \
    -o "$build/vectors"
mkdir -p "$(dirname "$out")"
"$build/vectors" > "$out"
echo "wrote $out ($(wc -l < "$out") lines)"
