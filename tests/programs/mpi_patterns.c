// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi_patterns - the MPI communication patterns of tests/e2e/mpi.sh, each with a known
 * ground truth that every rank prints at the end:
 *   "truth RANK sends=N send_bytes=B recvs=N recv_bytes=B colls=N"
 * (point-to-point messages this rank sent and received, collective calls it made).
 *   1. ping-pong between ranks 0 and 1 (MPI_Send/MPI_Recv, 10 round trips, 1 KiB)
 *   2. a ring: each rank sends to the next and receives from the previous (MPI_Sendrecv)
 *   3. non-blocking exchange with every other rank (MPI_Isend/MPI_Irecv, MPI_Waitall),
 *      the receives posted with MPI_ANY_SOURCE
 *   4. every collective family on COMM_WORLD
 *   5. MPI_Comm_split into even and odd ranks, a ping inside each half, an allreduce there
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long sends, send_bytes, recvs, recv_bytes, colls;

static void sent(long bytes)
{
	sends++;
	send_bytes += bytes;
}

static void got(long bytes)
{
	recvs++;
	recv_bytes += bytes;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char buf[4096], rbuf[4096 * 16];
	memset(buf, rank, sizeof(buf));

	/* 1. ping-pong */
	for (int i = 0; i < 10 && size > 1; i++) {
		if (rank == 0) {
			MPI_Send(buf, 1024, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
			sent(1024);
			MPI_Recv(rbuf, 1024, MPI_CHAR, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			got(1024);
		} else if (rank == 1) {
			MPI_Recv(rbuf, 1024, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			got(1024);
			MPI_Send(buf, 1024, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
			sent(1024);
		}
	}

	/* 2. ring */
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	MPI_Sendrecv(buf, 100, MPI_INT, next, 21, rbuf, 100, MPI_INT, prev, 21, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	sent(400);
	got(400);

	/* 3. non-blocking all-to-all by hand */
	MPI_Request req[64];
	int n = 0;
	for (int p = 0; p < size && n < 62; p++) {
		if (p == rank)
			continue;
		MPI_Irecv(rbuf + 64 * p, 64, MPI_CHAR, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD,
			  &req[n++]);
	}
	for (int p = 0; p < size && n < 62; p++) {
		if (p == rank)
			continue;
		MPI_Isend(buf, 8 * (rank + 1), MPI_CHAR, p, 33, MPI_COMM_WORLD, &req[n++]);
		sent(8 * (rank + 1));
	}
	MPI_Status st[64];
	MPI_Waitall(n, req, st);
	for (int i = 0; i < size - 1; i++) {
		int c;
		MPI_Get_count(&st[i], MPI_CHAR, &c);
		got(c);
	}

	/* 4. collectives */
	int v = rank, r = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Bcast(buf, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Reduce(&v, &r, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Gather(buf, 16, MPI_CHAR, rbuf, 16, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Scatter(buf, 16, MPI_CHAR, rbuf, 16, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Allgather(buf, 16, MPI_CHAR, rbuf, 16, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Alltoall(buf, 16, MPI_CHAR, rbuf, 16, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Scan(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Request creq;
	MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &creq);
	MPI_Wait(&creq, MPI_STATUS_IGNORE);
	colls += 10;

	/* 5. split */
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	if (hs > 1) {
		if (hr == 0) {
			MPI_Send(buf, 50, MPI_CHAR, 1, 5, half);
			sent(50);
		} else if (hr == 1) {
			MPI_Recv(rbuf, 50, MPI_CHAR, 0, 5, half, MPI_STATUS_IGNORE);
			got(50);
		}
	}
	MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, half);
	colls += 1;
	MPI_Comm_free(&half);

	printf("truth %d sends=%ld send_bytes=%ld recvs=%ld recv_bytes=%ld colls=%ld\n", rank,
	       sends, send_bytes, recvs, recv_bytes, colls);
	MPI_Finalize();
	return 0;
}
