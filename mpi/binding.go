//go:build mpi

package mpi

// The binding: only the MPI calls this project uses, each a thin wrapper
// that returns MPI's error as a Go error (the communicators use
// MPI_ERRORS_RETURN, so MPI never aborts the job on its own). Buffers of
// nonblocking calls are C memory (Alloc): MPI keeps them until the request
// completes, which the cgo rules forbid for Go memory.
//
// Threads: Init locks the calling goroutine to its OS thread for good;
// every later call must come from that goroutine (the PE's, like every
// *papers.PE method), so MPI sees one thread, and Init asks for
// MPI_THREAD_SINGLE, as a C program's MPI_Init does. (The Go runtime's
// other threads never call MPI. FUNNELED would make OpenMPI take its
// internal locks on every call: a ping-pong 30% slower.)

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm ttl_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm ttl_comm_null(void) { return MPI_COMM_NULL; }
static MPI_Request ttl_request_null(void) { return MPI_REQUEST_NULL; }
static int ttl_any_source(void) { return MPI_ANY_SOURCE; }

// ttl_out holds what calls return through pointers, in C memory: a Go
// variable whose address cgo passes escapes to the heap, one allocation a
// call. Every call comes from the one MPI thread, so one is enough.
typedef struct { int done, source, flag, count, sum; } ttl_out;
ttl_out ttl_res;

static int ttl_init(void) {
	int ok, provided;
	MPI_Initialized(&ok);
	if (ok) return MPI_SUCCESS;
	int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
	if (err != MPI_SUCCESS) return err;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int ttl_allreduce_int(MPI_Comm c, int x) {
	return MPI_Allreduce(&x, &ttl_res.sum, 1, MPI_INT, MPI_SUM, c);
}

static int ttl_finalized(void) { int f; MPI_Finalized(&f); return f; }

static int ttl_error_string(int code, char *buf) {
	int n = 0;
	MPI_Error_string(code, buf, &n);
	return n;
}

// ttl_test polls *r up to spins times (MPI_Test), yielding the CPU every
// 64 polls so that oversubscribed ranks let the others run, as MPI's own
// blocking calls do when oversubscribed;
// ttl_res.done is set when it completed, ttl_res.source its sender.
static int ttl_test(MPI_Request *r, int spins) {
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

// One-sided access, flushed: the data are there (get) or in the target's
// memory (put) when it returns, in one cgo call.
static int ttl_get(void *dst, int n, int rank, MPI_Aint disp, MPI_Win w) {
	int err = MPI_Get(dst, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_flush(rank, w);
}

static int ttl_put(void *src, int n, int rank, MPI_Aint disp, MPI_Win w) {
	int err = MPI_Put(src, n, MPI_BYTE, rank, disp, n, MPI_BYTE, w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_flush(rank, w);
}

// ttl_win_allocate allocates n bytes (zeroed) in a window over c, with
// errors returned, and opens a passive-target epoch to every rank.
static int ttl_win_allocate(MPI_Aint n, MPI_Comm c, void **base, MPI_Win *w) {
	int err = MPI_Win_allocate(n, 1, MPI_INFO_NULL, c, base, w);
	if (err != MPI_SUCCESS) return err;
	memset(*base, 0, n);
	if ((err = MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return err;
	return MPI_Win_lock_all(0, *w);
}

static int ttl_win_free(MPI_Win *w) {
	int err = MPI_Win_unlock_all(*w);
	if (err != MPI_SUCCESS) return err;
	return MPI_Win_free(w);
}

static int ttl_iprobe(MPI_Comm c, int source, int tag) {
	MPI_Status st;
	int err = MPI_Iprobe(source, tag, c, &ttl_res.flag, &st);
	if (err == MPI_SUCCESS && ttl_res.flag) {
		ttl_res.source = st.MPI_SOURCE;
		MPI_Get_count(&st, MPI_BYTE, &ttl_res.count);
	}
	return err;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Error is an error MPI returned: the call and MPI's own message.
type Error struct {
	Call string
	Code int
}

func (e *Error) Error() string {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	n := C.ttl_error_string(C.int(e.Code), &buf[0])
	return fmt.Sprintf("mpi: %s: %s", e.Call, C.GoStringN(&buf[0], n))
}

func check(call string, code C.int) error {
	if code == C.MPI_SUCCESS {
		return nil
	}
	return &Error{Call: call, Code: int(code)}
}

// Init initialises MPI (once; later calls do nothing) on the calling
// goroutine, which it locks to its OS thread for good: every MPI call must
// come from it.
func Init() error {
	runtime.LockOSThread()
	return check("MPI_Init_thread", C.ttl_init())
}

// Finalize ends MPI. No MPI call may follow.
func Finalize() error {
	if C.ttl_finalized() != 0 {
		return nil
	}
	return check("MPI_Finalize", C.MPI_Finalize())
}

// Abort ends every process of the job with code (MPI_Abort).
func Abort(code int) { C.MPI_Abort(C.ttl_world(), C.int(code)) }

// Wtime is MPI's clock, in seconds.
func Wtime() float64 { return float64(C.MPI_Wtime()) }

// Comm is a communicator.
type Comm struct{ c C.MPI_Comm }

// Barrier and AllreduceInt are MPI's blocking MPI_Barrier and
// MPI_Allreduce (MPI_SUM of one int) over c — the calls of the anchor
// mpi_collectives.c — for the benchmarks to run beside the engine's in one
// process. The engine never calls them: a blocking call has no deadline.
func (c Comm) Barrier() error { return check("MPI_Barrier", C.MPI_Barrier(c.c)) }

// AllreduceInt: see Barrier.
func (c Comm) AllreduceInt(x int) (int, error) {
	err := check("MPI_Allreduce", C.ttl_allreduce_int(c.c, C.int(x)))
	return int(C.ttl_res.sum), err
}

// World is MPI_COMM_WORLD.
func World() Comm { return Comm{C.ttl_world()} }

// Rank is this process's rank in c.
func (c Comm) Rank() int {
	var r C.int
	C.MPI_Comm_rank(c.c, &r)
	return int(r)
}

// Size is the number of processes in c.
func (c Comm) Size() int {
	var n C.int
	C.MPI_Comm_size(c.c, &n)
	return int(n)
}

// Dup duplicates c (MPI_Comm_dup: collective over c), with errors
// returned.
func (c Comm) Dup() (Comm, error) {
	var d C.MPI_Comm
	if err := check("MPI_Comm_dup", C.MPI_Comm_dup(c.c, &d)); err != nil {
		return Comm{}, err
	}
	return Comm{d}, check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(d, C.MPI_ERRORS_RETURN))
}

// Subset returns the communicator of c's ranks in ranks (ascending),
// MPI_Comm_create_group: collective over those ranks only, told apart by
// tag.
func (c Comm) Subset(ranks []int, tag int) (Comm, error) {
	var g, sub C.MPI_Group
	if err := check("MPI_Comm_group", C.MPI_Comm_group(c.c, &g)); err != nil {
		return Comm{}, err
	}
	defer C.MPI_Group_free(&g)
	r := make([]C.int, len(ranks))
	for i, k := range ranks {
		r[i] = C.int(k)
	}
	if err := check("MPI_Group_incl", C.MPI_Group_incl(g, C.int(len(r)), unsafe.SliceData(r), &sub)); err != nil {
		return Comm{}, err
	}
	defer C.MPI_Group_free(&sub)
	var d C.MPI_Comm
	if err := check("MPI_Comm_create_group", C.MPI_Comm_create_group(c.c, sub, C.int(tag), &d)); err != nil {
		return Comm{}, err
	}
	return Comm{d}, check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(d, C.MPI_ERRORS_RETURN))
}

// Request is a pending nonblocking operation.
type Request struct{ r C.MPI_Request }

// Test polls r up to spins times; done reports completion, and source the
// sender of a completed receive.
func (r *Request) Test(spins int) (done bool, source int, err error) {
	err = check("MPI_Test", C.ttl_test(&r.r, C.int(spins)))
	return C.ttl_res.done != 0, int(C.ttl_res.source), err
}

// Cancel cancels a pending point-to-point request (MPI_Cancel) and frees
// it. Nonblocking collectives cannot be cancelled (MPI-3 §5.12): their
// requests are abandoned with the communicator (see docs/mpi.md).
func (r *Request) Cancel() error {
	if err := check("MPI_Cancel", C.MPI_Cancel(&r.r)); err != nil {
		return err
	}
	return check("MPI_Request_free", C.MPI_Request_free(&r.r))
}

// Iallgather starts an allgather of size bytes per rank from send into
// recv (Size()*size bytes; both C memory).
func (c Comm) Iallgather(send unsafe.Pointer, size int, recv unsafe.Pointer) (Request, error) {
	var r Request
	return r, check("MPI_Iallgather", C.MPI_Iallgather(send, C.int(size), C.MPI_BYTE, recv, C.int(size), C.MPI_BYTE, c.c, &r.r))
}

// Isend starts sending n bytes at buf (C memory) to rank dest with tag.
func (c Comm) Isend(buf unsafe.Pointer, n, dest, tag int) (Request, error) {
	var r Request
	return r, check("MPI_Isend", C.MPI_Isend(buf, C.int(n), C.MPI_BYTE, C.int(dest), C.int(tag), c.c, &r.r))
}

// AnySource receives from any rank (Irecv, Iprobe).
var AnySource = int(C.ttl_any_source())

// Irecv starts receiving up to n bytes into buf (C memory) from rank
// source (or AnySource) with tag.
func (c Comm) Irecv(buf unsafe.Pointer, n, source, tag int) (Request, error) {
	var r Request
	return r, check("MPI_Irecv", C.MPI_Irecv(buf, C.int(n), C.MPI_BYTE, C.int(source), C.int(tag), c.c, &r.r))
}

// Iprobe reports whether a message with tag from source (or AnySource)
// waits, and if so its sender and length in bytes.
func (c Comm) Iprobe(source, tag int) (ok bool, from, n int, err error) {
	err = check("MPI_Iprobe", C.ttl_iprobe(c.c, C.int(source), C.int(tag)))
	return C.ttl_res.flag != 0, int(C.ttl_res.source), int(C.ttl_res.count), err
}

// Alloc returns n bytes of C memory for the buffers of nonblocking calls.
// Free releases them.
func Alloc(n int) []byte {
	return unsafe.Slice((*byte)(C.calloc(C.size_t(max(n, 1)), 1)), n)
}

// Free releases memory from Alloc.
func Free(b []byte) { C.free(unsafe.Pointer(unsafe.SliceData(b))) }

// Win is a window of memory the other ranks reach with Get and Put.
type Win struct{ w C.MPI_Win }

// WinAllocate allocates n bytes, zeroed, in a window over c (collective:
// MPI_Win_allocate, then MPI_Win_lock_all for passive-target access) and
// returns them; they are C memory, freed by Free.
func (c Comm) WinAllocate(n int) ([]byte, Win, error) {
	var base unsafe.Pointer
	var w Win
	if err := check("MPI_Win_allocate", C.ttl_win_allocate(C.MPI_Aint(max(n, 1)), c.c, &base, &w.w)); err != nil {
		return nil, w, err
	}
	return unsafe.Slice((*byte)(base), n), w, nil
}

// Free ends the access epoch and frees the window (collective).
func (w *Win) Free() error { return check("MPI_Win_free", C.ttl_win_free(&w.w)) }

// Get copies len(dst) bytes at disp in rank's part of the window into dst
// (C memory or Go memory without pointers: MPI is done with it on return),
// flushed.
func (w Win) Get(dst []byte, rank, disp int) error {
	return check("MPI_Get", C.ttl_get(unsafe.Pointer(unsafe.SliceData(dst)), C.int(len(dst)), C.int(rank), C.MPI_Aint(disp), w.w))
}

// Put copies src to disp in rank's part of the window, flushed.
func (w Win) Put(src []byte, rank, disp int) error {
	return check("MPI_Put", C.ttl_put(unsafe.Pointer(unsafe.SliceData(src)), C.int(len(src)), C.int(rank), C.MPI_Aint(disp), w.w))
}
