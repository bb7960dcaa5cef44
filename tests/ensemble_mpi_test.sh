#!/usr/bin/env bash
# `shoal ensemble` under mpirun with 1, 2 and 4 ranks: each summary says the
# rank count it got (so a launcher of another MPI, which would start N
# separate one-rank jobs, fails here), and the rows equal those of forked
# workers. Usage: ensemble_mpi_test.sh SHOAL MPIEXEC SOURCE_DIR OUT_DIR
set -euo pipefail
shoal=$1 mpiexec=$2 src=$3 out=$4
mkdir -p "$out"
flags=()
# Open MPI runs as root only when asked (CI runs as root), and refuses more
# ranks than cores without --oversubscribe; MPICH needs neither.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
version=$("$mpiexec" --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* || $version == *open-mpi* ]]; then
  flags=(--oversubscribe)
fi
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
plan=("$src/scenarios/tiny.json" --seeds 1-6 --steps 40 --set "vehicle.max_speed=12,20" --quiet)
"$shoal" ensemble "${plan[@]}" --workers 2 --out "$out/forked.jsonl" --json > "$out/forked.json"
for np in 1 2 4; do
  "$mpiexec" "${flags[@]}" -np "$np" "$shoal" ensemble "${plan[@]}" --out "$out/np$np.jsonl" --json \
    > "$out/np$np.json"
  ranks=$(sed -n 's/.*"ranks":\([0-9]*\).*/\1/p' "$out/np$np.json")
  if [ "$ranks" != "$np" ]; then
    echo "mpirun -np $np: the ensemble saw $ranks ranks" >&2
    exit 1
  fi
  if ! cmp -s "$out/forked.jsonl" "$out/np$np.jsonl"; then
    echo "mpirun -np $np: rows differ from the forked workers'" >&2
    diff "$out/forked.jsonl" "$out/np$np.jsonl" | head -5 >&2
    exit 1
  fi
  echo "np $np: $ranks ranks, $(wc -l < "$out/np$np.jsonl") rows as the forked workers'"
done
