// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi_kill - a rank killed in the middle of a run (tests/e2e/mpi-kill.sh).  Run with 4 ranks:
 *   rank 2 sends N messages to rank 3 (MPI_Send, tag i, 100 + i bytes), each acknowledged
 *     by rank 3 (MPI_Recv), prints "rank 2 sent N", leaves a marker "dying" (libtrace's
 *     annotations: link with -ltrace-annotate), then dies of SIGKILL;
 *   rank 3 receives and acknowledges them, then blocks in a receive that never comes;
 *   ranks 0 and 1 play 10 rounds of ping-pong, then block in MPI_Barrier.
 * The launcher is expected to kill the blocked ranks; should it not, alarm() ends them
 * after a minute, so that no rank outlives the test.  usage: mpi_kill [N]
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libtrace/annotate.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 25;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "mpi_kill: run it with 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank != 2)
		alarm(60);
	char buf[4096] = {0};
	int ack = 0;
	if (rank == 2) {
		for (int i = 0; i < n; i++) {
			MPI_Send(buf, 100 + i, MPI_CHAR, 3, i, MPI_COMM_WORLD);
			MPI_Recv(&ack, 1, MPI_INT, 3, 1000 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		printf("rank 2 sent %d\n", n);
		fflush(stdout);
		ltr_marker("dying");
		raise(SIGKILL);
	} else if (rank == 3) {
		for (int i = 0; i < n; i++) {
			MPI_Recv(buf, sizeof(buf), MPI_CHAR, 2, i, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			ack = i;
			MPI_Send(&ack, 1, MPI_INT, 2, 1000 + i, MPI_COMM_WORLD);
		}
		MPI_Recv(buf, sizeof(buf), MPI_CHAR, 2, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		int peer = 1 - rank;
		for (int i = 0; i < 10; i++) {
			if (rank == 0) {
				MPI_Send(buf, 64, MPI_CHAR, peer, 7, MPI_COMM_WORLD);
				MPI_Recv(buf, 64, MPI_CHAR, peer, 8, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, 64, MPI_CHAR, peer, 7, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(buf, 64, MPI_CHAR, peer, 8, MPI_COMM_WORLD);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize(); /* not reached: rank 2 never comes */
	return 0;
}
