#!/usr/bin/env bash
# A single-node Slurm cluster for the grader's tests, with its own configuration and state in DIR:
#   slurm_cluster.sh start DIR     starts munged, slurmctld and slurmd; waits until the node is idle
#   slurm_cluster.sh stop DIR      stops them
# Needs root and Debian's slurm-wlm and munge. Prints the SLURM_CONF to use.
set -euo pipefail
action=$1
dir=$(realpath -m "$2")
conf=$dir/slurm.conf

stop() {
  for pidfile in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  sleep 1
}

if [ "$action" = stop ]; then
  stop
  exit 0
fi

mkdir -p "$dir"/{state,spool,munge,log}
chmod 700 "$dir/munge"
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$conf" <<CONF
ClusterName=cudalab-test
SlurmctldHost=$(hostname -s)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# A finished job's record is kept 4 s (Slurm's default: 300 s), so that sbatch --wait asks every 2 s
# instead of waiting 2, 8, 32 s ... between questions (it waits longer only while that is under
# half this age): the test's jobs take seconds.
MinJobAge=4
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$(hostname -s) CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

stop
munged --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" --force
export SLURM_CONF=$conf
slurmctld -f "$conf" -i
slurmd -f "$conf"
for _ in $(seq 60); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then
    echo "SLURM_CONF=$conf"
    exit 0
  fi
  sleep 1
done
echo "slurm_cluster: the node did not become idle; see $dir/log" >&2
exit 1
