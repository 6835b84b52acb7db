# Summary of the benchmark CSVs (bench.h rows) as markdown: the targets
# with their ratios, then one table per comparison.
#   awk -F, -f bench/summary.awk results/*.csv > summary.md
# A missing measurement shows as "-", and a target without its numbers as
# "not measured".

$1 == "bench" || /^#/ || NF < 8 { next }
$8 == "residual" { next } # the stencil's check value, not a time
$1 == "plan" && $8 != "us" { next } # MB/s and speedups follow from the times
{
  key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5 SUBSEP $6
  V[key] = $7
  SIZES[$1 SUBSEP $4 SUBSEP $5] = SIZES[$1 SUBSEP $4 SUBSEP $5] " " $6
  UNITS[$1 SUBSEP $4] = UNITS[$1 SUBSEP $4] " " $5
  SEEN[$1] = 1
}

function val(b, o, i, l, u, s) {
  k = b SUBSEP o SUBSEP i SUBSEP l SUBSEP u SUBSEP s
  return (k in V) ? V[k] + 0 : ""
}
function fmt(x) {
  if (x == "") return "-"
  if (x >= 100) return sprintf("%.0f", x)
  if (x >= 1) return sprintf("%.3g", x)
  return sprintf("%.3g", x)
}
function human(s) {
  if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
  if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
  return s " B"
}
# the distinct numbers of a space-separated list, ascending
function distinct(list, out,    n, a, i, j, seen, t) {
  n = split(list, a, " ")
  m = 0
  for (i = 1; i <= n; i++) if (!(a[i] in seen)) { seen[a[i]] = 1; out[++m] = a[i] + 0 }
  for (i = 2; i <= m; i++) {
    t = out[i]
    for (j = i - 1; j >= 1 && out[j] > t; j--) out[j + 1] = out[j]
    out[j + 1] = t
  }
  return m
}

# One target: the ratio a/b of two measurements against a limit.
#   cmp "<=": ratio must not exceed limit; ">=": must reach it; "<", ">":
#   strictly
#   faster: the ratio is b/a (how many times libdart, a, beats b)
function target(name, a, b, cmp, limit, faster,    r, met) {
  if (a == "" || b == "" || a == 0 || b == 0) {
    printf "| %s | - | - | - | %s %s | not measured |\n", name, cmp, limit
    return
  }
  r = faster ? b / a : a / b
  met = cmp == "<=" ? r <= limit : cmp == ">=" ? r >= limit : \
        cmp == "<" ? r < limit : r > limit
  printf "| %s | %s | %s | %.3g | %s %s | %s |\n", name, fmt(a), fmt(b), r,
    cmp, limit, met ? "met" : "**missed**"
}

# target() for every unit count and size that bench measured on each of
# layouts (space-separated): impl a against impl b of op; in name, @L, @U
# and @S stand for the layout, the unit count and the size.
function each_target(name, bench, layouts, op, a, b, cmp, limit,
                     nl, ls, li, lay, nu, us, i, nsz, ss, j, n) {
  nl = split(layouts, ls, " ")
  for (li = 1; li <= nl; li++) {
    lay = ls[li]
    nu = distinct(UNITS[bench SUBSEP lay], us)
    for (i = 1; i <= nu; i++) {
      nsz = distinct(SIZES[bench SUBSEP lay SUBSEP us[i]], ss)
      for (j = 1; j <= nsz; j++) {
        n = name
        gsub(/@L/, lay, n)
        gsub(/@U/, us[i], n)
        gsub(/@S/, ss[j], n)
        target(n, val(bench, op, a, lay, us[i], ss[j]), val(bench, op, b, lay, us[i], ss[j]), cmp, limit)
      }
    }
  }
}

# The smaller of two measurements, either of which may be missing ("").
function better(a, b) {
  if (a == "") return b
  if (b == "") return a
  return a < b ? a : b
}

# A table over sizes: columns are "label=bench:op:impl" joined by "|",
# plus the ratio of the first column to column ref (0: none). A column
# "label=bench:op:impl:layout" comes from another layout (the same sizes).
function by_size(title, bench, layout, units, cols, ref, unitname,
                 c, nc, spec, i, nsz, sz, row, v, r) {
  nc = split(cols, c, "|")
  nsz = distinct(SIZES[bench SUBSEP layout SUBSEP units], sz)
  if (nsz == 0) return
  printf "\n#### %s (%s, %d units, %s)\n\n| size |", title, layout, units, unitname
  for (i = 1; i <= nc; i++) { split(c[i], spec, "="); printf " %s |", spec[1] }
  if (ref) { split(c[ref], spec, "="); split(c[1], r, "="); printf " %s / %s |", r[1], spec[1] }
  printf "\n|---|"
  for (i = 1; i <= nc + (ref ? 1 : 0); i++) printf "---|"
  printf "\n"
  for (row = 1; row <= nsz; row++) {
    line = "| " human(sz[row]) " |"
    any = 0
    for (i = 1; i <= nc; i++) {
      split(c[i], spec, "="); split(spec[2], p, ":")
      v[i] = val(p[1], p[2], p[3], (4 in p) ? p[4] : layout, units, sz[row])
      if (v[i] != "") any = 1
      line = line " " fmt(v[i]) " |"
    }
    if (!any) continue
    if (ref) line = line " " ((v[1] != "" && v[ref] != "" && v[ref] > 0) ? sprintf("%.3g", v[1] / v[ref]) : "-") " |"
    print line
  }
}

# A table over unit counts for one size (GUPS, stencil, allocation).
function by_units(title, bench, op, layout, size, impls, ref, unitname,
                  c, nc, nu, un, row, i, v, line, any) {
  nc = split(impls, c, "|")
  nu = distinct(UNITS[bench SUBSEP layout], un)
  if (nu == 0) return
  printf "\n#### %s (%s, %s)\n\n| units |", title, layout, unitname
  for (i = 1; i <= nc; i++) printf " %s |", c[i]
  if (ref) printf " %s / %s |", c[1], c[ref]
  printf "\n|---|"
  for (i = 1; i <= nc + (ref ? 1 : 0); i++) printf "---|"
  printf "\n"
  for (row = 1; row <= nu; row++) {
    line = "| " un[row] " |"
    any = 0
    for (i = 1; i <= nc; i++) {
      v[i] = val(bench, op, c[i], layout, un[row], size)
      if (v[i] != "") any = 1
      line = line " " fmt(v[i]) " |"
    }
    if (!any) continue
    if (ref) line = line " " ((v[1] != "" && v[ref] != "" && v[ref] > 0) ? sprintf("%.3g", v[1] / v[ref]) : "-") " |"
    print line
  }
}

# bench_plan on one layout: a row per graph, size, operation and unit
# count; petsc / dart is libdart's speedup over PetscSF.
function plan_table(layout,    ng, g, gi, pg, j, oi, o, nu, un, i, d, dg, p) {
  nu = distinct(UNITS["plan" SUBSEP layout], un)
  if (nu == 0) return
  printf "\n#### %s (µs)\n\n", layout
  print "| graph | per unit | op | units | dart | dart_graph | petsc | petsc / dart |"
  print "|---|---|---|---|---|---|---|---|"
  ng = split("halo2d:²:64:1024;halo3d:³:16:96;random: leaves:1000:100000", g, ";")
  for (gi = 1; gi <= ng; gi++) {
    split(g[gi], pg, ":")
    for (j = 3; j <= 4; j++)
      for (oi = 0; oi < 2; oi++) {
        o = oi ? "reduce" : "bcast"
        for (i = 1; i <= nu; i++) {
          d = val("plan", pg[1] "_" o, "dart", layout, un[i], pg[j])
          dg = val("plan", pg[1] "_" o, "dart_graph", layout, un[i], pg[j])
          p = val("plan", pg[1] "_" o, "petsc", layout, un[i], pg[j])
          if (d == "" && p == "") continue
          printf "| %s | %s%s | %s | %d | %s | %s | %s | %s |\n", pg[1], pg[j], pg[2], o, un[i], fmt(d), fmt(dg), fmt(p), (d != "" && p != "" && d > 0) ? sprintf("%.3g", p / d) : "-"
        }
      }
  }
}

# The collectives (bench_coll) and DASH's reductions on them
# (bench_dash_reduce): the operations, and the layouts bench_coll ran on.
function coll_setup() {
  ncoll_ops = split("barrier bcast allreduce allreduce_minmax reduce allgather gather scatter alltoall", coll_ops, " ")
  ncoll_lays = split("node upn1 upn2 upn1.ucx", coll_lays, " ")
  ndash_ops = split("reduce reduce_local minmax min_element", dash_ops, " ")
}
# An operation and its size as a name ("barrier": no size).
function coll_name(op, s) {
  return s == 0 ? op : op " " human(s)
}
# The goal of libdart's collective op against MPI's: at most MPI's time;
# on the node the 8 B barrier, bcast and allreduce at 2 to 8 units half of
# it, and the 1 MiB allreduce 0.8 of it.
function coll_limit(op, lay, u, s) {
  if (lay != "node") return 1
  if ((op == "barrier" || op == "bcast" || op == "allreduce") && s <= 8 && u >= 2 && u <= 8) return 0.5
  if (op == "allreduce" && s == 1048576) return 0.8
  return 1
}
# Per layout, operation, unit count and size: libdart against MPI in the
# same run, and against DART-MPI (its node rows: it has no emulated nodes).
function coll_targets(    li, lay, nu, cu, oi, op, i, nsz, cs, j, d, mp, dm, n) {
  for (li = 1; li <= ncoll_lays; li++) {
    lay = coll_lays[li]
    nu = distinct(UNITS["coll" SUBSEP lay], cu)
    for (oi = 1; oi <= ncoll_ops; oi++) {
      op = coll_ops[oi]
      for (i = 1; i <= nu; i++) {
        nsz = distinct(SIZES["coll" SUBSEP lay SUBSEP cu[i]], cs)
        for (j = 1; j <= nsz; j++) {
          d = val("coll", op, "dart", lay, cu[i], cs[j])
          mp = val("coll", op, "mpi", lay, cu[i], cs[j])
          dm = val("coll", op, "dart_mpi", "node", cu[i], cs[j])
          if (d == "" && mp == "" && dm == "") continue # not a size of op
          n = "collectives, " lay ", " cu[i] " units, " coll_name(op, cs[j])
          target(n " vs MPI", d, mp, "<=", coll_limit(op, lay, cu[i], cs[j]))
          target(n " vs DART-MPI" (lay == "node" ? "" : " (node)"), d, dm, "<=", 1)
        }
      }
    }
  }
}
# bench_coll's rows on one layout: libdart, MPI in the same run, DART-MPI
# (node) and MPI in DART-MPI's run.
function coll_table(lay,    nu, cu, oi, op, i, nsz, cs, j, d, mp, dm, dmp) {
  nu = distinct(UNITS["coll" SUBSEP lay], cu)
  if (nu == 0) return
  printf "\n#### %s (µs per call, the slowest unit)\n\n", lay
  print "| op | size | units | dart | mpi | dart / mpi | dart_mpi" (lay == "node" ? "" : " (node)") " | dart / dart_mpi | mpi in DART-MPI's run |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (oi = 1; oi <= ncoll_ops; oi++) {
    op = coll_ops[oi]
    for (i = 1; i <= nu; i++) {
      nsz = distinct(SIZES["coll" SUBSEP lay SUBSEP cu[i]], cs)
      for (j = 1; j <= nsz; j++) {
        d = val("coll", op, "dart", lay, cu[i], cs[j])
        mp = val("coll", op, "mpi", lay, cu[i], cs[j])
        dm = val("coll", op, "dart_mpi", "node", cu[i], cs[j])
        dmp = val("coll", op, "mpi_dart_mpi", "node", cu[i], cs[j])
        if (d == "" && mp == "" && dm == "") continue
        printf "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", op, cs[j] == 0 ? "-" : human(cs[j]), cu[i], fmt(d), fmt(mp), (d != "" && mp != "" && mp > 0) ? sprintf("%.3g", d / mp) : "-", fmt(dm), (d != "" && dm != "" && dm > 0) ? sprintf("%.3g", d / dm) : "-", fmt(dmp)
      }
    }
  }
}
# DASH's reductions on libdart against DASH on DART-MPI, per unit count.
function dash_targets(    nu, du, oi, op, i, nsz, ds, j, a, b) {
  nu = distinct(UNITS["dash" SUBSEP "node"], du)
  for (oi = 1; oi <= ndash_ops; oi++) {
    op = dash_ops[oi]
    for (i = 1; i <= nu; i++) {
      nsz = distinct(SIZES["dash" SUBSEP "node" SUBSEP du[i]], ds)
      for (j = 1; j <= nsz; j++) {
        a = val("dash", op, "dash_libdart", "node", du[i], ds[j])
        b = val("dash", op, "dash_dart_mpi", "node", du[i], ds[j])
        if (a == "" && b == "") continue
        target("DASH " op " (" human(ds[j]) "), node, " du[i] " units, on libdart vs on DART-MPI", a, b, "<=", 1)
      }
    }
  }
}
function dash_table(    nu, du, oi, op, i, nsz, ds, j, a, b) {
  nu = distinct(UNITS["dash" SUBSEP "node"], du)
  if (nu == 0) return
  printf "\n#### node (µs per call, the slowest unit)\n\n"
  print "| op | size | units | DASH on libdart | DASH on DART-MPI | libdart / DART-MPI |"
  print "|---|---|---|---|---|---|"
  for (oi = 1; oi <= ndash_ops; oi++) {
    op = dash_ops[oi]
    for (i = 1; i <= nu; i++) {
      nsz = distinct(SIZES["dash" SUBSEP "node" SUBSEP du[i]], ds)
      for (j = 1; j <= nsz; j++) {
        a = val("dash", op, "dash_libdart", "node", du[i], ds[j])
        b = val("dash", op, "dash_dart_mpi", "node", du[i], ds[j])
        if (a == "" && b == "") continue
        printf "| %s | %s | %d | %s | %s | %s |\n", op, human(ds[j]), du[i], fmt(a), fmt(b), (a != "" && b != "" && b > 0) ? sprintf("%.3g", a / b) : "-"
      }
    }
  }
}

END {
  print "### Targets"
  print ""
  print "| target | libdart | baseline | ratio | goal | |"
  print "|---|---|---|---|---|---|"
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    target("node, 8 B " o " blocking vs memcpy + fence", val("latency", o "_blocking", "dart", "node", 2, 8), val("latency", o "_blocking", "memcpy", "node", 2, 8), "<=", 1.2)
    target("node, 8 B " o " blocking: times faster than MPI + flush (dynamic)", val("latency", o "_blocking", "dart", "node", 2, 8), val("latency", o "_blocking", "mpi_dyn", "node", 2, 8), ">=", 20, 1)
    target("node, 8 B " o " blocking vs OpenSHMEM", val("latency", o "_blocking", "dart", "node", 2, 8), val("latency", o "_blocking", "shmem", "node", 2, 8), "<=", 1)
    target("node, 8 B " o " + flush vs blocking", val("latency", o "_nb_flush", "dart", "node", 2, 8), val("latency", o "_blocking", "dart", "node", 2, 8), "<=", 1.5)
    target("node, 8 B " o " handle + wait vs blocking", val("latency", o "_handle_wait", "dart", "node", 2, 8), val("latency", o "_blocking", "dart", "node", 2, 8), "<=", 1.5)
  }
  target("node, 8 B fetch_and_op vs __atomic_fetch_add", val("atomic", "fetch_add", "dart", "node", 2, 8), val("atomic", "fetch_add", "cpu", "node", 2, 8), "<=", 3)
  target("node, 1 MiB put bandwidth vs memcpy", val("bandwidth", "put_nb_flush", "dart", "node", 2, 1048576), val("bandwidth", "put_nb_flush", "memcpy", "node", 2, 1048576), ">=", 0.9)
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    target("emulated nodes, 8 B " o " blocking vs MPI + flush", val("latency", o "_blocking", "dart", "upn1", 2, 8), val("latency", o "_blocking", "mpi_dyn", "upn1", 2, 8), "<=", 1.05)
    target("emulated nodes, 1 MiB " o " blocking vs MPI + flush", val("latency", o "_blocking", "dart", "upn1", 2, 1048576), val("latency", o "_blocking", "mpi_dyn", "upn1", 2, 1048576), "<=", 1.05)
  }
  # the UCX transport on emulated nodes: as fast as raw UCX on the same
  # memory, over UCX's own choice of transports (here shared memory) and
  # over TCP, where an operation crosses a network transport as between
  # nodes; and faster than libdart's MPI transport at every size
  for (li = 0; li < 2; li++) {
    lay = li ? "upn1.tcp" : "upn1.ucx"
    name = li ? "UCX over TCP" : "UCX transport"
    for (d = 0; d < 2; d++) {
      o = d ? "get" : "put"
      for (j = 0; j < 2; j++) {
        s = j ? 1048576 : 8
        target("emulated nodes, " name ", " human(s) " " o " blocking vs raw ucp + flush", val("latency", o "_blocking", "dart", lay, 2, s), val("latency", o "_blocking", "ucx", lay, 2, s), "<=", 1.10)
      }
      if (!li)
        target("emulated nodes, " name ", 1 MiB " o " bandwidth (+ flush) vs raw ucp + flush", val("bandwidth", o "_nb_flush", "dart", lay, 2, 1048576), val("bandwidth", o "_nb_flush", "ucx", lay, 2, 1048576), ">=", 0.9)
    }
  }
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    # the size where the UCX transport gains least (the ratio shown)
    nsz = distinct(SIZES["latency" SUBSEP "upn1.ucx" SUBSEP 2], us)
    worst = ""; wa = ""; wb = ""
    for (j = 1; j <= nsz; j++) {
      a = val("latency", o "_blocking", "dart", "upn1.ucx", 2, us[j])
      b = val("latency", o "_blocking", "dart", "upn1", 2, us[j])
      if (a == "" || b == "" || a == 0 || b == 0) continue
      if (worst == "" || b / a < wb / wa) { worst = us[j]; wa = a; wb = b }
    }
    target("emulated nodes, " o " blocking, every size: times faster on the UCX than the MPI transport (upn1.ucx vs upn1; least at " (worst == "" ? "-" : human(worst)) ")", wa, wb, ">", 1, 1)
  }
  nu = distinct(UNITS["gups" SUBSEP "upn1.ucx"], gu)
  for (i = 1; i <= nu; i++)
    target("GUPS emulated nodes, " gu[i] " units, UCX vs MPI transport", val("gups", "update", "dart", "upn1.ucx", gu[i], 20), val("gups", "update", "dart", "upn1", gu[i], 20), ">=", 1)
  for (li = 0; li < 2; li++) {
    lay = li ? "upn1.tcp" : "upn1.ucx"
    nu = distinct(UNITS["gups" SUBSEP lay], gu)
    for (i = 1; i <= nu; i++)
      target("GUPS emulated nodes, " gu[i] " units, " (li ? "UCX over TCP" : "UCX transport") " vs raw ucp atomics", val("gups", "update", "dart", lay, gu[i], 20), val("gups", "update", "ucx", lay, gu[i], 20), ">=", 0.9)
  }
  nu = distinct(UNITS["gups" SUBSEP "node"], gu)
  for (i = 1; i <= nu; i++)
    target("GUPS, one node, " gu[i] " units, vs shared-window atomics", val("gups", "update", "dart", "node", gu[i], 20), val("gups", "update", "shm_atomic", "node", gu[i], 20), ">=", 0.8)
  # owner-applied atomics (dart_am.h): GUPS between emulated nodes against
  # raw UCX atomics, and on the node against today's dart_accumulate
  for (li = 0; li < 2; li++) {
    lay = li ? "upn1.tcp" : "upn1.ucx"
    nu = distinct(UNITS["gups" SUBSEP lay], gu)
    for (i = 1; i <= nu; i++)
      target("GUPS emulated nodes, " gu[i] " units, " (li ? "UCX over TCP" : "UCX shared memory") ": owner-applied vs raw ucp atomics", val("gups", "update", "dart_owner", lay, gu[i], 20), val("gups", "update", "ucx", lay, gu[i], 20), ">=", li ? 10 : 2)
  }
  nu = distinct(UNITS["gups" SUBSEP "node"], gu)
  for (i = 1; i <= nu; i++)
    target("GUPS, one node, " gu[i] " units, owner-applied vs dart_accumulate", val("gups", "update", "dart_owner", "node", gu[i], 20), val("gups", "update", "dart", "node", gu[i], 20), ">=", 0.95)
  # hash-map inserts between emulated nodes: active messages vs atomics
  # (am: each call waited for; am_window: 256 calls in flight; am_batch:
  # 256 operations per call to an owner)
  each_target("hash map, @L, @U units: inserts per second, active messages vs atomics", "hashmap", "upn1 upn1.ucx upn1.tcp", "insert", "am", "atomics", ">=", 3)
  each_target("hash map, @L, @U units: inserts per second, active messages with calls in flight vs atomics", "hashmap", "upn1 upn1.ucx upn1.tcp", "insert", "am_window", "atomics", ">=", 3)
  each_target("hash map, @L, @U units: inserts per second, active messages in batches per owner vs atomics", "hashmap", "upn1 upn1.ucx upn1.tcp", "insert", "am_batch", "atomics", ">=", 3)
  # dart_init as DASH's driver pays it (MPI up), against DART-MPI
  nu = distinct(UNITS["init" SUBSEP "node"], iu)
  for (i = 1; i <= nu; i++)
    target("dart_init with MPI up, " iu[i] " units, vs DART-MPI", val("init", "dart_init", "dart", "node", iu[i], 0), val("init", "dart_init", "dart_mpi", "node", iu[i], 0), "<=", 2)
  # device memory (bench_gpu; only where a CUDA device ran it)
  target("GPU, node, 4 MiB device-to-device put bandwidth vs cudaMemcpy D2D", val("gpu_bandwidth", "put_blocking", "dart_ipc", "node", 2, 4194304), val("gpu_bandwidth", "copy", "copy_d2d", "node", 2, 4194304), ">=", 0.8)
  target("GPU, 4 MiB put: times faster through IPC (node) than host staging (upn1)", val("gpu_latency", "put_blocking", "dart_ipc", "node", 2, 4194304), val("gpu_latency", "put_blocking", "dart_stage", "upn1", 2, 4194304), ">=", 1, 1)
  stencil_lays = "node upn1 upn1.ucx"
  nlay = split(stencil_lays, stencil_layouts, " ")
  each_target("stencil @S², @L, @U units, vs MPI_Sendrecv", "stencil", stencil_lays, "jacobi", "dart", "mpi_sendrecv", "<=", 1)
  # the signal version (dart_put_signal + waits) vs the better two-sided
  # exchange: on the node at 128² (latency) and 1024² (bandwidth), 2 to 8
  # units; on emulated nodes at every size
  for (li = 1; li <= nlay; li++) {
    lay = stencil_layouts[li]
    nu = distinct(UNITS["stencil" SUBSEP lay], su)
    for (i = 1; i <= nu; i++) {
      if (lay == "node") {
        if (su[i] < 2 || su[i] > 8) continue
        nsz = split("128 1024", ss, " ")
      } else nsz = distinct(SIZES["stencil" SUBSEP lay SUBSEP su[i]], ss)
      for (j = 1; j <= nsz; j++) {
        limit = lay == "upn1.ucx" ? 0.9 : lay == "upn1" ? 1.2 : ss[j] == 128 ? 0.7 : 0.95
        target("stencil " ss[j] "², " lay ", " su[i] " units, signals vs the better of MPI_Sendrecv and MPI_Isend", val("stencil", "jacobi", "dart_signal", lay, su[i], ss[j]), better(val("stencil", "jacobi", "mpi_sendrecv", lay, su[i], ss[j]), val("stencil", "jacobi", "mpi_isend", lay, su[i], ss[j])), "<=", limit)
      }
    }
  }
  # ping-pong, half a round trip: put with signal + wait against two-sided
  # MPI and OpenSHMEM's put + quiet + flag
  target("node, 8 B ping-pong, put with signal + wait vs MPI_Send/MPI_Recv", val("pingpong", "put_signal", "dart", "node", 2, 8), val("pingpong", "put_signal", "mpi", "node", 2, 8), "<=", 0.2)
  target("node, 8 B ping-pong, put with signal + wait vs OpenSHMEM put + quiet + flag", val("pingpong", "put_signal", "dart", "node", 2, 8), val("pingpong", "put_signal", "shmem", "node", 2, 8), "<", 1)
  coll_setup()
  coll_targets()
  dash_targets()

  print ""
  print "### Latency and bandwidth"
  for (li = 0; li < 2; li++) {
    lay = li ? "upn1" : "node"
    for (d = 0; d < 2; d++) {
      o = d ? "get" : "put"
      by_size(o " latency", "latency", lay, 2, \
        "dart blocking=latency:" o "_blocking:dart|dart + flush=latency:" o "_nb_flush:dart|dart handle=latency:" o "_handle_wait:dart|memcpy + fence=latency:" o "_blocking:memcpy|MPI dynamic=latency:" o "_blocking:mpi_dyn|MPI allocate=latency:" o "_blocking:mpi_alloc|OpenSHMEM=latency:" o "_blocking:shmem" (li ? "|raw UCX=latency:" o "_blocking:ucx" : ""), \
        li ? 5 : 4, "µs")
    }
    by_size("put bandwidth, windows of 16", "bandwidth", lay, 2, \
      "dart + flush=bandwidth:put_nb_flush:dart|dart handles=bandwidth:put_handle_wait:dart|memcpy=bandwidth:put_nb_flush:memcpy|MPI dynamic=bandwidth:put_nb_flush:mpi_dyn|MPI allocate=bandwidth:put_nb_flush:mpi_alloc|OpenSHMEM=bandwidth:put_nb_flush:shmem" (li ? "|raw UCX=bandwidth:put_nb_flush:ucx" : ""), \
      li ? 4 : 3, "MB/s")
  }
  # emulated nodes on the UCX transport: vs raw UCX on the same memory, and
  # vs libdart on the MPI transport (upn1)
  lay = "upn1.ucx"
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    by_size(o " latency, UCX transport", "latency", lay, 2, \
      "dart blocking=latency:" o "_blocking:dart|dart + flush=latency:" o "_nb_flush:dart|dart handle=latency:" o "_handle_wait:dart|raw ucp + flush=latency:" o "_blocking:ucx|dart, MPI transport=latency:" o "_blocking:dart:upn1|MPI dynamic=latency:" o "_blocking:mpi_dyn", \
      4, "µs")
  }
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    by_size(o " bandwidth, UCX transport, windows of 16", "bandwidth", lay, 2, \
      "dart + flush=bandwidth:" o "_nb_flush:dart|dart handles=bandwidth:" o "_handle_wait:dart|raw ucp + flush=bandwidth:" o "_nb_flush:ucx|dart, MPI transport=bandwidth:" o "_nb_flush:dart:upn1|MPI dynamic=bandwidth:" o "_nb_flush:mpi_dyn", \
      3, "MB/s")
  }
  for (d = 0; d < 2; d++) {
    o = d ? "get" : "put"
    by_size(o " latency, UCX over TCP", "latency", "upn1.tcp", 2, \
      "dart blocking=latency:" o "_blocking:dart|dart + flush=latency:" o "_nb_flush:dart|dart handle=latency:" o "_handle_wait:dart|raw ucp + flush=latency:" o "_blocking:ucx", \
      4, "µs")
  }
  # UCX's own benchmark between two processes (run-ucx-perftest), for
  # reference next to the raw and libdart rows on the same layout
  by_size("ucx_perftest for reference: latency", "perftest", lay, 2, \
    "ucx_perftest put (half a ping-pong)=perftest:put_lat:ucx_perftest|ucx_perftest get=perftest:get_lat:ucx_perftest|raw ucp put + flush=latency:put_blocking:ucx|raw ucp get=latency:get_blocking:ucx|dart put blocking=latency:put_blocking:dart|dart get blocking=latency:get_blocking:dart", \
    0, "µs")
  by_size("ucx_perftest for reference: put bandwidth", "perftest", lay, 2, \
    "ucx_perftest put_bw=perftest:put_bw:ucx_perftest|raw ucp + flush, windows of 16=bandwidth:put_nb_flush:ucx|dart + flush, windows of 16=bandwidth:put_nb_flush:dart", \
    0, "MB/s")
  print ""
  print "### Ping-pong (half a round trip)"
  npp = split("node upn1 upn1.ucx", pp_layouts, " ")
  for (li = 1; li <= npp; li++)
    by_size("ping-pong: dart put_signal + wait, MPI_Send/MPI_Recv, OpenSHMEM put + quiet + flag", "pingpong", pp_layouts[li], 2, \
      "dart=pingpong:put_signal:dart|MPI=pingpong:put_signal:mpi|OpenSHMEM=pingpong:put_signal:shmem", \
      2, "µs")
  print ""
  print "### Active-message bandwidth (dart_am_send + flush vs MPI_Send/MPI_Recv)"
  nam = split("node upn1 upn1.ucx upn1.tcp", am_layouts, " ")
  for (li = 1; li <= nam; li++)
    by_size("active messages to one unit: dart_am_send + dart_am_flush, MPI_Send/MPI_Recv (Open MPI's own transport)", "am", am_layouts[li], 2, \
      "dart=am:stream:dart|MPI=am:stream:mpi", 2, "GB/s")
  print ""
  print "### Atomics"
  for (li = 0; li < 3; li++) {
    lay = li == 2 ? "upn1.ucx" : li ? "upn1" : "node"
    by_size("fetch-and-add", "atomic", lay, 2, "dart=atomic:fetch_add:dart|CPU=atomic:fetch_add:cpu|MPI dynamic=atomic:fetch_add:mpi_dyn|OpenSHMEM=atomic:fetch_add:shmem|dart handles, 16 in flight=atomic:fetch_add:dart_handles|MPI dynamic, 16 per flush=atomic:fetch_add:mpi_dyn_win", li ? 3 : 2, "µs")
    by_size("compare-and-swap", "atomic", lay, 2, "dart=atomic:cas:dart|CPU=atomic:cas:cpu|MPI dynamic=atomic:cas:mpi_dyn|OpenSHMEM=atomic:cas:shmem", li ? 3 : 2, "µs")
  }
  print ""
  print "### GUPS (2^20 words per unit)"
  by_units("GUP/s", "gups", "update", "node", 20, "dart|dart_fetch|mpi_alloc|shm_atomic|shmem", 4, "GUP/s, higher is better")
  by_units("GUP/s", "gups", "update", "upn1", 20, "dart|dart_fetch|mpi_alloc", 3, "GUP/s, higher is better")
  by_units("GUP/s, UCX transport", "gups", "update", "upn1.ucx", 20, "dart|dart_fetch|mpi_alloc|ucx", 4, "GUP/s, higher is better")
  by_units("GUP/s, UCX over TCP", "gups", "update", "upn1.tcp", 20, "dart|dart_fetch|ucx", 3, "GUP/s, higher is better")
  print ""
  print "### Stencil (time per iteration)"
  for (li = 1; li <= nlay; li++) {
    lay = stencil_layouts[li]
    if (UNITS["stencil" SUBSEP lay] == "") continue
    nsz = split("128 512 1024", st, " ")
    for (j = 1; j <= nsz; j++)
      by_units("Jacobi " st[j] "²", "stencil", "jacobi", lay, st[j], "dart|dart_signal|dart_plan|mpi_sendrecv|mpi_isend|mpi_rma", 4, "µs")
  }
  print ""
  print "### Communication plans vs PetscSF (time per call)"
  nlay = split("node upn1 upn1.ucx", plan_layouts, " ")
  for (li = 1; li <= nlay; li++)
    plan_table(plan_layouts[li])
  print ""
  print "### dart_init and dart_exit, MPI initialised by the program"
  by_units("dart_init", "init", "dart_init", "node", 0, "dart|dart_mpi", 2, "ms, median")
  by_units("the first dart_init", "init", "dart_init_first", "node", 0, "dart|dart_mpi", 2, "ms")
  by_units("dart_exit", "init", "dart_exit", "node", 0, "dart|dart_mpi", 2, "ms, median")
  print ""
  print "### Collective allocation (allocate + free)"
  nsz = split("4096 65536 1048576 16777216", st, " ")
  for (j = 1; j <= nsz; j++)
    by_units(human(st[j]) " per unit", "alloc", "alloc_free", "node", st[j], "dart|mpi_shared", 2, "µs")
  if ("coll" in SEEN) {
    print ""
    print "### Collectives (bench_coll: libdart, MPI's call, DART-MPI)"
    for (li = 1; li <= ncoll_lays; li++)
      coll_table(coll_lays[li])
  }
  if ("dash" in SEEN) {
    print ""
    print "### DASH's reductions (bench_dash_reduce: DASH on libdart and on DART-MPI)"
    dash_table()
  }
}
