/* The collectives papersctl bench and the mpi package's benchmarks put
 * beside the board's: every rank times ITERS barriers, 4-byte integer
 * sums (MPI_Allreduce) and 1-byte broadcasts from rank 0, after a tenth as
 * many untimed ones; rank 0 prints the mean over the ranks of each rank's
 * time per operation, in µs, one "NAME VALUE" line each.
 *
 * Usage: mpirun -np N collectives ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BARRIER, ALLREDUCE, BCAST };

static void op(int which)
{
	int one = 1, sum;
	unsigned char byte = 7;

	switch (which) {
	case BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case ALLREDUCE:
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		break;
	case BCAST:
		MPI_Bcast(&byte, 1, MPI_BYTE, 0, MPI_COMM_WORLD);
		break;
	}
}

int main(int argc, char **argv)
{
	static const char *const name[] = {"barrier_us", "allreduce_int_us", "bcast_byte_us"};
	int rank, size;
	long iters = argc > 1 ? atol(argv[1]) : 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (iters < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: collectives ITERS (ITERS >= 1)\n");
		MPI_Finalize();
		return 2;
	}
	for (int which = BARRIER; which <= BCAST; which++) {
		double start, mine, total;

		for (long i = 0; i < iters / 10; i++)
			op(which);
		start = MPI_Wtime();
		for (long i = 0; i < iters; i++)
			op(which);
		mine = (MPI_Wtime() - start) / iters;
		MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%s %.3f\n", name[which], total / size * 1e6);
	}
	MPI_Finalize();
	return 0;
}
