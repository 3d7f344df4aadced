#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Hostile programs run exactly as untraced and leave complete traces: one recovers from its
# own SIGSEGVs with siglongjmp, one blocks every signal in its threads.  (Closing every
# descriptor: fdclose.sh; closing stderr: outdir.sh.)
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/in"
n=1000
same_behaviour segv "$TESTBIN/hostile" segv $n
summary=$($CHECK "$WORK/segv.trace" --threads 1 --counter-seq between_faults=$n --no-lost) ||
	fail "segv: $summary"
same_behaviour blocked "$TESTBIN/hostile" blocked $n
summary=$($CHECK "$WORK/blocked.trace" --threads 5 --counter-seq blocked=$n@4 --joined-all --no-lost \
	--calls pthread_mutex_lock=$((4 * n)) --calls pthread_mutex_unlock=$((4 * n))) ||
	fail "blocked: $summary"
echo ok
