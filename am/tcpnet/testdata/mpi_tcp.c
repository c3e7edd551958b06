/* MPI's figures for the TCP data network to stand beside, run with
 * mpirun --mca btl tcp,self -np 2 (BenchmarkVsMPI):
 *   rt_us N          8-byte MPI_Send/MPI_Recv ping-pong, per round trip (N round trips)
 *   put_MBps SIZE N  MPI_Put of SIZE bytes to rank 1's window, flushed each time (N puts) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int it = argc > 1 ? atoi(argv[1]) : 20000;
  long msg = 42; double t = 0;
  for (int i = 0; i < it + it / 10; i++) {
    if (i == it / 10) t = MPI_Wtime();
    if (r == 0) { MPI_Send(&msg, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD); MPI_Recv(&msg, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
    else { MPI_Recv(&msg, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&msg, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD); }
  }
  if (!r) printf("rt_us %.3f\n", (MPI_Wtime() - t) / it * 1e6);
  const long maxb = 1 << 20;
  char *base, *buf = malloc(maxb + 16) + 16; MPI_Win win;
  MPI_Win_allocate(maxb, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock_all(0, win);
  if (!r)
    for (long sz = 4096; sz <= maxb; sz *= 4) {
      int m = (int)(((long)it * 4096) / sz / 4) + 8;
      MPI_Put(buf, sz, MPI_BYTE, 1, 0, sz, MPI_BYTE, win); MPI_Win_flush(1, win);
      t = MPI_Wtime();
      for (int i = 0; i < m; i++) { MPI_Put(buf, sz, MPI_BYTE, 1, 0, sz, MPI_BYTE, win); MPI_Win_flush(1, win); }
      printf("put_MBps %ld %.1f\n", sz, sz * (double)m / (MPI_Wtime() - t) / 1e6);
    }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
