// Package substrate is the interface between package spmd and the ways a
// PAPERS program can run — a board through a printer port, the board
// emulated in shared memory (papersctl run), MPI (mpirun) — as
// database/sql/driver is between database/sql and the databases.
//
// A driver — one per substrate, as the 1990s AFAPI ran one API over
// TTL_PAPERS, SHMAPERS, CAPERS and WAPERS — registers itself under the
// names its port specs start with, from an init function of its own
// package:
//
//	func init() { substrate.Register("shm", shmDriver{}) }
//
// and a program links the drivers it can run on by importing their
// packages, usually blank; package spmd imports the standard ones (spmd's
// backends.go), so a program that imports only spmd and papers runs on every
// one of them. Package spmd itself names no driver: it looks the spec up
// here (Lookup), or asks the registered launchers whether one of them
// started this process (Launched: mpirun sets its own environment).
//
// A port spec is "name:rest" or a bare "name" (mpi); a spec whose name is
// not registered goes to the driver registered as Default, the printer
// ports of package lpt/backend, which also takes the short forms people
// type (0x378, /dev/parport0).
package substrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
)

// Default names the driver that takes a spec whose name is not registered.
const Default = "port"

// AbortCode is the interrupt code a failing PE raises (Session.Fail).
const AbortCode = 0xf

// Options are what a driver gets besides the spec: the PE's id and count
// (filled in from the launcher when one started the process) and the
// bounds on its waits.
type Options struct {
	PE, PEs int
	Timeout time.Duration // bound on every wait; 0: papers.DefaultTimeout
	CheckIn time.Duration // bound on Open's wait for the others; 0: Timeout, at least papers.MinCheckIn
	Listen  string        // the data network's address or interface, for the drivers that make one (PAPERS_LISTEN)
	LAN     string        // how the data network protects its frames (PAPERS_LAN)
	Verify  bool          // papers.Config.Verify (spmd.EnvVerify)
	Tag     string        // compared at check-in (papers.Config.Tag)
	// Context, when set, ends the check-in (papers.Config.Context): a PE
	// stopped while it checks in announces that it leaves.
	Context context.Context
}

// Driver opens PEs on one kind of substrate.
type Driver interface {
	// Check reports what is wrong with spec, without opening anything,
	// so a bad spec is refused before any work starts.
	Check(spec string) error
	// Open opens this process's PE on spec and checks in with the other
	// PEs (papers.Open), bounding every wait by o.
	Open(spec string, o Options) (Session, error)
}

// Launcher is implemented by a driver whose launcher can be recognised from
// the environment it gives the processes it starts (mpirun).
type Launcher interface {
	// Launched reports whether this process was started by the driver's
	// launcher and, if so, its PE id and the PE count.
	Launched() (pe, pes int, ok bool)
}

// SharedTerminal is implemented by a driver whose PEs are processes of one
// launcher that merges their output into one terminal (papersctl run,
// mpirun): every PE gets the same command line, so only PE 0 speaks for a
// wrong one.
type SharedTerminal interface {
	SharedTerminal() bool
}

// Session is one opened PE and what it takes to end it.
type Session interface {
	PE() *papers.PE
	// Fail ends a PE that cannot go on, from the PE's goroutine, so that
	// the others stop too (the seed's rule: no PE computes on with a
	// missing partner without knowing); the process exits afterwards.
	Fail(err error)
	// Stop ends this PE's part from another goroutine (a signal handler)
	// while the PE's goroutine may still be in an operation.
	Stop()
	// Close closes the PE and releases the substrate.
	Close() error
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes d the driver of specs named name. It panics if name is
// registered twice or d is nil, as database/sql.Register does: both are
// programming errors found at start-up.
func Register(name string, d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d == nil {
		panic("substrate: Register of a nil driver for " + name)
	}
	if _, dup := drivers[name]; dup {
		panic("substrate: Register called twice for " + name)
	}
	drivers[name] = d
}

// Drivers returns the registered names, sorted.
func Drivers() []string {
	mu.RLock()
	defer mu.RUnlock()
	return names()
}

// names is Drivers with mu held: a second RLock by one goroutine can
// deadlock behind a waiting Register.
func names() []string { return slices.Sorted(maps.Keys(drivers)) }

// Name returns the driver name of spec: the text before its first colon,
// or the whole spec when it has none.
func Name(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	return name
}

// Lookup returns the driver for spec: the one registered under its name,
// else the Default driver.
func Lookup(spec string) (Driver, error) {
	mu.RLock()
	defer mu.RUnlock()
	if d, ok := drivers[Name(spec)]; ok {
		return d, nil
	}
	if d, ok := drivers[Default]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("substrate: no driver for %q: this program links %v; import the package that registers it", spec, names())
}

// Launched asks every registered Launcher whether it started this process,
// and returns the first that did, by name.
func Launched() (name string, pe, pes int, ok bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, n := range names() {
		if l, isL := drivers[n].(Launcher); isL {
			if pe, pes, ok := l.Launched(); ok {
				return n, pe, pes, true
			}
		}
	}
	return "", 0, 0, false
}
