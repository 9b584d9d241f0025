#!/usr/bin/env bash
# Differential check of warpmc's flame backends against flam3 on random
# genomes.
#
# flam3-genome makes N random genomes from fixed seeds (genome k from
# seed=SEED0+k, isaac_seed=warpmc-diff-k). Each is rendered six times by
# flam3-render with different isaac_seed values: the mean PSNR of the 15
# pairs is flam3's own seed-to-seed noise floor (one pair alone varies by
# a dB on some genomes, and three pairs by half a dB). Then warpmc renders
# it with seed 1 on the CPU and, where a GPU is usable, on CUDA. A backend
# passes a genome when its mean PSNR against the flam3 images is at most
# MARGIN dB below the floor. A genome that misses is rendered again with
# RETRY more seeds and judged on the mean over all its images: genomes
# with rare bright spots (orbits that seldom visit a region, then plot
# hundreds of points there) vary between seeds far more than between
# pixels, and one image can land a dB or more from the mean on either
# backend, where a real error stays below the floor on every seed.
#
# The flam3 half and the warpmc half can run on different machines (a GPU
# machine may have no flam3):
#
#   scripts/flame-differential.sh prepare PACK   genomes + flam3 renders into PACK (needs flam3-utils)
#   scripts/flame-differential.sh check PACK     warpmc renders of PACK and the report (needs warpmc)
#   scripts/flame-differential.sh [all] PACK     both (the default; PACK defaults to target/flame-differential)
#
# Environment:
#   N         genomes (default 200)
#   SEED0     seed of the first genome (default 1)
#   QS        quality scale of every render (default 50: flam3-genome's
#             genomes are 100 × 100 at quality 1)
#   MARGIN    allowed dB below the floor (default 1)
#   RETRY     more warpmc seeds for a genome that misses (default 3; 0: none)
#   BACKENDS  warpmc backends to check (default "cpu cuda"; cuda is skipped
#             with a note where `warpmc devices` finds no GPU)
#   JOBS      parallel renders (default: the number of cores)
#   WARPMC_BIN  warpmc binary (default target/release/warpmc, built if missing;
#               WARPMC is read too)
#   FLAM3_PALETTES  flam3-palettes.xml for warpmc (default: flam3's own)
# Output: PACK/report.md (one row per genome, then a summary), images under
# PACK. Exit status: 0 when every checked backend is within MARGIN on every
# genome, 1 otherwise, 2 for a setup problem.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
prepare | check | all)
    mode=$1
    shift
    ;;
esac
PACK=${1:-target/flame-differential}
N=${N:-200}
SEED0=${SEED0:-1}
QS=${QS:-50}
MARGIN=${MARGIN:-1}
RETRY=${RETRY:-3}
BACKENDS=${BACKENDS:-cpu cuda}
JOBS=${JOBS:-$(nproc)}
WARPMC=${WARPMC_BIN:-${WARPMC:-target/release/warpmc}}

die() {
    echo "flame-differential: $*" >&2
    exit 2
}

names() { for ((k = 0; k < N; k++)); do printf 'g%04d\n' $((SEED0 + k)); done; }

prepare() {
    command -v flam3-genome >/dev/null && command -v flam3-render >/dev/null ||
        die "flam3-genome and flam3-render not found (Debian: apt-get install flam3-utils)"
    mkdir -p "$PACK/genomes" "$PACK/flam3"
    echo "N=$N SEED0=$SEED0 QS=$QS flam3=$(flam3-genome --version 2>&1 | head -1)" >"$PACK/settings"
    # One genome and its two flam3 renders; skips work already done, so an
    # interrupted prepare resumes.
    one() {
        local name=$1 seed=${1#g} g
        seed=$((10#$seed))
        g="$PACK/genomes/$name.flam3"
        if [ ! -s "$g" ]; then
            env seed="$seed" isaac_seed="warpmc-diff-$seed" flam3-genome >"$g.tmp" 2>/dev/null
            mv "$g.tmp" "$g"
        fi
        for s in a b c d e f; do
            [ -s "$PACK/flam3/$name.$s.png" ] && continue
            env qs="$QS" isaac_seed="flam3-$s-$seed" nthreads=1 out="$PACK/flam3/$name.$s.tmp.png" verbose=0 \
                flam3-render <"$g" >/dev/null 2>&1
            mv "$PACK/flam3/$name.$s.tmp.png" "$PACK/flam3/$name.$s.png"
        done
    }
    export -f one
    export PACK QS
    names | xargs -P "$JOBS" -I{} bash -c 'one {}'
    echo "prepared $N genomes and their flam3 renders in $PACK" >&2
}

check() {
    [ -d "$PACK/genomes" ] && [ -d "$PACK/flam3" ] || die "$PACK has no genomes/flam3 renders: run prepare first"
    if [ ! -x "$WARPMC" ]; then
        [ "$WARPMC" = target/release/warpmc ] || die "no warpmc binary at $WARPMC"
        cargo build --release --quiet || die "cannot build warpmc"
    fi
    local backends=() b
    for b in $BACKENDS; do
        if [ "$b" = cuda ] && ! "$WARPMC" devices --json 2>/dev/null | grep -q '"cuda_usable": true'; then
            echo "flame-differential: no usable GPU here; cuda skipped" >&2
            continue
        fi
        backends+=("$b")
    done
    [ ${#backends[@]} -gt 0 ] || die "no backend to check"
    # Every warpmc render, in parallel (a CUDA render compiles its genome's
    # kernel with NVRTC, mostly CPU work).
    # render NAME BACKEND [SEED]: seed 1 is NAME.png, seed k NAME.sk.png.
    render() {
        local name=$1 b=$2 seed=${3:-1} out="$PACK/warpmc-$2/$1.png"
        [ "$seed" = 1 ] || out="$PACK/warpmc-$b/$name.s$seed.png"
        [ -s "$out" ] && return 0
        if ! "$WARPMC" flame render "$PACK/genomes/$name.flam3" -o "$out" -q "$QS" --seed "$seed" --backend "$b" \
            --quiet >"$PACK/warpmc-$b/$name.log" 2>&1; then
            echo "render failed: $(tail -1 "$PACK/warpmc-$b/$name.log")" >"$PACK/warpmc-$b/$name.failed"
        fi
        return 0
    }
    export -f render
    export PACK QS WARPMC
    for b in "${backends[@]}"; do
        mkdir -p "$PACK/warpmc-$b"
        names | xargs -P "$JOBS" -I{} bash -c "render {} $b"
    done

    local report="$PACK/report.md" fail=0 name floor wa wb row verdict
    declare -A passed worst worst_name
    {
        echo "# warpmc flame backends vs flam3-render on $N random flam3-genome genomes"
        echo
        echo "$(cat "$PACK/settings"), margin $MARGIN dB, $(date -u +%Y-%m-%d)"
        echo
        printf '| genome | floor (flam3 vs flam3, mean of pairs) dB |'
        for b in "${backends[@]}"; do printf ' warpmc %s vs flam3 dB | %s gap dB |' "$b" "$b"; done
        echo
        printf '|---|---|'
        for b in "${backends[@]}"; do printf -- '---|---|'; done
        echo
    } >"$report"
    for b in "${backends[@]}"; do passed[$b]=0 worst[$b]=-1e9 worst_name[$b]=-; done
    # mean_psnr A B C ...: the mean PSNR of the first image against each
    # other one ("inf" for identical images counts as 1e6).
    mean_psnr() {
        local first=$1 x sum=0 n=0 p
        shift
        for x in "$@"; do
            p=$("$WARPMC" flame compare "$first" "$x")
            sum=$(awk -v s="$sum" -v p="$p" 'BEGIN { if (p == "inf") p = 1e6; printf "%.6f", s + p }')
            n=$((n + 1))
        done
        awk -v s="$sum" -v n="$n" 'BEGIN { m = s / n; if (m >= 1e5) print "inf"; else printf "%.3f", m }'
    }
    while read -r name; do
        local refs=("$PACK/flam3/$name".?.png) k pairs=()
        # The floor: the mean over every pair of flam3 images.
        local j
        for ((k = 0; k + 1 < ${#refs[@]}; k++)); do
            for ((j = k + 1; j < ${#refs[@]}; j++)); do
                pairs+=("$("$WARPMC" flame compare "${refs[$k]}" "${refs[$j]}")")
            done
        done
        floor=$(printf '%s\n' "${pairs[@]}" | awk '{ if ($1 == "inf") $1 = 1e6; s += $1; n++ }
            END { m = s / n; if (m >= 1e5) print "inf"; else printf "%.3f", m }')
        row="| $name | $floor |"
        for b in "${backends[@]}"; do
            local w="$PACK/warpmc-$b/$name.png" gap ok
            if [ -e "$PACK/warpmc-$b/$name.failed" ]; then
                row+=" $(cat "$PACK/warpmc-$b/$name.failed") | – |"
                fail=1
                continue
            fi
            # judge IMAGE...: "mean gap ok|MISSED" of the images' mean PSNR
            # against the flam3 images. Identical images give inf; inf
            # against inf is no gap.
            judge() {
                local img wsum=0 wa
                for img in "$@"; do
                    wa=$(mean_psnr "$img" "${refs[@]}")
                    wsum=$(awk -v s="$wsum" -v p="$wa" 'BEGIN { if (p == "inf") p = 1e6; printf "%.6f", s + p }')
                done
                awk -v f="$floor" -v s="$wsum" -v n="$#" -v m="$MARGIN" 'BEGIN {
                    big = 1e6; w = s / n; if (w >= 1e5) w = big; if (f == "inf") f = big;
                    gap = f - w; if (f == big && w == big) gap = 0;
                    printf "%.2f %.2f %s", (w == big ? "inf" : w), gap, (gap <= m ? "ok" : "MISSED") }'
            }
            read -r wmean gap ok <<<"$(judge "$w")"
            local seeds=""
            if [ "$ok" != ok ] && [ "$RETRY" -gt 0 ]; then
                local imgs=("$w") k
                for ((k = 2; k <= RETRY + 1; k++)); do
                    render "$name" "$b" "$k"
                    imgs+=("$PACK/warpmc-$b/$name.s$k.png")
                done
                if [ -e "$PACK/warpmc-$b/$name.failed" ]; then
                    row+=" $(cat "$PACK/warpmc-$b/$name.failed") | – |"
                    fail=1
                    continue
                fi
                seeds=" (seed 1: $wmean, $gap; seeds 1–$((RETRY + 1)):)"
                read -r wmean gap ok <<<"$(judge "${imgs[@]}")"
            fi
            row+="$seeds $wmean | $gap $([ "$ok" = ok ] || echo MISSED) |"
            if [ "$ok" = ok ]; then passed[$b]=$((passed[$b] + 1)); else fail=1; fi
            if awk -v g="$gap" -v w="${worst[$b]}" 'BEGIN { exit !(g > w) }'; then
                worst[$b]=$gap worst_name[$b]=$name
            fi
        done
        echo "$row" >>"$report"
    done < <(names)
    {
        echo
        for b in "${backends[@]}"; do
            echo "- warpmc $b: ${passed[$b]} of $N genomes within $MARGIN dB of the floor;" \
                "largest gap ${worst[$b]} dB (${worst_name[$b]})"
        done
    } >>"$report"
    grep -E 'MISSED|render failed' "$report" || true
    tail -n "${#backends[@]}" "$report"
    echo "report: $report" >&2
    return $fail
}

case $mode in
prepare) prepare ;;
check) check ;;
all)
    prepare
    check
    ;;
esac
