//go:build mpi

// The data network's point-to-point path (datanet.go says how it works).

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ttl.h"

// ttl_dn_new makes the C side of a data network on c with packets of pkt
// bytes, its receives started, at *h.
int ttl_dn_new(MPI_Comm c, int pkt, uintptr_t *h) {
	ttl_dn *d = calloc(1, sizeof *d);
	if (d == NULL) return TTL_ENOMEM;
	*h = (uintptr_t)d;
	d->comm = c;
	d->pkt = pkt;
	for (int i = 0; i < DN_SEND; i++) d->send[i] = MPI_REQUEST_NULL;
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < DN_RECV; i++) d->recv[n][i] = MPI_REQUEST_NULL;
	d->rbuf[0] = calloc(DN_RECV, pkt);
	d->rbuf[1] = calloc(DN_RECV, pkt);
	d->sbuf = calloc(DN_SEND, pkt);
	d->out = calloc(1, pkt);
	if (!d->rbuf[0] || !d->rbuf[1] || !d->sbuf || !d->out) return TTL_ENOMEM;
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < DN_RECV; i++) {
			int err = MPI_Recv_init(d->rbuf[n] + i * pkt, pkt, MPI_BYTE, MPI_ANY_SOURCE, n, c, &d->recv[n][i]);
			if (err == MPI_SUCCESS) err = MPI_Start(&d->recv[n][i]);
			if (err != MPI_SUCCESS) return err;
		}
	return MPI_SUCCESS;
}

ttl_dn *ttl_dn_fields(uintptr_t h) { return (ttl_dn *)h; }

// restart restarts the receives Go has taken.
static int restart(ttl_dn *d) {
	for (int k = 0; k < 2; k++) {
		if (!d->taken[k]) continue;
		int h = d->head[k];
		if ((d->err = MPI_Start(&d->recv[k][h])) != MPI_SUCCESS) return DN_ERR;
		d->taken[k] = 0;
		d->head[k] = (h + 1) % DN_RECV;
	}
	return 0;
}

// testsome tests both networks' heads (those not done) in one
// MPI_Testsome, which runs MPI's progress engine once if neither has
// completed, and returns DN_NONE when neither has. A head tested and found
// pending is fresh: the next Recv for its network (the other one of the
// same poll, say) makes no call.
static int testsome(ttl_dn *d) {
	MPI_Request r[2];
	for (int k = 0; k < 2; k++) r[k] = d->done[k] ? MPI_REQUEST_NULL : d->recv[k][d->head[k]];
	int n, idx[2];
	MPI_Status st[2];
	if ((d->err = MPI_Testsome(2, r, &n, idx, st)) != MPI_SUCCESS) return DN_ERR;
	if (n == MPI_UNDEFINED) return 0; // both heads are done already
	for (int k = 0; k < 2; k++) d->fresh[k] = !d->done[k];
	for (int j = 0; j < n; j++) {
		int k = idx[j];
		d->done[k] = 1;
		d->fresh[k] = 0;
		d->src[k] = st[j].MPI_SOURCE;
	}
	return n ? 0 : DN_NONE;
}

// ttl_dn_send sends the n bytes at out to dst with tag, from the next
// buffer of the ring; DN_NONE when that buffer's last send has not
// completed yet. Then it tests both networks, as the poll that follows a
// send would (am's sends poll), so that poll makes no call of its own.
int ttl_dn_send(uintptr_t h, int n, int dst, int tag) {
	ttl_dn *d = (ttl_dn *)h;
	int i = d->next, done = 1;
	if (d->send[i] != MPI_REQUEST_NULL && (d->err = MPI_Test(&d->send[i], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return DN_ERR;
	if (!done) return DN_NONE;
	char *b = d->sbuf + i * d->pkt;
	memcpy(b, d->out, n);
	if ((d->err = MPI_Isend(b, n, MPI_BYTE, dst, tag, d->comm, &d->send[i])) != MPI_SUCCESS) return DN_ERR;
	d->next = (i + 1) % DN_SEND;
	if (restart(d)) return DN_ERR;
	return testsome(d) == DN_ERR ? DN_ERR : 0;
}

// ttl_dn_test tests for a packet on net (and on the other network in the
// same call); DN_NONE when there is none on net.
int ttl_dn_test(uintptr_t h, int net) {
	ttl_dn *d = (ttl_dn *)h;
	if (restart(d) || testsome(d) == DN_ERR) return DN_ERR;
	return d->done[net] ? 0 : DN_NONE;
}

// ttl_dn_spin tests up to n times for a packet on either network, and
// returns whether one has come: the wait of an endpoint spins here, one
// cgo call for many tests (MPI_Testsome does not test again after its
// progress, so a test in a loop sees what the last one progressed).
int ttl_dn_spin(uintptr_t h, int n) {
	ttl_dn *d = (ttl_dn *)h;
	if (restart(d)) return DN_ERR;
	if (d->done[0] || d->done[1]) return 1;
	for (int k = 0; k < n; k++) {
		int i = testsome(d);
		if (i == DN_ERR) return DN_ERR;
		if (i != DN_NONE) return 1;
	}
	return 0;
}

// ttl_dn_get and ttl_dn_put are a small get or put through small, each
// flushed: no Go pointer crosses, so cgo checks none.
int ttl_dn_get(uintptr_t h, int n, int rank, MPI_Aint disp, MPI_Win w) {
	ttl_dn *d = (ttl_dn *)h;
	int err = MPI_Get(d->small, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	return err != MPI_SUCCESS ? err : MPI_Win_flush(rank, w);
}

int ttl_dn_put(uintptr_t h, int n, int rank, MPI_Aint disp, MPI_Win w) {
	ttl_dn *d = (ttl_dn *)h;
	int err = MPI_Put(d->small, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	return err != MPI_SUCCESS ? err : MPI_Win_flush(rank, w);
}

// ttl_node_all reports whether every rank of c shares this one's memory
// (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED: one node).
int ttl_node_all(MPI_Comm c, int *all) {
	MPI_Comm node;
	int n, k, err = MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	if (err != MPI_SUCCESS) return err;
	MPI_Comm_size(c, &n);
	MPI_Comm_size(node, &k);
	*all = n == k;
	return MPI_Comm_free(&node);
}

// ttl_dn_shared allocates n bytes of memory every rank of c (one node)
// maps: rank 0's part of an MPI_Win_allocate_shared window (the others'
// are empty), at base here.
int ttl_dn_shared(MPI_Aint n, MPI_Comm c, void **base, MPI_Win *w) {
	int rank;
	MPI_Comm_rank(c, &rank);
	void *mine;
	int err = MPI_Win_allocate_shared(rank == 0 ? n : 0, 1, MPI_INFO_NULL, c, &mine, w);
	if (err != MPI_SUCCESS) return err;
	if ((err = MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return err;
	MPI_Aint len;
	int unit;
	return MPI_Win_shared_query(*w, 0, &len, &unit, base);
}

// ttl_dn_nap waits up to us microseconds for a packet on either network,
// testing and yielding the CPU in turn, as MPI's own waits do when ranks
// outnumber CPUs: no sleep and wake-up through Go's scheduler, which
// under load took milliseconds for a locked thread.
int ttl_dn_nap(uintptr_t h, int us) {
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int k = ttl_dn_spin(h, 1);
		if (k != 0) return k;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= us * 1000L) return 0;
	}
}

// ttl_dn_pending tests every send in flight and returns how many are.
int ttl_dn_pending(uintptr_t h) {
	ttl_dn *d = (ttl_dn *)h;
	int n = 0;
	for (int i = 0; i < DN_SEND; i++) {
		int done = 1;
		if (d->send[i] == MPI_REQUEST_NULL) continue;
		if ((d->err = MPI_Test(&d->send[i], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return DN_ERR;
		n += !done;
	}
	return n;
}

// ttl_dn_close cancels the sends still in flight and the receives still
// started, and frees them.
void ttl_dn_close(uintptr_t h) {
	ttl_dn *d = (ttl_dn *)h;
	for (int i = 0; i < DN_SEND; i++)
		if (d->send[i] != MPI_REQUEST_NULL) {
			MPI_Cancel(&d->send[i]);
			MPI_Request_free(&d->send[i]);
		}
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < DN_RECV; i++) {
			if (d->recv[n][i] == MPI_REQUEST_NULL) continue;
			if (!(i == d->head[n] && (d->done[n] || d->taken[n]))) MPI_Cancel(&d->recv[n][i]);
			MPI_Request_free(&d->recv[n][i]);
		}
}
