/* MPI's figures for the TCP data network to stand beside, run with
 * mpirun --mca btl tcp,self --mca osc ^sm,ucx (BenchmarkVsGoTCP,
 * BenchmarkAllToAll). Rank 0 prints one "NAME VALUE" line each:
 *   mpirun -np 2 mpi_tcp RTS
 *     rt_us            8-byte MPI_Send/MPI_Recv ping-pong, per round trip (RTS of them)
 *     put_MBps SIZE    MPI_Put of SIZE bytes to rank 1's window, flushed each time
 *     get_MBps SIZE    MPI_Get of SIZE bytes from rank 1's window, flushed each time
 *                      (SIZE 64 KiB, 1 MiB, 16 MiB; 64 MiB or 4 blocks in all)
 *   mpirun -np N mpi_tcp ITERS a2a
 *     a2a_us           each rank gets 8 bytes from every other, then MPI_Win_flush_all,
 *                      per all-to-all (ITERS of them) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (16L << 20)

static double one_sided(int get, char *buf, long sz, int m, MPI_Win win) {
  double t = 0;
  for (int i = -1; i < m; i++) { /* one untimed */
    if (i == 0) t = MPI_Wtime();
    if (get) MPI_Get(buf, sz, MPI_BYTE, 1, 0, sz, MPI_BYTE, win);
    else MPI_Put(buf, sz, MPI_BYTE, 1, 0, sz, MPI_BYTE, win);
    MPI_Win_flush(1, win);
  }
  return sz * (double)m / (MPI_Wtime() - t) / 1e6;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
  int it = argc > 1 ? atoi(argv[1]) : 2000;
  int a2a = argc > 2 && !strcmp(argv[2], "a2a");
  double t = 0;
  char *base; MPI_Win win;
  if (a2a) {
    long *words = calloc(n, sizeof(long));
    MPI_Win_allocate(sizeof(long), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < it; i++) {
      for (int k = 0; k < n; k++)
        if (k != r) MPI_Get(&words[k], 8, MPI_BYTE, k, 0, 8, MPI_BYTE, win);
      MPI_Win_flush_all(win);
    }
    if (!r) printf("a2a_us %.3f\n", (MPI_Wtime() - t) / it * 1e6);
    MPI_Win_unlock_all(win);
  } else {
    long msg = 42;
    for (int i = 0; i < it + it / 10; i++) {
      if (i == it / 10) t = MPI_Wtime();
      if (r == 0) { MPI_Send(&msg, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD); MPI_Recv(&msg, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else if (r == 1) { MPI_Recv(&msg, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&msg, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD); }
    }
    if (!r) printf("rt_us %.3f\n", (MPI_Wtime() - t) / it * 1e6);
    char *buf = malloc(MAX_BYTES);
    memset(buf, 1, MAX_BYTES);
    MPI_Win_allocate(MAX_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    if (!r)
      for (long sz = 64 << 10; sz <= MAX_BYTES; sz *= 16) {
        int m = (int)((64L << 20) / sz);
        if (m < 4) m = 4;
        printf("put_MBps %ld %.1f\n", sz, one_sided(0, buf, sz, m, win));
        printf("get_MBps %ld %.1f\n", sz, one_sided(1, buf, sz, m, win));
      }
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
