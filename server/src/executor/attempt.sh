#!/usr/bin/env bash
# jpu-share local executor: runs one attempt of a job and records how it
# ended in the attempt's directory, so the result outlives a server restart.
# Usage: attempt.sh ATTEMPT_DIR LIMIT_SECONDS GRACE_SECONDS RUN_AS_UID \
#          [NO_CONTAINER_MESSAGE CONTAINER_COMMAND...]
# stdout and stderr are already the job's log; the job's env is set. With
# a container command (apptainer exec … IMAGE) the job runs inside it.
set -u
dir=$1 limit=$2 grace=$3 uid=$4
shift 4
container=()
if [ $# -gt 0 ]; then
  missing=$1
  shift
  container=("$@")
fi

# Each attempt costs this host a dozen processes; the markers below take
# none: the clock is bash's own (date where bash is older than 5), and a
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
finish() {
  now_ms
  printf '%s %s\n' "$1" "$ms" >"$dir/exit"
  exit 0
}

isolate=()
if [ "$EUID" = 0 ]; then
  if unshare --net true 2>/dev/null; then
    isolate+=(unshare --net --)
  else
    echo "[jpu-share] no network namespace could be created here: this job HAS network access"
  fi
  isolate+=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --)
else
  echo "[jpu-share] the server does not run as root: this job runs as $(id -un), not as its user, and HAS network access"
fi

cd "$JOB_OUTPUT_DIR" || finish 1
if [ ${#container[@]} -gt 0 ] && ! command -v "${container[0]}" >/dev/null; then
  echo "$missing"
  finish 127
fi
now_ms
printf '%s\n' "$ms" >"$dir/started"
# timeout makes its own process group: SIGTERM to it reaches the whole job,
# and after the grace it sends SIGKILL (time limit and cancel alike).
# the script is opened here (as root) and read by the job through the open
# descriptor, so the job need not be able to reach the attempt directory
exec 3<"$dir/script.sh" || finish 1
timeout --kill-after="${grace}s" "${limit}s" "${isolate[@]}" "${container[@]}" bash /dev/fd/3 </dev/null &
child=$!
exec 3<&-
printf '%s\n' "$child" >"$dir/pid"
wait "$child"
finish $?
