#!/usr/bin/env bash
# jpu-share local executor: runs one attempt of a job and records how it
# ended in the attempt's directory, so the result outlives a server restart.
# Usage: attempt.sh ATTEMPT_DIR LIMIT_SECONDS GRACE_SECONDS RUN_AS_UID \
#          [NO_CONTAINER_MESSAGE CONTAINER_COMMAND...]
# stdout and stderr are already the job's log. With a container command
# (apptainer exec … IMAGE) the job runs inside it.
#
# This script runs with the server's privileges, in an environment the
# server fixed (PATH, LANG and the JPU_* settings below): nothing of it
# comes from the job. The job's own variables are in ATTEMPT_DIR/env
# (NUL-separated KEY=VALUE), read here and applied by `env -i` only after
# the privilege drop, so BASH_ENV, LD_PRELOAD, PATH and the like steer the
# job itself and nothing else (policy §8).
#   JPU_OUTPUT_DIR  the job's working directory
#   JPU_CG_JOIN     cgroup.procs files the job joins, colon-separated
#   JPU_CG_OOM      the file with the job cgroup's oom_kill count
#   JPU_CG_KILL     its cgroup.kill, written once the job is over
#   JPU_ENTER       the server's binary, whose `__enter-job` makes the
#                   namespaces below (server/src/executor/enter.rs)
#   JPU_NETNS=1     a network namespace with only loopback (brought up)
#   JPU_PIDNS=1     a PID namespace of its own
#   JPU_GID         the primary group to run with (default: RUN_AS_UID)
#   JPU_GROUPS      supplementary groups, comma-separated (default: none)
#   JPU_FSIZE       the job's file-size limit (ulimit -f, KiB): no file
#                   it writes outgrows the output limit between checks
#   JPU_PRIVATE     bytes: a fresh tmpfs of this size (the job's RAM
#                   limit) for each of /tmp, /var/tmp, /dev/shm and
#                   /run/lock, in an IPC namespace and a mount namespace
#                   of the job's own (their pages count against its
#                   memory limit; all of it goes when its last process
#                   ends)
# The server also made ATTEMPT_DIR/output, the FIFO the log relay reads.
set -u
umask 077
# descriptors the server inherited (and did not mark close-on-exec) are
# no business of the job's: only stdin, stdout and stderr go on
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null; fi
done
dir=$1 limit=$2 grace=$3 uid=$4
shift 4
container=()
if [ $# -gt 0 ]; then
  missing=$1
  shift
  container=("$@")
fi

# Each attempt costs this host about a dozen processes, and each one
# more is measurable in the submit load (2 cores): nothing here spawns
# what bash or the server can do. The markers take none: the clock is bash's own (date where bash is older than 5), and a
# marker is one printf of one line, which the server counts only once
# its newline is there (no temp file and mv).
now_ms() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    ms=${EPOCHREALTIME/[.,]/}
    ms=${ms:0:13}
  else
    ms=$(date +%s%3N)
  fi
}
# exit status, end time and the cgroup's OOM kills; then nothing of the
# job may be left running
finish() {
  now_ms
  oom=0
  if [ -n "${JPU_CG_OOM:-}" ] && [ -r "$JPU_CG_OOM" ]; then
    while read -r key value; do [ "$key" = oom_kill ] && oom=$value; done <"$JPU_CG_OOM"
  fi
  if [ -n "${JPU_CG_KILL:-}" ]; then echo 1 >"$JPU_CG_KILL"; fi 2>/dev/null
  printf '%s %s %s\n' "$1" "$ms" "$oom" >"$dir/exit"
  exit 0
}

jobenv=()
if [ -f "$dir/env" ]; then
  mapfile -d '' -t jobenv <"$dir/env"
  # emptied without a process; the server removes the file at the end
  : >"$dir/env"
fi
run=(env -i PATH=/usr/local/bin:/usr/bin:/bin "HOME=$JPU_OUTPUT_DIR" LANG=C.UTF-8 "${jobenv[@]}")

isolate=()
if [ "$EUID" = 0 ]; then
  # the job's namespaces, loopback up and private scratch: one process
  # (the server's own binary), still root, right before the drop
  if [ "${JPU_NETNS:-}${JPU_PIDNS:-}${JPU_PRIVATE:-}" ]; then isolate+=("$JPU_ENTER" __enter-job); fi
  groups=(--clear-groups)
  if [ -n "${JPU_GROUPS:-}" ]; then groups=(--groups="$JPU_GROUPS"); fi
  isolate+=(setpriv --reuid="$uid" --regid="${JPU_GID:-$uid}" "${groups[@]}" --no-new-privs --inh-caps=-all --bounding-set=-all --)
fi

cd "$JPU_OUTPUT_DIR" || finish 1
if [ ${#container[@]} -gt 0 ] && ! command -v "${container[0]}" >/dev/null; then
  echo "$missing"
  finish 127
fi

inner=("${container[@]}" bash /dev/fd/3)
if [ "${JPU_PIDNS:-}" = 1 ]; then
  # The namespace's first process (as the user). A SIGTERM (cancel, time
  # limit) reaches the job's process group from `timeout`; this passes it
  # on to the processes that left the group (setsid, double forks) — so
  # each process gets exactly one — and when it ends the kernel kills all
  # that is left in the namespace. It reads /proc itself: no process is
  # spawned to signal.
  init='forward() {
  read -r own </proc/1/stat; own=${own##*) }; set -- $own; group=$3
  for stat in /proc/[0-9]*/stat; do
    read -r line <"$stat" 2>/dev/null || continue
    pid=${stat#/proc/}; pid=${pid%/stat}; rest=${line##*) }; set -- $rest
    if [ "$pid" != 1 ] && [ "$3" != "$group" ]; then kill -TERM "$pid" 2>/dev/null; fi
  done
}
trap forward TERM INT HUP
"$@" </dev/null &
child=$!
exec 3<&-
while :; do wait "$child" 2>/dev/null; rc=$?; kill -0 "$child" 2>/dev/null || exit "$rc"; done'
  inner=(bash -c "$init" jpu-init "${inner[@]}")
fi

# The job writes into a pipe, never into the log itself: with the log's
# descriptor it could truncate it or seek over the server's lines. This
# relay (root, outside the job's cgroup and namespaces) appends what comes
# through and marks any line the job starts with the server's own tag, so
# a line beginning `[jpu-share]` is always the server's. It reads whatever
# is there (no waiting for a newline, so progress bars stay live), holding
# back at most the few bytes at a line start that could still become the
# tag.
relay='use strict; binmode STDIN; binmode STDOUT;
my $tag = "[jpu-share]"; my ($start, $held) = (1, "");
sub put { my $s = shift; while (length $s) { my $n = syswrite(STDOUT, $s); last unless defined $n; substr($s, 0, $n) = ""; } }
while (1) {
  my $n = sysread(STDIN, my $buf, 65536);
  next if !defined $n && $!{EINTR};
  last if !$n;
  my $lead = ($start || length $held) ? "\n" : "";
  my $s = $lead . $held . $buf; $held = "";
  $s =~ s/\n\Q$tag\E/\n[job] $tag/g;
  if ($s =~ /\n([^\n]{1,10})\z/ && index($tag, $1) == 0) { $held = $1; substr($s, -length $held) = ""; }
  $s = substr($s, length $lead);
  $start = length($s) ? substr($s, -1) eq "\n" : $start;
  put($s);
}
put($held);'
relay_pid=
out=1
if [ -n "$uid" ] && [ "$EUID" = 0 ] && [ -p "$dir/output" ] && command -v perl >/dev/null; then
  perl -e "$relay" <"$dir/output" &
  relay_pid=$!
  # the wrapper holds a writer too, so the relay ends even if the job
  # never starts
  exec 4>"$dir/output"
  out=4
fi

now_ms
printf '%s\n' "$ms" >"$dir/started"
# timeout makes its own process group: SIGTERM to it reaches the whole job,
# and after the grace it sends SIGKILL (time limit and cancel alike).
# The script is opened here (as root) and read by the job through the open
# descriptor, so the job need not be able to reach the attempt directory.
exec 3<"$dir/script.sh" || finish 1
(
  cgroups=${JPU_CG_JOIN:-}
  for procs in ${cgroups//:/ }; do
    if ! echo "$BASHPID" >"$procs"; then
      echo "[jpu-share] cannot move the job into its cgroup ($procs): it does not run"
      exit 125
    fi
  done
  if [ -n "${JPU_FSIZE:-}" ]; then ulimit -f "$JPU_FSIZE" || exit 125; fi
  exec timeout --kill-after="${grace}s" "${limit}s" "${isolate[@]}" "${run[@]}" "${inner[@]}" </dev/null >&"$out" 2>&1
) &
child=$!
exec 3<&-
if [ -n "$relay_pid" ]; then exec 4>&-; fi
printf '%s\n' "$child" >"$dir/pid"
# quietly: bash would report a killed job ("… Killed timeout …") into the
# job's log; the server ends the log with one plain line instead
wait "$child" 2>/dev/null
rc=$?
# everything the job wrote is in the log before its end is recorded
if [ -n "$relay_pid" ]; then wait "$relay_pid" 2>/dev/null; fi
finish $rc
