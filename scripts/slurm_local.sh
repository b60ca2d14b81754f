#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine, for `--slurm` runs and the `slurm` tests.
#
#   bash scripts/slurm_local.sh up       # install (apt, once), start; prints the SLURM_CONF line
#   export SLURM_CONF=/tmp/rsi-hub-slurm/slurm.conf
#   sinfo; sbatch ...; sacct --completion
#   bash scripts/slurm_local.sh down     # stop the daemons (state and logs stay for reading)
#   bash scripts/slurm_local.sh status
#
# What runs (as root, started directly: no systemd, so it works in a container or CI):
#   munged     its own key and socket under the state folder (Slurm's auth/munge + cred/munge:
#              auth/none would let anyone who reaches the ports submit jobs as root)
#   slurmctld  + slurmd on 127.0.0.1, one node with 2 CPUs, partition `debug` (the default)
# Accounting: jobcomp/filetxt, no slurmdbd and no database. Plain `sacct` then answers
# "accounting storage is disabled"; `sacct --completion` (`-c`) reads the job-completion file
# and gives each ended job's JobID, State and ExitCode, which is what rsi-hub records (it falls
# back to `--completion` by itself). slurmdbd would need a MariaDB server, whose start-up alone
# would eat much of the one-minute budget, for nothing `sacct -c` does not answer here.
#
# Environment: RSI_HUB_SLURM_DIR (state folder, default /tmp/rsi-hub-slurm),
# RSI_HUB_SLURM_PORT (slurmctld's port, default 16817; slurmd takes the next one),
# RSI_HUB_SLURM_START_TIMEOUT (seconds for all three daemons to come up, default 45; shutdown
# sends SIGKILL to what is still running 15 s after SIGTERM).
set -euo pipefail

DIR=${RSI_HUB_SLURM_DIR:-/tmp/rsi-hub-slurm}
PORT=${RSI_HUB_SLURM_PORT:-16817}
CONF=$DIR/slurm.conf
# Bounds for all daemons together: start-up (after any install) and shutdown.
START_TIMEOUT=${RSI_HUB_SLURM_START_TIMEOUT:-45}
STOP_TIMEOUT=15
PACKAGES=(slurmctld slurmd slurm-client munge)

log() { echo "slurm_local: $*" >&2; }

install_packages() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  command -v munged >/dev/null || missing+=(munge)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    log "missing ${missing[*]}: install ${PACKAGES[*]} (Debian/Ubuntu, as root)"
    exit 1
  fi
  log "installing ${missing[*]} (apt)"
  # policy-rc.d stops the packages' own services from starting: this script starts the daemons.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

write_config() {
  local host
  host=$(hostname -s)
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/munge"
  chmod 700 "$DIR/munge"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  fi
  chmod 400 "$DIR/munge/munge.key"
  cat >"$CONF" <<EOF
# Written by scripts/slurm_local.sh: a one-node cluster on 127.0.0.1 for rsi-hub's tests.
ClusterName=rsihub-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# No cgroups (containers rarely delegate them): processes tracked through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
# Accounting: the job-completion text file, read by \`sacct --completion\`.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

fail() {
  # $1: the daemon that failed; its log tail says why.
  log "FAILED: $1 did not come up within ${START_TIMEOUT}s of the start; last lines of its log:"
  case $1 in
    munged) tail -n 20 "$DIR/log/munged.log" >&2 || true ;;
    slurmctld) tail -n 20 "$DIR/log/slurmctld.log" >&2 || true ;;
    slurmd) tail -n 20 "$DIR/log/slurmd.log" >&2 || true ;;
  esac
  stop_daemons
  exit 1
}

wait_for() {
  # $1 daemon name, $2 command that succeeds once it is up (before START_DEADLINE).
  until eval "$2" >/dev/null 2>&1; do
    [ $SECONDS -lt "$START_DEADLINE" ] || fail "$1"
    sleep 0.2
  done
}

up() {
  install_packages
  if pid_alive "$DIR/slurmctld.pid" && pid_alive "$DIR/slurmd.pid"; then
    log "already running (SLURM_CONF=$CONF)"
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  stop_daemons
  write_config
  export SLURM_CONF=$CONF
  START_DEADLINE=$((SECONDS + START_TIMEOUT))
  munged --force --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed" || fail munged
  wait_for munged "munge --socket=$DIR/munge/munge.socket -n"
  # -i: ignore saved state from an earlier cluster in this folder (old jobs, old node state).
  slurmctld -i || fail slurmctld
  wait_for slurmctld "scontrol ping | grep -q UP"
  slurmd || fail slurmd
  wait_for slurmd "sinfo -h -o %t | grep -Eq '^(idle|mix|alloc)'"
  log "up: node $(hostname -s), 2 CPUs, partition debug; accounting: sacct --completion"
  echo "export SLURM_CONF=$CONF"
}

stop_daemons() {
  # Each daemon by its own pid file, never by name: other Slurm processes are not ours.
  local name pidfile pid deadline=$((SECONDS + STOP_TIMEOUT))
  for name in slurmd slurmctld munged; do
    pidfile=$DIR/$name.pid
    [ $name = munged ] && pidfile=$DIR/munge/munged.pid
    pid_alive "$pidfile" || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do
      if [ $SECONDS -ge $deadline ]; then
        log "$name (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.1
    done
  done
}

down() {
  if [ -f "$CONF" ] && pid_alive "$DIR/slurmctld.pid"; then
    # Jobs still running would outlive slurmd as orphans; end them first.
    SLURM_CONF=$CONF timeout 10 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  fi
  stop_daemons
  log "down"
}

status() {
  local name pidfile state=0
  for name in munged slurmctld slurmd; do
    pidfile=$DIR/$name.pid
    [ $name = munged ] && pidfile=$DIR/munge/munged.pid
    if pid_alive "$pidfile"; then echo "$name: running (pid $(cat "$pidfile"))"; else
      echo "$name: stopped"
      state=1
    fi
  done
  return $state
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  install) install_packages ;;
  *)
    echo "usage: $0 up|down|status|install" >&2
    exit 2
    ;;
esac
