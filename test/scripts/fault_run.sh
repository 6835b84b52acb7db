#!/usr/bin/env bash
# fault_run.sh STATUS FAULT UNIT TIMEOUT LAUNCHER [ARGS...]
#
# Runs "LAUNCHER --timeout TIMEOUT ARGS... TAG" (TAG: a word unique to this
# run, which the program ignores; the program prints "unit U pid P job J"
# for each unit) and checks that the job
#  - ended on its own, not by the launcher's timeout;
#  - exited with STATUS ("nonzero": any status but 0);
#  - named the unit UNIT that failed: FAULT "abort": dart_abort's line
#    "unit UNIT aborts the job with STATUS"; "signal": the launcher's
#    message on the process that died, which names its rank (Open MPI) or
#    its pid (MPICH's hydra); "signal-any": such a message on some unit of
#    the job (hydra names the first process it reaps, which after a SIGKILL
#    is as often one it ended itself); "none": nothing to check;
#  - left no process behind whose command line holds TAG (the launcher's,
#    mpiexec's and the units');
#  - left no file in /dev/shm that names its Open MPI job id J (Open MPI's
#    shared memory) and no System V shared memory segment that one of its
#    units created.
# Other jobs may run at the same time, so files are attributed by job id
# and segments by creator pid, never by time. What this job left is removed
# after it has been reported.
set -uo pipefail

if [[ $# -lt 5 ]]; then
  echo "usage: fault_run.sh STATUS FAULT UNIT TIMEOUT LAUNCHER [ARGS...]" >&2
  exit 2
fi
want_status="$1"
fault="$2"
unit="$3"
time_limit="$4"
launcher="$5"
shift 5

tag="dart-fault-$$-$RANDOM$RANDOM"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
failed=0
fail() {
  echo "fault_run: FAIL: $*"
  failed=1
}

start=$SECONDS
"$launcher" --timeout "$time_limit" "$@" "$tag" >"$out" 2>&1
status=$?
elapsed=$((SECONDS - start))
cat "$out"
echo "fault_run: exit status $status after about ${elapsed}s"

# timeout(1) exits with 124, or with 137 when its SIGKILL was needed; a job
# that runs until the limit was ended by it, whatever the status
if [[ $status == 124 ]] || ((elapsed >= time_limit)); then
  fail "the launcher's timeout ended the job"
elif [[ $want_status == nonzero ]]; then
  [[ $status != 0 ]] || fail "exit status 0, expected a failure"
elif [[ $status != "$want_status" ]]; then
  fail "exit status $status, expected $want_status"
fi

# the units' pids and Open MPI job id, as the program printed them
mapfile -t pids < <(sed -n 's/^unit [0-9]* pid \([0-9]*\).*/\1/p' "$out")
job="$(sed -n 's/^unit [0-9]* pid [0-9]* job \([0-9]*\)$/\1/p' "$out" |
       head -n 1)"
victim_pid="$(sed -n "s/^unit $unit pid \([0-9]*\).*/\1/p" "$out")"

case "$fault" in
  abort) pattern="unit $unit aborts the job with $want_status" ;;
  signal)
    # Open MPI: "process rank K ... exited on signal", or, where a
    # sanitizer turned the signal into an exit status, "Process name:
    # [[job,step],K]"; MPICH's hydra: "PID P"
    pattern="[Rr]ank $unit([^0-9]|\$)|\[\[[0-9]+,[0-9]+\],$unit\]"
    [[ -n $victim_pid ]] && pattern+="|PID $victim_pid([^0-9]|\$)" ;;
  signal-any)
    pattern="[Rr]ank [0-9]+ .*signal"
    for p in "${pids[@]}"; do pattern+="|PID $p([^0-9]|\$)"; done ;;
  *) pattern="" ;;
esac
if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$out"; then
  fail "no line of the output names unit $unit: none matches '$pattern'"
fi

# Processes the job left: the launcher has returned, so the kernel may
# still be tearing some down (they disappear within moments); one that is
# still there after 10 s is an orphan. Zombies (state Z) have ended: their
# reaping is up to their new parent. The tag reaches awk through the
# environment, not on its command line.
survivors() {
  ps -eo pid=,stat=,args= |
    TAG="$tag" awk 'index($0, ENVIRON["TAG"]) && $2 !~ /^Z/'
}
left=""
for _ in $(seq 50); do
  left="$(survivors)"
  [[ -z $left ]] && break
  sleep 0.2
done
if [[ -n $left ]]; then
  fail "processes of the job are still running:"
  echo "$left"
  # ours to end: one by one, by pid
  while read -r p _; do kill -KILL "$p" 2>/dev/null; done <<<"$left"
fi

# Open MPI names its shared-memory files with the job id in hexadecimal:
# vader_segment.<host>.<uid>.<job>.<rank>, osc_sm.<host>.<job>.<...>.
if [[ -n $job ]]; then
  hex="$(printf '%x' "$job")"
  mapfile -t files < <(ls -1 /dev/shm 2>/dev/null | grep -F ".$hex.")
  if [[ ${#files[@]} -gt 0 ]]; then
    fail "/dev/shm has files of the job (Open MPI job id $hex):"
    printf '  %s\n' "${files[@]}"
    for f in "${files[@]}"; do rm -f "/dev/shm/$f"; done
  fi
fi
if [[ ${#pids[@]} -gt 0 ]] && command -v ipcs >/dev/null; then
  # ipcs -m -p: shmid, owner, creator pid, last pid
  segs="$(ipcs -m -p 2>/dev/null | awk -v list=" ${pids[*]} " \
            '$1 ~ /^[0-9]+$/ && index(list, " " $3 " ") { print $1 }')"
  if [[ -n $segs ]]; then
    fail "System V shared memory segments of the job remain: $segs"
    for s in $segs; do ipcrm -m "$s" 2>/dev/null; done
  fi
fi

if [[ $failed == 0 ]]; then
  echo "fault_run: PASSED"
fi
exit $failed
