//go:build mpi

// The binding's C half: each call wraps one MPI call (or the few that make
// one step) so that Go passes plain values and never names an MPI macro.

#include <sched.h>
#include <string.h>

#include "ttl.h"

ttl_out ttl_res;

MPI_Comm ttl_world(void) { return MPI_COMM_WORLD; }
int ttl_any_source(void) { return MPI_ANY_SOURCE; }

int ttl_init(void) {
	int ok, provided;
	MPI_Initialized(&ok);
	if (ok) return MPI_SUCCESS;
	int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
	if (err != MPI_SUCCESS) return err;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

int ttl_finalize(void) {
	int f;
	MPI_Finalized(&f);
	return f ? MPI_SUCCESS : MPI_Finalize();
}

int ttl_error_string(int code, char *buf) {
	int n = 0;
	if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS) return 0;
	return n;
}

int ttl_rank(MPI_Comm c) {
	int r = 0;
	MPI_Comm_rank(c, &r);
	return r;
}

int ttl_size(MPI_Comm c) {
	int n = 0;
	MPI_Comm_size(c, &n);
	return n;
}

int ttl_barrier(MPI_Comm c) { return MPI_Barrier(c); }

int ttl_allreduce_int(MPI_Comm c, int x) {
	return MPI_Allreduce(&x, &ttl_res.sum, 1, MPI_INT, MPI_SUM, c);
}

int ttl_comm_dup(MPI_Comm c, MPI_Comm *d) {
	int err = MPI_Comm_dup(c, d);
	if (err != MPI_SUCCESS) return err;
	return MPI_Comm_set_errhandler(*d, MPI_ERRORS_RETURN);
}

int ttl_comm_create_group(MPI_Comm c, int n, const int *ranks, int tag, MPI_Comm *d) {
	MPI_Group g, sub;
	int err = MPI_Comm_group(c, &g);
	if (err != MPI_SUCCESS) return err;
	err = MPI_Group_incl(g, n, ranks, &sub);
	MPI_Group_free(&g);
	if (err != MPI_SUCCESS) return err;
	err = MPI_Comm_create_group(c, sub, tag, d);
	MPI_Group_free(&sub);
	if (err != MPI_SUCCESS) return err;
	return MPI_Comm_set_errhandler(*d, MPI_ERRORS_RETURN);
}

// ttl_test polls *r up to spins times (MPI_Test), yielding the CPU every
// 64 polls so that oversubscribed ranks let the others run, as MPI's own
// blocking calls do when oversubscribed;
// ttl_res.done is set when it completed, ttl_res.source its sender.
int ttl_test(MPI_Request *r, int spins) {
	MPI_Status st;
	for (int i = 1; i <= spins; i++) {
		int err = MPI_Test(r, &ttl_res.done, &st);
		if (err != MPI_SUCCESS || ttl_res.done) {
			if (ttl_res.done) ttl_res.source = st.MPI_SOURCE;
			return err;
		}
		if ((i & 63) == 0) sched_yield();
	}
	return MPI_SUCCESS;
}

int ttl_cancel(MPI_Request *r) {
	int err = MPI_Cancel(r);
	if (err != MPI_SUCCESS) return err;
	return MPI_Request_free(r);
}

int ttl_iallgather(void *send, int size, void *recv, MPI_Comm c, MPI_Request *r) {
	return MPI_Iallgather(send, size, MPI_BYTE, recv, size, MPI_BYTE, c, r);
}

int ttl_isend(void *buf, int n, int dest, int tag, MPI_Comm c, MPI_Request *r) {
	return MPI_Isend(buf, n, MPI_BYTE, dest, tag, c, r);
}

int ttl_irecv(void *buf, int n, int source, int tag, MPI_Comm c, MPI_Request *r) {
	return MPI_Irecv(buf, n, MPI_BYTE, source, tag, c, r);
}

int ttl_iprobe(MPI_Comm c, int source, int tag) {
	MPI_Status st;
	int err = MPI_Iprobe(source, tag, c, &ttl_res.flag, &st);
	if (err == MPI_SUCCESS && ttl_res.flag) {
		ttl_res.source = st.MPI_SOURCE;
		err = MPI_Get_count(&st, MPI_BYTE, &ttl_res.count);
	}
	return err;
}

// ttl_win_allocate allocates n bytes (zeroed) in a window over c, with
// errors returned, and opens a passive-target epoch to every rank.
int ttl_win_allocate(MPI_Aint n, MPI_Comm c, void **base, MPI_Win *w) {
	int err = MPI_Win_allocate(n, 1, MPI_INFO_NULL, c, base, w);
	if (err != MPI_SUCCESS) return err;
	memset(*base, 0, n);
	if ((err = MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return err;
	return MPI_Win_lock_all(0, *w);
}

int ttl_win_free(MPI_Win *w) {
	int err = MPI_Win_unlock_all(*w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_free(w);
}

// One-sided access, flushed: the data are there (get) or in the target's
// memory (put) when it returns, in one cgo call.
int ttl_get(void *dst, int n, int rank, MPI_Aint disp, MPI_Win w) {
	int err = MPI_Get(dst, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_flush(rank, w);
}

int ttl_put(void *src, int n, int rank, MPI_Aint disp, MPI_Win w) {
	int err = MPI_Put(src, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_flush(rank, w);
}
