//go:build mpi

package mpi

// The binding: only the MPI calls this project uses, each a thin wrapper
// (binding.c) that returns MPI's error as a Go error (the communicators use
// MPI_ERRORS_RETURN, so MPI never aborts the job on its own). Buffers of
// nonblocking calls are C memory (alloc): MPI keeps them until the request
// completes, which the cgo rules forbid for Go memory.
//
// Threads: initMPI locks the calling goroutine to its OS thread for good;
// every later call must come from that goroutine (the PE's, like every
// *papers.PE method), so MPI sees one thread, and it asks for
// MPI_THREAD_SINGLE, as a C program's MPI_Init does. (The Go runtime's
// other threads never call MPI. FUNNELED would make Open MPI take its
// internal locks on every call: a ping-pong 30% slower.)
//
// Which MPI: lib_openmpi.go or lib_mpich.go, by build tag. The C is
// compiled with warnings on; CI adds -Werror.

/*
#cgo CFLAGS: -Wall -Wextra
#include <stdlib.h>
#include "ttl.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// mpiError is an error MPI returned: the call and MPI's code, or
// TTL_ENOMEM for a C allocation that failed.
type mpiError struct {
	call string
	code int
}

func (e *mpiError) Error() string {
	if e.code == C.TTL_ENOMEM {
		return fmt.Sprintf("mpi: %s: out of memory", e.call)
	}
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	n := C.ttl_error_string(C.int(e.code), &buf[0])
	return fmt.Sprintf("mpi: %s: %s", e.call, C.GoStringN(&buf[0], n))
}

func check(call string, code C.int) error {
	if code == C.MPI_SUCCESS {
		return nil
	}
	return &mpiError{call: call, code: int(code)}
}

// initMPI initialises MPI (once; later calls do nothing) on the calling
// goroutine, which it locks to its OS thread for good: every MPI call must
// come from it. The library's defaults (lib_*.go) are set first.
func initMPI() error {
	runtime.LockOSThread()
	libraryDefaults()
	return check("MPI_Init_thread", C.ttl_init())
}

// finalize ends MPI. No MPI call may follow.
func finalize() error { return check("MPI_Finalize", C.ttl_finalize()) }

// comm is a communicator.
type comm struct{ c C.MPI_Comm }

// world is MPI_COMM_WORLD.
func world() comm { return comm{C.ttl_world()} }

// rank is this process's rank in c.
func (c comm) rank() int { return int(C.ttl_rank(c.c)) }

// size is the number of processes in c.
func (c comm) size() int { return int(C.ttl_size(c.c)) }

// barrier and allreduceInt are MPI's blocking MPI_Barrier and
// MPI_Allreduce (MPI_SUM of one int) over c, for the benchmark to run
// beside the engine's collectives in one process (export_test.go). The
// engine never calls them: a blocking call has no deadline.
func (c comm) barrier() error { return check("MPI_Barrier", C.ttl_barrier(c.c)) }

// allreduceInt: see barrier.
func (c comm) allreduceInt(x int) (int, error) {
	err := check("MPI_Allreduce", C.ttl_allreduce_int(c.c, C.int(x)))
	return int(C.ttl_res.sum), err
}

// dup duplicates c (MPI_Comm_dup: collective over c), with errors
// returned.
func (c comm) dup() (comm, error) {
	var d comm
	return d, check("MPI_Comm_dup", C.ttl_comm_dup(c.c, &d.c))
}

// subset returns the communicator of c's ranks in ranks (ascending),
// MPI_Comm_create_group: collective over those ranks only, told apart by
// tag.
func (c comm) subset(ranks []int, tag int) (comm, error) {
	r := make([]C.int, len(ranks))
	for i, k := range ranks {
		r[i] = C.int(k)
	}
	var d comm
	return d, check("MPI_Comm_create_group", C.ttl_comm_create_group(c.c, C.int(len(r)), unsafe.SliceData(r), C.int(tag), &d.c))
}

// request is a pending nonblocking operation.
type request struct{ r C.MPI_Request }

// test polls r up to spins times; done reports completion, and source the
// sender of a completed receive.
func (r *request) test(spins int) (done bool, source int, err error) {
	err = check("MPI_Test", C.ttl_test(&r.r, C.int(spins)))
	return C.ttl_res.done != 0, int(C.ttl_res.source), err
}

// cancel cancels a pending point-to-point request (MPI_Cancel) and frees
// it. Nonblocking collectives cannot be cancelled (MPI-3 §5.12): their
// requests are abandoned with the communicator (see docs/mpi.md).
func (r *request) cancel() error { return check("MPI_Cancel", C.ttl_cancel(&r.r)) }

// iallgather starts an allgather of size bytes per rank from send into
// recv (size()*size bytes; both C memory).
func (c comm) iallgather(send unsafe.Pointer, size int, recv unsafe.Pointer) (request, error) {
	var r request
	return r, check("MPI_Iallgather", C.ttl_iallgather(send, C.int(size), recv, c.c, &r.r))
}

// isend starts sending n bytes at buf (C memory) to rank dest with tag.
func (c comm) isend(buf unsafe.Pointer, n, dest, tag int) (request, error) {
	var r request
	return r, check("MPI_Isend", C.ttl_isend(buf, C.int(n), C.int(dest), C.int(tag), c.c, &r.r))
}

// anySource receives from any rank (irecv, iprobe).
var anySource = int(C.ttl_any_source())

// irecv starts receiving up to n bytes into buf (C memory) from rank
// source (or anySource) with tag.
func (c comm) irecv(buf unsafe.Pointer, n, source, tag int) (request, error) {
	var r request
	return r, check("MPI_Irecv", C.ttl_irecv(buf, C.int(n), C.int(source), C.int(tag), c.c, &r.r))
}

// iprobe reports whether a message with tag from source (or anySource)
// waits, and if so its sender and length in bytes.
func (c comm) iprobe(source, tag int) (ok bool, from, n int, err error) {
	err = check("MPI_Iprobe", C.ttl_iprobe(c.c, C.int(source), C.int(tag)))
	return C.ttl_res.flag != 0, int(C.ttl_res.source), int(C.ttl_res.count), err
}

// alloc returns n bytes of zeroed C memory for the buffers of nonblocking
// calls; free releases them.
func alloc(n int) ([]byte, error) {
	p := C.calloc(C.size_t(max(n, 1)), 1)
	if p == nil {
		return nil, fmt.Errorf("mpi: out of memory: %d bytes of C memory for MPI's buffers", n)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// free releases memory from alloc.
func free(b []byte) { C.free(unsafe.Pointer(unsafe.SliceData(b))) }

// win is a window of memory the other ranks reach with get and put.
type win struct{ w C.MPI_Win }

// winAllocate allocates n bytes, zeroed, in a window over c (collective:
// MPI_Win_allocate, then MPI_Win_lock_all for passive-target access) and
// returns them; they are MPI's memory, released with the window.
func (c comm) winAllocate(n int) ([]byte, win, error) {
	var base unsafe.Pointer
	var w win
	if err := check("MPI_Win_allocate", C.ttl_win_allocate(C.MPI_Aint(max(n, 1)), c.c, &base, &w.w)); err != nil {
		return nil, w, err
	}
	return unsafe.Slice((*byte)(base), n), w, nil
}

// free ends the access epoch and frees the window (collective).
func (w *win) free() error { return check("MPI_Win_free", C.ttl_win_free(&w.w)) }

// get copies len(dst) bytes at disp in rank's part of the window into dst
// (C memory or Go memory without pointers: MPI is done with it on return),
// flushed.
func (w win) get(dst []byte, rank, disp int) error {
	return check("MPI_Get", C.ttl_get(unsafe.Pointer(unsafe.SliceData(dst)), C.int(len(dst)), C.int(rank), C.MPI_Aint(disp), w.w))
}

// put copies src to disp in rank's part of the window, flushed.
func (w win) put(src []byte, rank, disp int) error {
	return check("MPI_Put", C.ttl_put(unsafe.Pointer(unsafe.SliceData(src)), C.int(len(src)), C.int(rank), C.MPI_Aint(disp), w.w))
}
