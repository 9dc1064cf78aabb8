#!/usr/bin/env bash
# The tool's distributed path under mpiexec (ctest MPI.cli.GROUP, label mpi).
#
#   cli_mpi.sh GROUP TESSEL MPIEXEC [MPIEXEC_FLAGS...]
#
# GROUP: sparse (SpDISTAL's SpMV contract, SpMM on sparse pieces, their errors),
# figure9 (DISTAL Figure 9's GEMM schedules with --check), kernels (TTV, TTM,
# MTTKRP, inner product, GEMV, sums, threads with --check), output (-o written once by
# rank 0 and equal to a one-rank run's, what rank 0 alone prints), badinput (one
# "tessel:" line, exit 2 on every rank, no hang), rankfail (one rank alone fails: before
# the run, during it, gathering on rank 0: one line, exit code, no output file, < 10 s),
# graph (`tessel graph -m N` at 1-4 and 6 ranks equal to one node's results on a
# hand-checked graph, R-MAT and karate; a negative cycle, a bad source, a bad -m: one
# line, exit 2 on every rank, no output file), loopfuse (SparseLNR's fusion in distributed
# schedules: the leaf's fused nest, outputs equal to one node's, bad fusions).
# Every mpiexec runs under `timeout 60`. Exit 0 when every check holds, 1 otherwise.
set -u

GROUP=$1
TESSEL=$2
shift 2
MPIEXEC=("$@")

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # before the cd below
DATA="$HERE/../../../shared/data/matrices"  # the shared matrices, when present

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tessel-cli-mpi-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

checks=0
failures=0
fail() {
  echo "FAIL [$CASE]: $*"
  echo "  stdout: $(head -c 2000 out.txt)"
  echo "  stderr: $(head -c 2000 err.txt)"
  failures=$((failures + 1))
}
pass() { checks=$((checks + 1)); }

# The rank of this process under the launcher, for the per-rank wrappers below.
RANK_OF='${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}'

# mrun NP ARGS...: tessel ARGS under mpiexec -np NP; sets rc and secs.
mrun() {
  local np=$1
  shift
  local t0=$EPOCHREALTIME
  timeout 60 "${MPIEXEC[@]}" -np "$np" "$TESSEL" "$@" >out.txt 2>err.txt
  rc=$?
  secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}

# mrun_wrapped NP WRAPPER ARGS...: the same with each rank started through `sh -c WRAPPER
# tessel ARGS` (WRAPPER ends in exec "$0" "$@", or records the rank's exit code).
mrun_wrapped() {
  local np=$1 wrapper=$2
  shift 2
  local t0=$EPOCHREALTIME
  timeout 60 "${MPIEXEC[@]}" -np "$np" sh -c "$wrapper" "$TESSEL" "$@" >out.txt 2>err.txt
  rc=$?
  secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}

tessel_lines() { grep -c '^tessel:' err.txt; }

# expect_check NAME NP ARGS...: exit 0 and "check: OK" (the reference evaluator agrees).
expect_check() {
  CASE=$1
  local np=$2
  shift 2
  mrun "$np" "$@" --check
  if [ "$rc" != 0 ]; then
    fail "exit $rc, expected 0"
  elif [ "$(grep -c '^check: OK' err.txt)" != 1 ]; then
    fail "expected one 'check: OK' line"
  else
    pass
  fi
}

# expect_bad NAME NP MENTION ARGS...: exactly one "tessel: error:" line mentioning
# MENTION, nothing on stdout, and exit 2 on every one of the NP ranks (each rank's code
# is recorded by a wrapper; mpiexec is told not to end the job at the first non-zero).
expect_bad() {
  CASE=$1
  local np=$2 mention=$3
  shift 3
  rm -rf rc && mkdir rc
  OMPI_MCA_orte_abort_on_non_zero_status=0 RCDIR="$WORK/rc" \
    mrun_wrapped "$np" '"$0" "$@"; c=$?; echo $c > "$RCDIR/'"$RANK_OF"'"; exit $c' "$@"
  local codes
  codes=$(cat rc/* 2>/dev/null | sort | uniq -c | tr -s ' ' | sed 's/^ //')
  if [ "$rc" = 124 ]; then
    fail "timed out (a hang)"
  elif [ "$(ls rc | wc -l)" != "$np" ] || [ "$codes" != "$np 2" ]; then
    fail "rank exit codes (count code): '$codes', expected '$np 2'"
  elif [ "$(tessel_lines)" != 1 ] || ! grep -q '^tessel: error: ' err.txt; then
    fail "expected exactly one 'tessel: error:' line"
  elif ! grep -qF -- "$mention" err.txt; then
    fail "the message does not mention '$mention'"
  elif [ -s out.txt ]; then
    fail "stdout is not empty"
  else
    pass
  fi
}

GEMM="A(i,j) = B(i,k) * C(k,j)"
GEN="-g B:dense:9,10 -g C:dense:10,7"  # uneven: 9 x 10 x 7 over 2 x 2
BLOCKS=(-d 'A:xy->xy' -d 'B:xy->xy' -d 'C:xy->xy')
SUMMA="distribute({i,j},{io,jo},{ii,ji}),split(k,ko,ki,3),reorder(ko,ii,ji,ki),communicate(A,jo),communicate({B,C},ko)"
CANNON="distribute({i,j},{io,jo},{ii,ji}),divide(k,ko,ki,2),reorder(ko,ii,ji,ki),rotate(ko,{io,jo},kos),communicate(A,jo),communicate({B,C},kos)"
PUMMA="distribute({i,j},{io,jo},{ii,ji}),divide(k,ko,ki,2),reorder(ko,ii,ji,ki),rotate(ko,{io},kos),communicate(A,jo),communicate({B,C},kos)"
JOHNSON="distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),communicate({A,B,C},ko)"
SOLOMONIK1="distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),divide(ki,kio,kii,1),reorder(kio,ii,ji,kii),rotate(kio,{io,jo},kios),communicate(A,jo),communicate({B,C},kios)"
SOLOMONIK2="distribute({i,j,k},{io,jo,ko},{ii,ji,ki}),divide(ki,kio,kii,2),reorder(kio,ii,ji,kii),rotate(kio,{io,jo},kios),communicate(A,jo),communicate({B,C},kios)"

case "$GROUP" in
figure9)
  # shellcheck disable=SC2086
  {
    expect_check summa 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$SUMMA" $GEN
    expect_check summa-blas 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$SUMMA,substitute({ii,ji,ki},blas)" $GEN
    expect_check cannon 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$CANNON" $GEN
    expect_check cannon-blas 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$CANNON,substitute({ii,ji,ki},blas)" $GEN
    expect_check pumma 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$PUMMA" $GEN
    expect_check johnson 8 run "$GEMM" -m 2x2x2 -d 'A:xy->xy0' -d 'B:xz->x0z' -d 'C:zy->0yz' -s "$JOHNSON" $GEN
    expect_check solomonik-2.5d 8 run "$GEMM" -m 2x2x2 -d 'A:xy->xy0' -d 'B:xy->xy0' -d 'C:xy->xy0' -s "$SOLOMONIK1" $GEN
    expect_check solomonik-2.5d-two-steps 8 run "$GEMM" -m 2x2x2 -d 'A:xy->xy0' -d 'B:xy->xy0' -d 'C:xy->xy0' -s "$SOLOMONIK2" $GEN
    # The data distributed unlike the computation (rows on a 1-D grid of 4): still right.
    expect_check summa-data-by-rows 4 run "$GEMM" -m 2x2 -s "$SUMMA" $GEN
    # More ranks than rows: 3 x 2 x 2 on 2 x 2 ranks, and 1 x 1 x 1.
    expect_check cannon-tiny 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$CANNON" -g B:dense:3,2 -g C:dense:2,2
    expect_check summa-one-entry 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$SUMMA" -g B:dense:1,1 -g C:dense:1,1
  }
  ;;
kernels)
  expect_check ttv 4 run "A(i,j) = B(i,j,k) * c(k)" -m 2x2 -d 'A:xy->xy' -d 'B:xyz->xy' -d 'c:x->**' \
    -g B:dense:5,6,7 -g c:dense:7
  expect_check ttv-1d-default 3 run "A(i,j) = B(i,j,k) * c(k)" -m 3 -g B:dense:5,6,7 -g c:dense:7
  expect_check ttm 4 run "A(i,j,l) = B(i,j,k) * C(k,l)" -m 2x2 -d 'A:xyz->xy' -d 'B:xyz->xy' \
    -g B:dense:5,6,7 -g C:dense:7,3
  expect_check ttm-blas 4 run "A(i,j,l) = B(i,j,k) * C(k,l)" -m 2x2 -d 'A:xyz->xy' -d 'B:xyz->xy' \
    -s "distribute({i,j},{io,jo},{ii,ji}),substitute({ii,ji,l,k},blas)" -g B:dense:5,6,7 -g C:dense:7,3
  expect_check mttkrp 4 run "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)" -m 4 -g B:dense:5,6,7 -g C:dense:6,3 -g D:dense:7,3
  expect_check mttkrp-2x3 6 run "A(i,l) = B(i,j,k) * C(j,l) * D(k,l)" -m 2x3 -d 'B:xyz->xz' -d 'A:xy->x*' \
    -s "distribute({i,k},{io,ko},{ii,ki}),reorder(io,ko,ii,j,ki,l)" -g B:dense:5,6,7 -g C:dense:6,3 -g D:dense:7,3
  expect_check inner-product 4 run "a = B(i,j) * C(i,j)" -m 2x2 -d 'B:xy->xy' -d 'C:xy->yx' -g B:dense:5,6 -g C:dense:5,6
  expect_check gemv-rows-fewer-than-ranks 3 run "a(i) = B(i,j) * c(j)" -m 3 -g B:dense:2,6 -g c:dense:6
  expect_check gemm-plus-d-k-split 4 run "A(i,j) = B(i,k) * C(k,j) + D(i,j)" -m 2x2 "${BLOCKS[@]}" -d 'D:xy->yx' \
    -s "$SUMMA" -g B:dense:9,10 -g C:dense:10,7 -g D:dense:9,7
  expect_check gemm-plus-d-johnson 8 run "A(i,j) = B(i,k) * C(k,j) + D(i,j)" -m 2x2x2 -s "$JOHNSON" \
    -g B:dense:9,10 -g C:dense:10,7 -g D:dense:9,7
  expect_check add 2 run "A(i,j) = B(i,j) + C(i,j)" -m 2 -d 'A:xy->y' -g B:dense:5,3 -g C:dense:5,3
  expect_check threads 2 run "$GEMM" -m 2 --threads 2 -g B:dense:40,30 -g C:dense:30,20
  ;;
output)
  # -o: rank 0 writes the gathered output once; the same bytes as a one-rank run's.
  CASE=write-once
  mrun 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" $GEN -o A:four.tns
  rc4=$rc
  mrun 1 run "$GEMM" -m 1 $GEN -o A:one.tns
  if [ "$rc4" != 0 ] || [ "$rc" != 0 ]; then
    fail "exit $rc4 (4 ranks) and $rc (1 rank), expected 0"
  elif ! cmp -s four.tns one.tns; then
    fail "the 4-rank output differs from the 1-rank output: $(diff four.tns one.tns | head -3)"
  elif [ "$(grep -vc '^#' four.tns)" != 63 ]; then
    fail "four.tns has $(grep -vc '^#' four.tns) entries, expected 9 x 7 = 63 once each"
  elif [ -s out.txt ]; then
    fail "a matrix output printed something"
  else
    pass
  fi
  # ... and within rounding of the single-node kernel (not distributed).
  CASE=same-as-single-node
  if ! timeout 60 "$TESSEL" run "$GEMM" $GEN -o A:plain.tns >out.txt 2>err.txt; then
    fail "the single-node run failed"
  elif ! awk 'FNR == NR { if ($0 !~ /^#/) v[$1 " " $2] = $3; next }
              $0 !~ /^#/ { d = $3 - v[$1 " " $2]; if (d < 0) d = -d; if (d > 1e-12 * (1 + ($3 < 0 ? -$3 : $3))) bad++ ; n++ }
              END { exit (bad > 0 || n != 63) }' plain.tns four.tns; then
    fail "four.tns and the single-node plain.tns differ beyond rounding"
  else
    pass
  fi
  # A scalar output is printed once (by rank 0).
  CASE=scalar-printed-once
  mrun 4 run "a = B(i,j) * C(i,j)" -m 2x2 -g B:dense:5,6 -g C:dense:5,6
  if [ "$rc" != 0 ] || [ "$(wc -l <out.txt)" != 1 ]; then fail "exit $rc, expected 0 and one line on stdout"; else pass; fi
  # --comm-stats and --time: rank 0 alone prints them.
  CASE=comm-stats-once
  mrun 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$SUMMA" $GEN --comm-stats --time
  if [ "$rc" != 0 ] || [ "$(grep -c '^  [ABC]: received' err.txt)" != 3 ] || [ "$(grep -c '^machine: 2x2' err.txt)" != 1 ]; then
    fail "exit $rc; expected one comm-stats line per tensor and one machine line"
  else
    pass
  fi
  # --emit-c with -m: the SPMD program with its communication, once.
  CASE=emit-once
  mrun 4 run "$GEMM" -m 2x2 "${BLOCKS[@]}" -s "$CANNON" $GEN --emit-c
  if [ "$rc" != 0 ] || [ "$(grep -c '^// SPMD program on a 2x2 grid' out.txt)" != 1 ] ||
    ! grep -q 'rotated: block (kos + io + jo) mod 2' out.txt || ! grep -q 'fetch B(i\[io\], k\[kos\]) from its owners' out.txt; then
    fail "exit $rc; expected the program once, with the rotation and the fetches"
  else
    pass
  fi
  ;;
badinput)
  expect_bad machine-not-the-ranks 2 "the machine 2x2 has 4 ranks, but 2 are running" run "$GEMM" -m 2x2 $GEN
  expect_bad distribution-wrong-order 4 "distribution of A (xyz->xy): names 3 tensor dimension(s), and A has 2" \
    run "$GEMM" -m 2x2 -d 'A:xyz->xy' $GEN
  expect_bad distribution-unknown-name 4 "machine dimension 'q' names no tensor dimension" \
    run "$GEMM" -m 2x2 -d 'A:xy->qq' $GEN
  expect_bad distribution-machine-dims 4 "names 1 machine dimension(s), and machine 2x2 has 2" \
    run "$GEMM" -m 2x2 -d 'A:xy->x' $GEN
  expect_bad distribution-unknown-tensor 4 "-d names tensor 'Q'" run "$GEMM" -m 2x2 -d 'Q:xy->x' $GEN
  expect_bad schedule-unknown-loop 4 "'q' is not a loop here" run "$GEMM" -m 2x2 -s "distribute({i,q},{io,qo},{ii,qi})" $GEN
  expect_bad schedule-unknown-tensor 4 "'Z' is not a tensor of the assignment" \
    run "$GEMM" -m 2x2 -s "distribute({i,j},{io,jo},{ii,ji}),communicate(Z,io)" $GEN
  expect_bad schedule-count-not-the-grid 4 "io has 2 pieces, but machine dimension 0 has 4 ranks" \
    run "$GEMM" -m 4 -s "divide(i,io,ii,2),distribute(io)" $GEN
  expect_bad schedule-too-few-distributed 4 "1 loop(s) are distributed" run "$GEMM" -m 2x2 -s "distribute({i},{io},{ii})" $GEN
  expect_bad schedule-unknown-command 4 "unknown command 'tile'" run "$GEMM" -m 2x2 -s "tile(i,2)" $GEN
  expect_bad bad-machine-text 4 "machine '2y2'" run "$GEMM" -m 2y2 $GEN
  expect_bad missing-file 4 "nonexistent.mtx" run "$GEMM" -m 2x2 -i B:nonexistent.mtx -g C:dense:10,7
  # Plain mpiexec (it ends the job at the first non-zero exit): its own exit code is 2.
  CASE=mpiexec-exit-code
  mrun 4 run "$GEMM" -m 2x2 -d 'A:xy->qq' $GEN
  if [ "$rc" != 2 ] || [ "$(tessel_lines)" != 1 ]; then fail "exit $rc, expected 2 and one tessel line"; else pass; fi
  ;;
rankfail)
  # Before the run: a bad line in the last rank's part of B.mtx (inputs are read in
  # parallel, each rank its byte range): every rank fails with that rank's path:line.
  printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.5\n3 2 -2\n2 2 1\n3 9 -2\n' >B.mtx
  rm -rf rc && mkdir rc
  CASE=one-rank-bad-file
  OMPI_MCA_orte_abort_on_non_zero_status=0 RCDIR="$WORK/rc" \
    mrun_wrapped 4 '"$0" "$@"; c=$?; echo $c > "$RCDIR/'"$RANK_OF"'"; exit $c' \
    run "A(i,j) = B(i,k) * C(k,j)" -m 2x2 -i B:B.mtx -g C:dense:3,3 -o A:A.tns
  codes=$(cat rc/* 2>/dev/null | sort | uniq -c | tr -s ' ' | sed 's/^ //')
  if [ "$rc" = 124 ]; then
    fail "timed out (a hang)"
  elif [ "$codes" != "4 2" ]; then
    fail "rank exit codes (count code): '$codes', expected '4 2'"
  elif [ "$(tessel_lines)" != 1 ] || ! grep -q '^tessel: error: B.mtx:6: column index 9' err.txt; then
    fail "expected one line 'tessel: error: B.mtx:6: column index 9 ...'"
  elif ls A.tns >/dev/null 2>&1; then
    fail "an output file was written"
  else
    pass
  fi
  # During the run: rank 1 (which holds no piece of A, fixed at rank 0) cannot allocate
  # its leaf's output block; MPI_Abort ends every rank with its message.
  CASE=one-rank-fails-in-the-run
  rm -f outer.tns
  FAILRANK=1 FAILMEM=200K mrun_wrapped 4 \
    'if [ "'"$RANK_OF"'" = "$FAILRANK" ]; then export TESSEL_MAX_MEMORY=$FAILMEM; fi; exec "$0" "$@"' \
    run "A(i,j) = b(i) * c(j)" -m 4 -d 'A:xy->0' -g b:dense:400 -g c:dense:400 -o A:outer.tns
  if [ "$rc" != 2 ]; then
    fail "exit $rc, expected 2"
  elif [ "$(tessel_lines)" != 1 ] || ! grep -q '^tessel: error: rank 1: .*memory limit' err.txt; then
    fail "expected one line 'tessel: error: rank 1: ... memory limit ...'"
  elif [ -e outer.tns ]; then
    fail "an output file was written"
  elif awk -v s="$secs" 'BEGIN { exit !(s >= 10) }'; then
    fail "took ${secs}s, more than 10"
  else
    pass
  fi
  # Gathering on rank 0 for --check fails there (the output does not fit its memory
  # limit; -o alone is written in parallel and gathers nothing).
  CASE=gather-fails-on-rank-0
  rm -f outer.tns
  FAILRANK=0 FAILMEM=1M mrun_wrapped 4 \
    'if [ "'"$RANK_OF"'" = "$FAILRANK" ]; then export TESSEL_MAX_MEMORY=$FAILMEM; fi; exec "$0" "$@"' \
    run "A(i,j) = b(i) * c(j)" -m 2x2 -d 'A:xy->xy' -g b:dense:400 -g c:dense:400 -o A:outer.tns --check
  if [ "$rc" != 2 ]; then
    fail "exit $rc, expected 2"
  elif [ "$(tessel_lines)" != 1 ] || ! grep -q '^tessel: error: rank 0: gathering A on rank 0' err.txt; then
    fail "expected one line 'tessel: error: rank 0: gathering A on rank 0 ...'"
  elif [ -e outer.tns ]; then
    fail "an output file was written"
  elif awk -v s="$secs" 'BEGIN { exit !(s >= 10) }'; then
    fail "took ${secs}s, more than 10"
  else
    pass
  fi
  ;;
files)
  # Inputs read in parallel (each rank its byte range) and outputs written in parallel
  # (one file, pwrite at each rank's offset): the same bytes as one rank, for row, non-zero
  # and fused partitions; a hand-computed SpMV; a matrix too large for one rank's memory
  # limit that four ranks read.
  printf '%%%%MatrixMarket matrix coordinate real general\n%% hand-written\n3 4 5\n1 1 2\n1 4 1\n2 2 -1\n3 1 4\n3 3 0.5\n' >H.mtx
  printf '1 1\n2 2\n3 3\n4 4\n' >c.tns
  for np in 1 2 3 4; do
    CASE=hand-spmv-np$np
    rm -f h.tns
    mrun $np run "a(i) = B(i,j) * c(j)" -m $np -d 'B:xy->~x' -d 'c:x->*' -i B:H.mtx -i c:c.tns -o a:h.tns
    # By hand: (2*1 + 1*4, -1*2, 4*1 + 0.5*3).
    if [ "$rc" != 0 ]; then fail "exit $rc"
    elif [ "$(grep -v '^#' h.tns)" != "$(printf '1 6\n2 -2\n3 5.5')" ]; then fail "h.tns: $(cat h.tns)"
    else pass; fi
  done
  awk 'BEGIN { srand(7); n = 3000; print "%%MatrixMarket matrix coordinate real general"; print n, n, 30000;
       for (k = 0; k < 30000; k++) printf "%d %d %.6f\n", (k * 7919) % n + 1, (k * 104729 + int(k / 3)) % n + 1, (k % 97) / 7 }' >G.mtx
  mrun 1 run "a(i) = B(i,j) * c(j)" -m 1 -i B:G.mtx -g c:dense:3000 -o a:ref.tns
  cp ref.tns ref_keep.tns
  # .tsb pieces are read by ranges (each rank its rows' pos, crd and vals; ~x from the pos
  # array; the fused partition reads the file whole): the same output as one rank.
  "$TESSEL" convert G.mtx G.tsb >/dev/null 2>&1
  for file in G.mtx G.tsb; do
    for d in 'xy->x' 'xy->~x' '(xy)->~f'; do
      for np in 1 3 4; do
        CASE="spmv-$file-$d-np$np"
        rm -f out.tns
        mrun "$np" run "a(i) = B(i,j) * c(j)" -m "$np" -d "B:$d" -d 'c:x->*' -i "B:$file" -g c:dense:3000 -o a:out.tns
        if [ "$rc" != 0 ]; then fail "exit $rc: $(cat err.txt)"
        elif ! cmp -s out.tns ref_keep.tns; then fail "output differs from one rank's"
        else pass; fi
      done
    done
  done
  CASE=tsb-dense-rows  # against one rank on dense B (a dense row sums in another order than CSR)
  "$TESSEL" convert G.mtx Gd.tsb -f dd >/dev/null 2>&1
  mrun 1 run "a(i) = B(i,j) * c(j)" -m 1 -f B:dd -i B:G.mtx -g c:dense:3000 -o a:dref.tns
  mrun 3 run "a(i) = B(i,j) * c(j)" -m 3 -f B:dd -d 'B:xy->x' -d 'c:x->*' -i B:Gd.tsb -g c:dense:3000 -o a:out.tns
  if [ "$rc" != 0 ]; then fail "exit $rc: $(cat err.txt)"; elif ! cmp -s out.tns dref.tns; then fail "differs"; else pass; fi
  cp G.tsb Gbad.tsb
  printf 'X' | dd of=Gbad.tsb bs=1 seek=100 conv=notrunc 2>/dev/null
  expect_bad tsb-corrupted-header 3 "Gbad.tsb:byte" run "a(i) = B(i,j) * c(j)" -m 3 -d 'B:xy->x' -i B:Gbad.tsb -g c:dense:3000
  CASE=gemm-2x2-mtx-output
  mrun 1 run "A(i,j) = B(i,k) * C(k,j)" -m 1 -f B:dd -i B:G.mtx -g C:dense:3000,5 -o A:gref.tns
  mrun 4 run "A(i,j) = B(i,k) * C(k,j)" -m 2x2 -d 'A:xy->xy' -f B:dd -i B:G.mtx -g C:dense:3000,5 -o A:g4.tns
  if [ "$rc" != 0 ]; then fail "exit $rc"; elif ! cmp -s g4.tns gref.tns; then fail "differs from one rank's"; else pass; fi
  # Too large for one rank: the whole-file read needs more than TESSEL_MAX_MEMORY; four
  # ranks each read a quarter.
  awk 'BEGIN { n = 20000; print "%%MatrixMarket matrix coordinate real general"; print n, n, 400000;
       for (k = 0; k < 400000; k++) printf "%d %d %.4f\n", int(k / 20) + 1, (k * 7919) % n + 1, (k % 89) / 9 }' >L.mtx
  mrun 1 run "a(i) = B(i,j) * c(j)" -m 4 -d 'B:xy->~x' -d 'c:x->*' -i B:L.mtx -g c:dense:20000 -o a:lref.tns 2>/dev/null
  mrun 1 run "a(i) = B(i,j) * c(j)" -m 1 -i B:L.mtx -g c:dense:20000 -o a:lref.tns
  CASE=too-large-for-one-rank
  TESSEL_MAX_MEMORY=6M timeout 60 "$TESSEL" run "a(i) = B(i,j) * c(j)" -i B:L.mtx -g c:dense:20000 -o a:l1.tns >out.txt 2>err.txt
  if [ $? != 2 ] || ! grep -q 'memory' err.txt; then fail "the whole-file read did not fail with a memory error"; else pass; fi
  CASE=too-large-read-by-four
  TESSEL_MAX_MEMORY=6M mrun 4 run "a(i) = B(i,j) * c(j)" -m 4 -d 'B:xy->~x' -d 'c:x->*' -i B:L.mtx -g c:dense:20000 -o a:l4.tns
  if [ "$rc" != 0 ]; then fail "exit $rc"; elif ! cmp -s l4.tns lref.tns; then fail "differs from one rank's"; else pass; fi
  # The same as .tsb: each of four ranks reads its rows' ranges under a limit one rank's
  # rows exceed.
  "$TESSEL" convert L.mtx L.tsb >/dev/null 2>&1
  CASE=too-large-tsb-one-rank
  TESSEL_MAX_MEMORY=3M mrun 1 run "a(i) = B(i,j) * c(j)" -m 1 -d 'B:xy->x' -i B:L.tsb -g c:dense:20000 -o a:t1.tns
  if [ "$rc" != 2 ] || ! grep -q 'memory limit' err.txt; then fail "one rank's rows of L.tsb did not fail with a memory error"; else pass; fi
  CASE=too-large-tsb-read-by-four
  TESSEL_MAX_MEMORY=3M mrun 4 run "a(i) = B(i,j) * c(j)" -m 4 -d 'B:xy->~x' -d 'c:x->*' -i B:L.tsb -g c:dense:20000 -o a:t4.tns
  if [ "$rc" != 0 ]; then fail "exit $rc"; elif ! cmp -s t4.tns lref.tns; then fail "differs from one rank's"; else pass; fi
  # --dims under -m: trailing empty rows a file does not show (H.mtx's 3 rows as 5; every
  # rank checks its share of the file's entries), and a size that does not fit them.
  for np in 1 3; do
    CASE=dims-np$np
    rm -f hd.tns
    mrun $np run "a(i) = B(i,j) * c(j)" -m $np -d 'B:xy->x' -d 'c:x->*' -i B:H.mtx -i c:c.tns --dims B:5,4 -o a:hd.tns --check
    if [ "$rc" != 0 ]; then fail "exit $rc"
    elif [ "$(cat hd.tns)" != "$(printf '# tessel dims: 5\n1 6\n2 -2\n3 5.5')" ]; then fail "hd.tns: $(cat hd.tns)"
    else pass; fi
  done
  expect_bad dims-too-small 3 "--dims B:3x3 is too small: H.mtx has index 4 in mode 1" \
    run "a(i) = B(i,j) * c(j)" -m 3 -i B:H.mtx -g c:dense:3 --dims B:3,3
  expect_bad dims-tsb 2 "--dims does not apply to the binary file" \
    run "a(i) = B(i,j) * c(j)" -m 2 -i B:L.tsb -g c:dense:20000 --dims B:30000,20000
  # --json under -m: one JSON object on stdout with every phase, the machine and the check.
  CASE=json-np2
  mrun 2 run "a(i) = B(i,j) * c(j)" -m 2 -i B:G.mtx -g c:dense:3000 --time=3 --json --check -o a:j.tns
  if [ "$rc" != 0 ]; then fail "exit $rc"
  elif ! command -v python3 >/dev/null; then pass
  elif ! python3 -c 'import json, sys
j = json.load(open("out.txt"))
assert j["ranks"] == 2 and j["check"] == "ok", j
for p in ("read", "place", "compile", "run", "compute", "communication", "write", "check"):
    assert p in j["phases"], p
assert j["phases"]["run"]["runs"] == 3' 2>py.txt; then fail "JSON: $(cat py.txt)"
  else pass; fi
  CASE=json-scalar-np2
  mrun 2 run "s = B(i,j) * c(j)" -m 2 -i B:H.mtx -i c:c.tns --json
  if [ "$rc" != 0 ]; then fail "exit $rc"; elif ! grep -q '"value": 9.5' out.txt; then fail "no value 9.5 (6 - 2 + 5.5) in the JSON"; else pass; fi
  ;;
sparse)
  # SpDISTAL's SpMV contract on -m 4 (issue 29): rows, rows by non-zeros, non-zeros fused
  # across rows, on a skewed matrix (a heavy row, empty rows); all give the same file.
  {
    echo '%%MatrixMarket matrix coordinate real general'
    echo '9 7 16'
    for j in 1 2 3 4 5 6 7; do echo "2 $j $j.5"; done
    echo '1 1 1'; echo '4 3 -2'; echo '4 7 3'; echo '6 2 0.5'; echo '6 6 1.25'; echo '9 1 4'; echo '9 4 -1'; echo '9 7 2'; echo '5 5 1'
  } >S.mtx
  SPMV="a(i) = B(i,j) * c(j)"
  ROWS="divide(i,io,ii,4),distribute(io),communicate({a,B,c},io)"
  FUSED="fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,4),distribute(fo),communicate({a,B,c},fo)"
  expect_check spmv-rows 4 run "$SPMV" -m 4 -d 'a:x->x' -d 'B:xy->x' -d 'c:x->*' -s "$ROWS" -i B:S.mtx -g c:dense:7 \
    -o a:rows.tns
  expect_check spmv-rows-by-nonzeros 4 run "$SPMV" -m 4 -d 'B:xy->~x' -d 'c:x->*' -s "$ROWS" -i B:S.mtx -g c:dense:7 \
    -o a:nz.tns
  expect_check spmv-nonzeros-fused 4 run "$SPMV" -m 4 -d 'B:(xy)->~f' -d 'c:x->*' -s "$FUSED" -i B:S.mtx \
    -g c:dense:7 -o a:fused.tns
  # Rows stay whole under ~x: the same sums in the same order. Fused pieces split row 2, whose
  # partial sums add in another order: equal to rounding.
  CASE=spmv-same-files
  if cmp -s rows.tns nz.tns && awk 'NR==FNR { v[$1] = $2; next } { d = $2 - v[$1]; if (d < 0) d = -d;
      m = v[$1] < 0 ? -v[$1] : v[$1]; if (d > 1e-12 * (1 + m)) bad = 1; n++ } END { exit bad || n != length(v) }' rows.tns fused.tns
  then pass; else fail "the three SpMV outputs differ"; fi
  expect_check spmm-default-schedule 3 run "A(i,k) = B(i,j) * C(j,k)" -m 3 -i B:S.mtx -g C:dense:7,5
  # No -d: S's heavy row 2 makes equal row blocks unbalanced, so B's default is ~ (by
  # non-zeros), said under --time; a balanced matrix keeps equal rows.
  expect_check skewed-default 4 run "$SPMV" -m 4 -i B:S.mtx -g c:dense:7 --time
  CASE=skewed-default-said
  if grep -q '^distribution: B ab->~a (its rows are skewed' err.txt; then pass; else fail "no default ~ line: $(cat err.txt)"; fi
  expect_check balanced-default 4 run "$SPMV" -m 4 -g B:banded:40,2 -g c:dense:40 --time
  CASE=balanced-default-said
  if grep -q '^distribution:' err.txt; then fail "a banded matrix was called skewed"; else pass; fi
  expect_check spmv-csr-forced 2 run "$SPMV" -m 2 -f B:ds -g B:uniform:20,9,3 -g c:dense:9
  expect_bad nonzero-partition-of-dense 4 "every level of B is dense" \
    run "$SPMV" -m 4 -f B:dd -d 'B:xy->~x' -i B:S.mtx -g c:dense:7
  expect_bad fuse-without-pos 4 "needs pos(f,fp,T)" run "$SPMV" -m 4 -s "fuse(i,j,f)" -i B:S.mtx -g c:dense:7
  # Columns distributed over row pieces: each rank fetches the rows of B its box needs.
  expect_check sparse-rows-fetched 4 \
    run "$SPMV" -m 4 -d 'B:xy->x' -s "divide(j,jo,ji,4),reorder(jo,i,ji),distribute(jo),communicate({a,B,c},jo)" \
    -i B:S.mtx -g c:dense:7
  # SpGEMM by rows: only the rows of C that a rank's rows of B reference are fetched.
  expect_check spgemm-rows-fetched 3 run "A(i,j) = B(i,k) * C(k,j)" -m 3 -d 'A:xy->~x' -d 'B:xy->~x' -d 'C:xy->x' \
    -f A:ds -s "divide(i,io,ii,3),distribute(io),communicate({A,B,C},io)" -i B:S.mtx -g C:uniform:7,6,2 -o A:gemm.mtx
  expect_bad sparse-output-not-owner 2 "sparse output A: rank" run "A(i,j) = B(i,j)" -m 2 -d 'A:xy->x' -f A:ds \
    -s "divide(j,jo,ji,2),reorder(jo,i,ji),distribute(jo),communicate({A,B},jo)" -i B:S.mtx
  ;;
loopfuse)
  # SparseLNR's loopfuse in a distributed schedule (issue 31): the leaf kernel is the fused
  # nest; before or after distribute, alone (with the default distribution), B by rows, by
  # rows of equal non-zeros or by non-zeros; the outputs equal one node's fused run (rows
  # whole: byte for byte; a row split by ~f: to 1e-12); bad fusions fail every rank.
  {
    echo '%%MatrixMarket matrix coordinate real general'
    echo '9 7 16'
    for j in 1 2 3 4 5 6 7; do echo "2 $j $j.5"; done
    echo '1 1 1'; echo '4 3 -2'; echo '4 7 3'; echo '6 2 0.5'; echo '6 6 1.25'; echo '9 1 4'; echo '9 4 -1'; echo '9 7 2'; echo '5 5 1'
  } >S.mtx
  SS="A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)"
  SSGEN=(-i B:S.mtx -g C:dense:9,4 -g D:dense:7,4 -g E:dense:7,3)
  SSDIST=(-d 'B:xy->x' -d 'C:xy->x' -d 'D:xy->*' -d 'E:xy->*' -d 'A:xy->x')
  same_file() {  # same_file NAME A B TOL: equal files (TOL 0: byte for byte)
    CASE=$1
    if [ "$4" = 0 ]; then
      if cmp -s "$2" "$3"; then pass; else fail "$2 and $3 differ: $(diff "$2" "$3" | head -3)"; fi
    elif awk -v tol="$4" 'FNR == NR { if ($0 !~ /^#/) v[$1 " " $2] = $3; next }
        $0 !~ /^#/ { d = $3 - v[$1 " " $2]; if (d < 0) d = -d; if (d > tol * (1 + ($3 < 0 ? -$3 : $3))) bad++; n++ }
        END { exit (bad > 0 || n != length(v)) }' "$2" "$3"; then
      pass
    else
      fail "$2 and $3 differ beyond $4"
    fi
  }
  # One node, C, D and E dense as their distributed pieces are (the tool's default is ds).
  ONEDENSE=(-f C:dd -f D:dd -f E:dd)
  if ! timeout 60 "$TESSEL" run "$SS" "${SSGEN[@]}" "${ONEDENSE[@]}" -s "loopfuse(j)" -o A:one-fused.tns >out.txt 2>err.txt ||
    ! timeout 60 "$TESSEL" run "$SS" "${SSGEN[@]}" "${ONEDENSE[@]}" -s "" -o A:one-perfect.tns >out.txt 2>err.txt; then
    CASE=single-node
    fail "the single-node runs failed"
  fi
  for np in 1 2 3 4; do
    expect_check fused-after-distribute-np$np $np run "$SS" -m $np "${SSDIST[@]}" "${SSGEN[@]}" \
      -s "distribute({i},{io},{ii}),loopfuse(j)" -o A:after$np.tns
    same_file fused-after-distribute-np$np-file one-fused.tns after$np.tns 0
    same_file fused-vs-perfect-np$np-file one-perfect.tns after$np.tns 1e-12
  done
  expect_check fused-before-distribute 3 run "$SS" -m 3 "${SSDIST[@]}" "${SSGEN[@]}" \
    -s "loopfuse(j),distribute({i},{io},{ii})" -o A:before.tns
  same_file fused-before-distribute-file one-fused.tns before.tns 0
  # Splits in the leaf below the fusion point (the leaf keeps the default loop order).
  expect_check fused-leaf-split 2 run "$SS" -m 2 "${SSDIST[@]}" "${SSGEN[@]}" \
    -s "distribute({i},{io},{ii}),divide(k,ko,ki,2),loopfuse(j),split(l,l0,l1,2)" -o A:leafsplit.tns
  same_file fused-leaf-split-file one-perfect.tns leafsplit.tns 1e-12
  expect_check fused-default-schedule 4 run "$SS" -m 4 "${SSGEN[@]}" -s "loopfuse(j)" --time -o A:default.tns
  CASE=fused-default-schedule-said
  if grep -q '^schedule: loopfuse(j),distribute(' err.txt; then pass; else fail "no schedule line with the fusion"; fi
  same_file fused-default-schedule-file one-fused.tns default.tns 0
  expect_check fused-rows-by-nonzeros 4 run "$SS" -m 4 -d 'B:xy->~x' -d 'C:xy->*' -d 'D:xy->*' -d 'E:xy->*' \
    -d 'A:xy->x' "${SSGEN[@]}" -s "divide(i,io,ii,4),distribute(io),communicate({A,B,C,D,E},io),loopfuse(j)" -o A:nzrows.tns
  same_file fused-rows-by-nonzeros-file one-fused.tns nzrows.tns 0
  expect_check fused-nonzeros 4 run "$SS" -m 4 -d 'B:(xy)->~f' -d 'C:xy->*' -d 'D:xy->*' -d 'E:xy->*' -d 'A:xy->*' \
    "${SSGEN[@]}" -o A:nz.tns \
    -s "reorder(i,j,l,k),fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,4),distribute(fo),communicate({A,B,C,D,E},fo),loopfuse(j)"
  same_file fused-nonzeros-file one-fused.tns nz.tns 1e-12
  # The leaf's C code is the fused nest with its temporary (--emit-c, once).
  CASE=fused-leaf-emitted
  mrun 2 run "$SS" -m 2 "${SSDIST[@]}" "${SSGEN[@]}" -s "distribute({i},{io},{ii}),loopfuse(j)" --emit-c
  if [ "$rc" != 0 ] || [ "$(grep -c '^// schedule: loopfuse(j)$' out.txt)" != 1 ] ||
    [ "$(grep -c '^// concrete index notation: forall(i, forall(j, where(forall(l, A(i,l) = E(j,l) \* t_j), forall(k, t_j += B(i,j) \* C(i,k) \* D(j,k)))))' out.txt)" != 1 ]; then
    fail "exit $rc; expected the fused leaf once"
  else
    pass
  fi
  # <SpMM, GEMM> fused at i, and <SDDMM, SpMM, GEMM> fused twice.
  expect_check spmm-gemm-fused 3 run "A(i,m) = B(i,j) * C(j,l) * D(l,m)" -m 3 -i B:S.mtx -g C:dense:7,5 -g D:dense:5,2 \
    -s "distribute({i},{io},{ii}),loopfuse(ii)"
  expect_check three-fused-twice 4 run "A(i,m) = B(i,j) * C(i,k) * D(j,k) * E(j,l) * F(l,m)" -m 4 "${SSGEN[@]}" \
    -g F:dense:3,2 -s "loopfuse(i),loopfuse(j)"
  # Bad fusions: one line, exit 2 on every rank, no output file.
  expect_bad fused-distributed-loop 3 "loop io is distributed over the machine and runs above the leaf" \
    run "$SS" -m 3 "${SSGEN[@]}" -s "distribute({i},{io},{ii}),loopfuse(io)" -o A:bad.tns
  expect_bad fused-no-such-loop 2 "schedule command loopfuse(q): 'q' is not a loop here" \
    run "$SS" -m 2 "${SSGEN[@]}" -s "distribute({i},{io},{ii}),loopfuse(q)" -o A:bad.tns
  expect_bad fused-step-loop 2 "loop ia is a step loop" run "$SS" -m 2 -d 'B:xy->x' "${SSGEN[@]}" -o A:bad.tns \
    -s "distribute({i},{io},{ii}),divide(ii,ia,ib,2),communicate({A,C},ia),communicate({B,D,E},io),loopfuse(ia)"
  expect_bad fused-leaf-rule 4 "splits nothing" run "$SS" -m 4 "${SSGEN[@]}" -s "loopfuse(k)" -o A:bad.tns
  CASE=fused-bad-no-output
  if [ -e bad.tns ]; then fail "an output file was written"; else pass; fi
  ;;
graph)
  # same_as_one NAME NP ALGO FILE [ARGS...]: `tessel graph -m NP` (under NP ranks) prints
  # or writes what one node does: -o files byte for byte, pagerank to 1e-12 relative.
  same_as_one() {
    CASE=$1
    local np=$2 algo=$3 file=$4
    shift 4
    rm -f one.tns many.tns
    local o1=() o2=()
    if [ "$algo" != tc ]; then o1=(-o one.tns); o2=(-o many.tns); fi
    if ! "$TESSEL" graph "$algo" "$file" "$@" "${o1[@]}" >one.txt 2>err.txt; then
      fail "the one-node run failed"
      return
    fi
    mrun "$np" graph "$algo" "$file" "$@" -m "$np" "${o2[@]}"
    if [ "$rc" != 0 ]; then
      fail "exit $rc, expected 0"
    elif [ "$algo" = tc ] && ! cmp -s one.txt out.txt; then
      fail "tc printed '$(cat out.txt)', one node '$(cat one.txt)'"
    elif [ "$algo" = pagerank ] && ! awk 'NR == FNR { r[$1] = $2; n++; next }
        { m++; d = $2 - r[$1]; if (d < 0) d = -d; if (!($1 in r) || d > 1e-12 * r[$1]) bad = 1 }
        END { exit bad || n != m }' one.tns many.tns; then
      fail "pagerank differs from one node's by more than 1e-12 relative"
    elif [ "$algo" != tc ] && [ "$algo" != pagerank ] && ! cmp -s one.tns many.tns; then
      fail "$algo -o differs from one node's: $(diff one.tns many.tns | head -5 | tr '\n' ' ')"
    else
      pass
    fi
  }
  # A hand-checked graph: 1 -> 2 (4), 1 -> 3 (1), 3 -> 2 (-2), 2 -> 4 (1), 5 -> 1 (1).
  printf '%%%%MatrixMarket matrix coordinate real general\n5 5 5\n1 2 4\n1 3 1\n3 2 -2\n2 4 1\n5 1 1\n' >small.mtx
  for np in 1 3; do
    CASE=hand-bfs-np$np
    rm -f levels.tns
    mrun "$np" graph bfs small.mtx --source 1 -m "$np" -o levels.tns
    if [ "$rc" = 0 ] && [ "$(grep -v '^#' levels.tns)" = "$(printf '1 0\n2 1\n3 1\n4 2')" ]; then pass; else
      fail "exit $rc, levels: $(cat levels.tns 2>/dev/null | tr '\n' ' ')"; fi
    CASE=hand-sssp-np$np
    mrun "$np" graph sssp small.mtx --source 1 -m "$np"
    if [ "$rc" = 0 ] && [ "$(cat out.txt)" = "$(printf '1 0\n2 -1\n3 1\n4 0')" ]; then pass; else
      fail "exit $rc, distances: $(tr '\n' ' ' <out.txt)"; fi
  done
  "$TESSEL" generate rmat:9,8 -o rmat.mtx --seed 3 >/dev/null 2>&1 || echo "cli_mpi.sh: generate rmat failed"
  # The undirected view of small.mtx plus an isolated vertex and a triangle.
  printf '%%%%MatrixMarket matrix coordinate pattern symmetric\n8 8 6\n2 1\n3 1\n3 2\n4 2\n5 1\n8 7\n' >sym.mtx
  # About 0.4 s per mpiexec: R-MAT and karate at 2-4 ranks, the small graph at 1 and 6.
  for np in 1 2 3 4 6; do
    for algo in bfs bfs-parents sssp pagerank cc tc; do
      src=()
      case $algo in bfs | bfs-parents | sssp) src=(--source 2) ;; esac
      case $np in
      1 | 6) same_as_one "sym-$algo-np$np" "$np" "$algo" sym.mtx "${src[@]}" ;;
      *)
        same_as_one "rmat-$algo-np$np" "$np" "$algo" rmat.mtx "${src[@]}"
        if [ -f "$DATA/karate.mtx" ]; then same_as_one "karate-$algo-np$np" "$np" "$algo" "$DATA/karate.mtx" "${src[@]}"; fi
        ;;
      esac
    done
  done
  [ -f "$DATA/karate.mtx" ] || echo "cli_mpi.sh graph: $DATA/karate.mtx absent: karate checks skipped"
  # More ranks than vertices: a single vertex on 3 ranks.
  printf '%%%%MatrixMarket matrix coordinate real general\n1 1 0\n' >one.mtx
  same_as_one one-vertex-bfs 3 bfs one.mtx
  same_as_one one-vertex-pagerank 3 pagerank one.mtx
  # Errors: one line, exit 2 on every rank, no output file.
  printf '%%%%MatrixMarket matrix coordinate real general\n4 4 4\n1 2 1\n2 3 -3\n3 2 1\n3 4 1\n' >cycle.mtx
  rm -f d.tns
  expect_bad negative-cycle 3 "negative-weight cycle is reachable from source vertex" \
    graph sssp cycle.mtx --source 1 -m 3 -o d.tns
  CASE=negative-cycle-no-file
  if [ -e d.tns ]; then fail "an output file was written"; else pass; fi
  expect_bad bad-source 2 "source vertex 9 is out of range" graph bfs small.mtx --source 9 -m 2 -o d.tns
  expect_bad machine-mismatch 2 "start with mpirun -np 3" graph bfs small.mtx -m 3 -o d.tns
  expect_bad machine-grid 4 "give a rank count" graph cc small.mtx -m 2x2
  expect_bad bc-one-node 2 "bc runs on one node" graph bc small.mtx --source 1 -m 2 -o d.tns
  printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 1\n3 9 1\n' >bad.mtx
  expect_bad bad-line-last-rank 3 "bad.mtx:5" graph bfs bad.mtx -m 3 -o d.tns
  CASE=errors-no-file
  if [ -e d.tns ]; then fail "an output file was written"; else pass; fi
  # Rank 1 alone is short of memory for its part of the file: every rank ends at once.
  CASE=one-rank-memory-limit
  "$TESSEL" generate rmat:12,8 -o r12.mtx >/dev/null 2>&1
  FAILRANK=1 FAILMEM=200K mrun_wrapped 3 \
    'if [ "'"$RANK_OF"'" = "$FAILRANK" ]; then export TESSEL_MAX_MEMORY=$FAILMEM; fi; exec "$0" "$@"' \
    graph bfs r12.mtx -m 3 -o d.tns
  if [ "$rc" != 2 ]; then
    fail "exit $rc, expected 2"
  elif [ "$(tessel_lines)" != 1 ] || ! grep -q '^tessel: error: .*memory limit' err.txt; then
    fail "expected one line 'tessel: error: ... memory limit ...'"
  elif [ -e d.tns ]; then
    fail "an output file was written"
  elif awk -v s="$secs" 'BEGIN { exit !(s >= 10) }'; then
    fail "took ${secs}s, more than 10"
  else
    pass
  fi
  ;;
*)
  echo "cli_mpi.sh: unknown group '$GROUP'"
  exit 2
  ;;
esac

echo "cli_mpi.sh $GROUP: $checks passed, $failures failed"
[ "$failures" = 0 ]
