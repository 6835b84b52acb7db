#!/usr/bin/env bash
# Plots of the benchmark CSVs in DIR (scripts/bench) as PNG, with gnuplot.
#   bench/plots.gnuplot.sh DIR
set -euo pipefail
dir="$1"
cd "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# series BENCH OP IMPL LAYOUT [x SIZE]: a data file for one line, x = size
# at 2 units, or x = units at SIZE; its name, or nothing when it is empty
series() {
  local file="$tmp/$1.$2.$3.$4.${6:-2}.dat"
  if [[ "${5:-}" == x ]]; then
    awk -F, -v b="$1" -v o="$2" -v i="$3" -v l="$4" -v s="$6" \
      '$1==b && $2==o && $3==i && $4==l && $6==s {print $5, $7}' ./*.csv
  else
    awk -F, -v b="$1" -v o="$2" -v i="$3" -v l="$4" \
      '$1==b && $2==o && $3==i && $4==l && $5==2 {print $6, $7}' ./*.csv
  fi | sort -n > "$file"
  [[ -s "$file" ]] && echo "$file"
  return 0
}

# line FILE TITLE: one clause of a plot command ("" for no data)
line() {
  [[ -n "$1" ]] && printf '"%s" using 1:2 with linespoints title "%s", ' "$1" "$2"
  return 0
}

# plot SETTINGS CLAUSES...: one PNG
plot() {
  local settings="$1" clauses
  shift
  clauses="$(printf '%s' "$@")"
  [[ -n "$clauses" ]] || return 0
  printf '%s\nplot %s\n' "$settings" "${clauses%, }" | gnuplot
}

term="set terminal pngcairo size 900,600 noenhanced; set grid"

latency() { # OP LAYOUT FILE
  local op="$1" layout="$2" dir="${1%%_*}" clauses=()
  clauses+=("$(line "$(series latency "$op" dart "$layout")" libdart)")
  clauses+=("$(line "$(series latency "${dir}_nb_flush" dart "$layout")" "libdart + flush")")
  for impl in memcpy mpi_dyn mpi_alloc shmem ucx; do
    clauses+=("$(line "$(series latency "$op" $impl "$layout")" $impl)")
  done
  # on the UCX transport: libdart on the MPI transport beside it
  [[ "$layout" == *.ucx ]] && clauses+=("$(line "$(series latency "$op" dart "${layout%.ucx}")" "libdart, MPI transport")")
  plot "$term; set output '$3'; set logscale xy; set key top left
set xlabel 'bytes'; set ylabel 'µs per operation'
set title '$dir latency, 2 units ($layout)'" "${clauses[@]}"
}

latency put_blocking node latency_put_node.png
latency get_blocking node latency_get_node.png
latency put_blocking upn1 latency_put_upn1.png
latency put_blocking upn1.ucx latency_put_upn1.ucx.png
latency get_blocking upn1.ucx latency_get_upn1.ucx.png

clauses=()
for impl in dart memcpy mpi_dyn mpi_alloc shmem; do
  clauses+=("$(line "$(series bandwidth put_nb_flush $impl node)" $impl)")
done
plot "$term; set output 'bandwidth_put_node.png'; set logscale x
set key top left; set xlabel 'bytes'; set ylabel 'MB/s'
set title 'put bandwidth, windows of 16, 2 units (node)'" "${clauses[@]}"

clauses=("$(line "$(series gups update dart upn1 x 20)" "dart (emulated nodes of 1)")")
clauses+=("$(line "$(series gups update dart upn1.ucx x 20)" "dart (emulated nodes of 1, UCX)")")
for impl in dart dart_fetch shm_atomic mpi_alloc shmem; do
  clauses+=("$(line "$(series gups update $impl node x 20)" "$impl (node)")")
done
plot "$term; set output 'gups.png'; set logscale y; set key bottom left
set xtics (1,2,4,8); set xlabel 'units'; set ylabel 'GUP/s'
set title 'GUPS, 2^20 words per unit'" "${clauses[@]}"

clauses=("$(line "$(series stencil jacobi dart upn1 x 1024)" "dart (emulated nodes of 1)")")
for impl in dart mpi_sendrecv mpi_rma; do
  clauses+=("$(line "$(series stencil jacobi $impl node x 1024)" "$impl (node)")")
done
plot "$term; set output 'stencil.png'; set logscale y; set key top right
set xtics (1,2,4,8); set xlabel 'units'; set ylabel 'µs per iteration'
set title 'Jacobi 1024x1024, time per iteration'" "${clauses[@]}"

clauses=()
for layout in node upn1 upn1.ucx; do
  clauses+=("$(line "$(series coll allreduce dart $layout x 8)" "dart ($layout)")")
done
clauses+=("$(line "$(series coll allreduce mpi node x 8)" "MPI (node)")")
clauses+=("$(line "$(series coll allreduce dart_mpi node x 8)" "DART-MPI (node)")")
plot "$term; set output 'coll_allreduce.png'; set logscale y; set key top left
set xtics (2,4,8); set xlabel 'units'; set ylabel 'µs per call'
set title 'allreduce of one double (sum), time per call'" "${clauses[@]}"
