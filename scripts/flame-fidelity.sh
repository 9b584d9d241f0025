#!/usr/bin/env bash
# Fidelity and speed of `warpmc flame render` against flam3-render (flam3 3.1.1,
# Debian's flam3-utils).
#
# For every genome in DIR whose variations are all flam3's (by `warpmc flame
# info`), every flame in it is rendered three times at the same size and
# quality: twice by flam3-render with different isaac_seed values and once by
# warpmc. The PSNR between the two flam3 images is the Monte Carlo noise
# floor; warpmc passes when its PSNR against each flam3 image is within
# MARGIN dB (default 1) of that floor. Genomes with variations beyond flam3's
# that warpmc implements (Fractorium's) are not compared: flam3-render drops
# those variations, warpmc does not. Genomes with variations warpmc does not
# implement must be refused with the unknown-variation error under --strict.
#
# Files with several flames also get the frame halfway between the first
# two rendered by flam3-animate and `warpmc flame animate` (interpolation
# and motion blur), compared the same way.
#
# Then, for speed, one flame per genome is rendered on one CPU thread by both
# programs at the same quality and the iterations per second compared (the
# sample count each program reports, over its wall time).
#
# Usage: scripts/flame-fidelity.sh [DIR ...]
# Environment:
#   WARPMC_BIN  warpmc binary (default target/release/warpmc, built if missing;
#               WARPMC is read too)
#   QS, SS   quality and size scales for the fidelity renders (default 0.1, 0.5)
#   SPEED_QS quality scale for the speed renders (default 0.05; 0 skips them)
#   MARGIN   allowed dB below the noise floor (default 1)
#   BACKEND  warpmc's backend for the fidelity renders (default cpu; the
#            speed renders always run on one CPU thread)
#   OUT      where images and the report go (default target/flame-fidelity)
# Exit status: 0 when every render is within the margin, 1 otherwise, 2 for a
# setup problem.
set -euo pipefail
cd "$(dirname "$0")/.."

QS=${QS:-0.1}
SS=${SS:-0.5}
SPEED_QS=${SPEED_QS:-0.05}
MARGIN=${MARGIN:-1}
BACKEND=${BACKEND:-cpu}
OUT=${OUT:-target/flame-fidelity}
WARPMC=${WARPMC_BIN:-${WARPMC:-target/release/warpmc}}

if ! command -v flam3-render >/dev/null; then
    echo "flame-fidelity: flam3-render not found (Debian: apt-get install flam3-utils)" >&2
    exit 2
fi
if [ ! -x "$WARPMC" ]; then
    if [ "$WARPMC" != target/release/warpmc ]; then
        echo "flame-fidelity: no warpmc binary at $WARPMC" >&2
        exit 2
    fi
    cargo build --release --quiet
fi
if [ $# -eq 0 ]; then
    set -- examples/flames
fi
mkdir -p "$OUT"
report="$OUT/report.md"
fail=0

now() { date +%s.%N; }

# compare LABEL WARPMC_PNG FLAM3_A FLAM3_B MONTAGE: one report row; the
# render passes when warpmc's mean PSNR against the two flam3 images is
# within MARGIN dB of the PSNR between them.
compare() {
    local label=$1 w=$2 a=$3 b=$4 montage=$5 floor wa wb verdict wmean gap ok
    floor=$("$WARPMC" flame compare "$a" "$b")
    wa=$("$WARPMC" flame compare "$w" "$a" --montage "$montage")
    wb=$("$WARPMC" flame compare "$w" "$b")
    verdict=$(awk -v f="$floor" -v x="$wa" -v y="$wb" -v m="$MARGIN" 'BEGIN {
        w = (x + y) / 2; gap = f - w;
        printf "%.2f %.2f %s", w, gap, (gap <= m ? "ok" : "MISSED") }')
    read -r wmean gap ok <<<"$verdict"
    echo "| $label | $floor | $wmean | $gap | $ok |" >>"$report"
    [ "$ok" = ok ] || fail=1
}

{
    echo "# warpmc flame vs flam3-render"
    echo
    echo "date $(date -u +%Y-%m-%d), $(nproc) CPU threads, warpmc backend $BACKEND, QS=$QS SS=$SS, margin $MARGIN dB"
    echo
    echo "| genome | flame | size | flam3 vs flam3 (noise floor) dB | warpmc vs flam3 dB | gap dB | within margin |"
    echo "|---|---|---|---|---|---|---|"
} >"$report"

speed_rows=()
for dir in "$@"; do
    for genome in "$dir"/*.flam3 "$dir"/*.flame; do
        [ -e "$genome" ] || continue
        name=$(basename "$genome")
        base="$OUT/${name%.*}"
        info=$("$WARPMC" flame info "$genome" 2>&1) || {
            echo "$name: warpmc flame info failed: $info" >&2
            fail=1
            continue
        }
        if ! grep -q '^supported: yes' <<<"$info"; then
            # Must be refused with the clear error, not rendered or panicked on.
            if err=$("$WARPMC" flame render "$genome" -o "$base.png" --strict 2>&1); then
                echo "$name: uses unknown variations but rendered under --strict without an error" >&2
                fail=1
            elif grep -q 'unknown variation' <<<"$err"; then
                why=$(grep -o "attribute '[^']*': unknown variation" <<<"$err" | head -1)
                echo "| $name | – | – | – | refused: $why | – | ok |" >>"$report"
            else
                echo "$name: unexpected error: $err" >&2
                fail=1
            fi
            continue
        fi
        beyond=$(grep "beyond flam3's" <<<"$info" | sed 's/.*: //' | sort -u | paste -sd, || true)
        if [ -n "$beyond" ]; then
            echo "| $name | – | – | – | not compared: flam3-render drops $beyond | – | – |" >>"$report"
            continue
        fi
        # flam3-render writes PREFIX00000.png, PREFIX00001.png, … one per flame.
        env qs="$QS" ss="$SS" isaac_seed=fidelity-a prefix="$base.flam3a." verbose=0 \
            flam3-render <"$genome"
        env qs="$QS" ss="$SS" isaac_seed=fidelity-b prefix="$base.flam3b." verbose=0 \
            flam3-render <"$genome"
        "$WARPMC" flame render "$genome" -o "$base.warpmc.png" -q "$QS" -s "$SS" --seed 1 --backend "$BACKEND" \
            --quiet 2>/dev/null
        nflames=$(grep -c '^  \[' <<<"$info")
        for ((i = 0; i < nflames; i++)); do
            idx=$(printf '%05d' "$i")
            a="$base.flam3a.$idx.png"
            b="$base.flam3b.$idx.png"
            if [ "$nflames" -eq 1 ]; then w="$base.warpmc.png"; else w="$base.warpmc.$idx.png"; fi
            size=$(file "$a" | grep -o '[0-9]* x [0-9]*' | head -1 || true)
            compare "$name | $i | $size" "$w" "$a" "$b" "$base.$idx.side-by-side.png"
        done

        # Sequences: the frame halfway between the first two flames, with
        # interpolation and motion blur, against flam3-animate.
        if [ "$nflames" -gt 1 ]; then
            t0=$(grep '^  \[0\]' <<<"$info" | grep -o 'time [-0-9.e]*' | cut -d' ' -f2)
            t1=$(grep '^  \[1\]' <<<"$info" | grep -o 'time [-0-9.e]*' | cut -d' ' -f2)
            mid=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (a + b) / 2 }')
            idx=$(printf '%05d' "$mid")
            for s in a b; do
                env begin="$mid" end="$mid" qs="$QS" ss="$SS" isaac_seed="fidelity-$s" \
                    prefix="$base.anim-flam3$s." verbose=0 flam3-animate <"$genome"
            done
            "$WARPMC" flame animate "$genome" --begin "$mid" --end "$mid" -q "$QS" -s "$SS" \
                --backend "$BACKEND" -o "$base.anim-warpmc." --quiet 2>/dev/null
            a="$base.anim-flam3a.$idx.png"
            b="$base.anim-flam3b.$idx.png"
            w="$base.anim-warpmc.$idx.png"
            compare "$name (animate, t=$mid) | – | –" "$w" "$a" "$b" "$base.anim.side-by-side.png"
        fi

        if [ "$SPEED_QS" != 0 ]; then
            t0=$(now)
            env qs="$SPEED_QS" ss=1 nthreads=1 isaac_seed=speed out="$base.speed-flam3.png" verbose=0 \
                flam3-render <"$genome"
            t1=$(now)
            "$WARPMC" --threads 1 flame render "$genome" --flame 0 -q "$SPEED_QS" --backend cpu \
                -o "$base.speed-warpmc.png" --quiet 2>/dev/null
            t2=$(now)
            # flam3 renders every flame of the file into one name; time per
            # file is compared with warpmc's first flame only when there is
            # one flame, so keep single-flame genomes for the table.
            if [ "$nflames" -eq 1 ]; then
                fs=$("$WARPMC" flame compare --text flam3_samples "$base.speed-flam3.png")
                ws=$("$WARPMC" flame compare --text flam3_samples "$base.speed-warpmc.png")
                speed_rows+=("$(awk -v n="$name" -v fs="$fs" -v ws="$ws" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
                    fr = fs / (b - a); wr = ws / (c - b);
                    printf "| %s | %.3g | %.2f | %.3g | %.3g | %.2f | %.3g | %.2f |", n, fs, b - a, fr, ws, c - b, wr, wr / fr }')")
            fi
        fi
    done
done

if [ ${#speed_rows[@]} -gt 0 ]; then
    {
        echo
        echo "Speed, one thread each (quality scale $SPEED_QS, full size; wall time includes filtering and PNG writing):"
        echo
        echo "| genome | flam3 samples | flam3 s | flam3 it/s | warpmc samples | warpmc s | warpmc it/s | warpmc / flam3 |"
        echo "|---|---|---|---|---|---|---|---|"
        printf '%s\n' "${speed_rows[@]}"
    } >>"$report"
fi

cat "$report"
echo
echo "images: $OUT/*.side-by-side.png (warpmc | flam3 | difference ×4)"
exit $fail
