/* MPI's counterparts of the data network's benchmarks, between ranks 0
 * and 1 (more ranks only wait): an 8-byte ping-pong (round_trip_us, per
 * round trip), a stream of 8-byte sends (send_us, per message), an 8-byte
 * MPI_Get and MPI_Put on a window each completed with MPI_Win_flush
 * (get_us, put_us, per operation), and the bandwidth of flushed puts and
 * gets from 64 bytes to 1 MiB by fours ("put_bw_MBps size=N",
 * "get_bw_MBps size=N", 10^6 bytes/s). Rank 0
 * prints one "NAME VALUE" line each.
 *
 * Usage: mpirun -np 2 datanet ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_BYTES (1L << 20)

static double ping_pong(int rank, long iters)
{
	long word = 0;
	double start = 0;

	for (long i = -iters / 10; i < iters; i++) {
		if (i == 0)
			start = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(&word, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&word, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(&word, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&word, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - start) / iters;
}

/* stream: the receiver's last message ends the timing, so the time is what
 * a message costs in a pipeline (overhead and gap), not its latency. */
static double stream(int rank, long iters)
{
	long word = 0;
	double start;

	MPI_Barrier(MPI_COMM_WORLD);
	start = MPI_Wtime();
	for (long i = 0; i < iters; i++) {
		if (rank == 0)
			MPI_Send(&word, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(&word, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	return (MPI_Wtime() - start) / iters;
}

/* one_sided times reps flushed transfers of bytes to or from rank 1's
 * window, in seconds per transfer. */
static double one_sided(int get, char *buf, long bytes, long reps, MPI_Win win)
{
	double start = MPI_Wtime();

	for (long i = 0; i < reps; i++) {
		if (get)
			MPI_Get(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
		else
			MPI_Put(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
		MPI_Win_flush(1, win);
	}
	return (MPI_Wtime() - start) / reps;
}

int main(int argc, char **argv)
{
	int rank, size;
	long iters = argc > 1 ? atol(argv[1]) : 0;
	double rt, send;
	char *base, *buf;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || iters < 10) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 datanet ITERS (2 ranks or more, ITERS >= 10)\n");
		MPI_Finalize();
		return 2;
	}
	rt = ping_pong(rank, iters);
	send = stream(rank, iters);
	if (rank == 0)
		printf("round_trip_us %.3f\nsend_us %.3f\n", rt * 1e6, send * 1e6);

	buf = malloc(MAX_BYTES);
	if (buf == NULL) {
		fprintf(stderr, "datanet: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Win_allocate(MAX_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_lock_all(0, win);
	if (rank == 0) {
		printf("get_us %.3f\n", one_sided(1, buf, 8, iters / 10, win) * 1e6);
		printf("put_us %.3f\n", one_sided(0, buf, 8, iters / 10, win) * 1e6);
		for (long bytes = 64; bytes <= MAX_BYTES; bytes *= 4) {
			long reps = bytes < 64 * 1024 ? iters / 10 : iters / 100 + 1;
			printf("put_bw_MBps size=%ld %.1f\n", bytes, bytes / one_sided(0, buf, bytes, reps, win) / 1e6);
			printf("get_bw_MBps size=%ld %.1f\n", bytes, bytes / one_sided(1, buf, bytes, reps, win) / 1e6);
		}
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	free(buf);
	MPI_Finalize();
	return 0;
}
