// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi_latency - what an MPI call costs, OSU style (osu_latency): ranks 0 and 1 ping-pong a
 * message of 0, 8, 1024 and 65536 bytes with MPI_Send/MPI_Recv; the one-way latency is half
 * the round trip.  Then a loop of MPI_Barrier and one of MPI_Allreduce of 8 bytes (one
 * double) on all ranks, for the collective path.  Built once per MPI (bench_mpi_latency_
 * openmpi, bench_mpi_latency_mpich); bench/mpi.sh runs it untraced and traced, side by side.
 *
 *   mpirun -np 2 mpi_latency [ITERS [REPS]]       (defaults: 10000, 11)
 *
 * Each measurement is a loop of ITERS round trips (ITERS / 10 above 8 KiB, as osu_latency
 * does), after ITERS / 10 warm-up ones, repeated REPS times; rank 0 prints the median, min
 * and max over the repetitions, in microseconds:
 *
 *   pingpong 1024 B      median     0.812 us  min     0.790  max     0.950
 *   MPI_Allreduce 8 B    median     1.210 us  min ...
 *
 * Ranks other than 0 and 1 only take part in the collectives.  Must not print from other
 * ranks: bench/mpi.sh parses rank 0's lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Rank 0 prints the median, min and max of v (seconds per operation) in microseconds. */
static void report(int rank, const char *name, double *v, int n)
{
	if (rank != 0)
		return;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("%-20s median %9.3f us  min %9.3f  max %9.3f\n", name, v[n / 2] * 1e6, v[0] * 1e6,
	       v[n - 1] * 1e6);
	fflush(stdout);
}

/* Round trips between ranks 0 and 1; returns the seconds of one of them (rank 0's view). */
static double pingpong(int rank, char *buf, int size, long iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < iters; i++) {
		if (rank == 0) {
			MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / (double)iters;
}

/* A collective loop: 0 = MPI_Barrier, 1 = MPI_Allreduce of one double; seconds per call. */
static double collective(int which, long iters)
{
	double in = 1.0, out = 0.0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < iters; i++) {
		if (which == 0)
			MPI_Barrier(MPI_COMM_WORLD);
		else
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	return (MPI_Wtime() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long iters = argc > 1 ? atol(argv[1]) : 10000;
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	if (reps < 1)
		reps = 1;
	if (reps > MAX_REPS)
		reps = MAX_REPS;
	if (iters < 10)
		iters = 10;
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_latency: needs 2 ranks (mpirun -np 2)\n");
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		char version[MPI_MAX_LIBRARY_VERSION_STRING];
		int len = 0;
		MPI_Get_library_version(version, &len);
		version[strcspn(version, "\n,")] = '\0';
		for (char *c = version; *c; c++)
			if (*c == '\t')
				*c = ' ';
		printf("# mpi_latency: %d ranks, %s; %ld iterations (%ld above 8 KiB), %d "
		       "repetitions\n",
		       size, version, iters, iters / 10, reps);
	}

	static const int sizes[] = {0, 8, 1024, 65536};
	char *buf = calloc(1, 65536);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	double v[MAX_REPS];
	char name[64];
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		long n = sizes[s] > 8192 ? iters / 10 : iters;
		pingpong(rank, buf, sizes[s], n / 10); /* warm-up */
		for (int r = 0; r < reps; r++)
			v[r] = pingpong(rank, buf, sizes[s], n) / 2; /* one way */
		snprintf(name, sizeof(name), "pingpong %d B", sizes[s]);
		report(rank, name, v, reps);
	}
	for (int which = 0; which < 2; which++) {
		collective(which, iters / 10);
		for (int r = 0; r < reps; r++)
			v[r] = collective(which, iters);
		report(rank, which == 0 ? "MPI_Barrier" : "MPI_Allreduce 8 B", v, reps);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
