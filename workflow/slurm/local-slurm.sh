#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing the workflow on a real Slurm
# (tests/workflow_runs_the_same_on_slurm.sh): munged, slurmctld and slurmd on localhost, their
# configuration, state, logs and pid files under $JOJ_SLURM_DIR (default /run/joj-slurm), the
# system's own Slurm configuration left alone. Needs root and Debian's slurmctld, slurmd,
# slurm-client and munge (scripts/setup.sh installs them).
# Usage: workflow/slurm/local-slurm.sh start|stop|status|env|dir
#   start   writes slurm.conf, starts the three daemons, waits until the node is idle
#   stop    stops what start started (by the pid files it wrote), and only that
#   env     prints `export SLURM_CONF=…`: client commands (sbatch, squeue, snakemake's Slurm
#           executor) must read this cluster's configuration
#   dir     prints the folder of its configuration, state and logs
# A job's own srun (Snakemake's jobs run one) reads the default /etc/slurm/slurm.conf: start
# links it to this configuration when there is none, and stop removes that link (only it); a
# machine with a Slurm configuration of its own is refused rather than changed.
set -euo pipefail
dir=${JOJ_SLURM_DIR:-/run/joj-slurm}
conf=$dir/slurm.conf
export SLURM_CONF=$conf

need() {
  for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    command -v "$tool" >/dev/null 2>&1 || {
      echo "local-slurm: $tool is not installed; fix: apt-get install slurmctld slurmd slurm-client munge (scripts/setup.sh does)" >&2
      exit 1
    }
  done
  [ "$(id -u)" -eq 0 ] || { echo "local-slurm: needs root (the daemons run as root here)" >&2; exit 1; }
}

# A pid file's process, if it is still that daemon.
alive() {
  local pidfile=$1 name=$2 pid
  # (munged removes its pid file as it exits: the file may go between the test and the read.)
  pid=$(cat "$pidfile" 2>/dev/null) && [ -n "$pid" ] || return 1
  [ -d "/proc/$pid" ] && grep -q "$name" "/proc/$pid/comm" 2>/dev/null
}

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  cat > "$conf" <<CONF
# Written by workflow/slurm/local-slurm.sh: one node, this machine.
ClusterName=joj-local
SlurmctldHost=$host
SlurmctldPort=6917
SlurmdPort=6918
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
# Finished jobs stay visible to squeue for an hour: Snakemake's executor asks squeue.
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem TmpDisk=100000 State=UNKNOWN
PartitionName=joj Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
  need
  write_conf
  if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$conf" ]; then
    :
  elif [ -e /etc/slurm/slurm.conf ]; then
    echo "local-slurm: /etc/slurm/slurm.conf exists (this machine has a Slurm of its own); fix: use that cluster (workflow/profiles/slurm), or move it away" >&2
    exit 1
  else
    mkdir -p /etc/slurm
    ln -s "$conf" /etc/slurm/slurm.conf
  fi
  if ! alive "$dir/munged.pid" munged; then
    [ -s /etc/munge/munge.key ] || { mkdir -p /etc/munge; mungekey --create --keyfile /etc/munge/munge.key 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; chmod 400 /etc/munge/munge.key; }
    munged --force --socket "$dir/munge/munge.socket" --pid-file "$dir/munged.pid" \
      --log-file "$dir/munged.log" --seed-file "$dir/munge/munge.seed" --key-file /etc/munge/munge.key
  fi
  alive "$dir/slurmctld.pid" slurmctld || slurmctld -f "$conf"
  alive "$dir/slurmd.pid" slurmd || slurmd -f "$conf"
  local host i
  host=$(hostname -s)
  for i in $(seq 1 60); do
    if sinfo -h -n "$host" -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
      echo "local-slurm: node $host up (SLURM_CONF=$conf)" >&2
      return 0
    fi
    sleep 1
  done
  echo "local-slurm: the node did not come up in 60 s; see $dir/slurmctld.log and $dir/slurmd.log" >&2
  sinfo >&2 || true
  exit 1
}

stop() {
  local d
  for d in slurmd slurmctld munged; do
    if alive "$dir/$d.pid" "$d"; then
      kill "$(cat "$dir/$d.pid")"
      for _ in $(seq 1 50); do alive "$dir/$d.pid" "$d" || break; sleep 0.1; done
    fi
    rm -f "$dir/$d.pid"
  done
  if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$conf" ]; then
    rm -f /etc/slurm/slurm.conf
  fi
  echo "local-slurm: stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) for d in munged slurmctld slurmd; do alive "$dir/$d.pid" "$d" && echo "$d up" || echo "$d down"; done ;;
  env) echo "export SLURM_CONF=$conf" ;;
  dir) echo "$dir" ;;
  *) echo "usage: $0 start|stop|status|env|dir" >&2; exit 2 ;;
esac
