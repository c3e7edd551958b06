// Package launch runs an SPMD program as N processes on one machine, each a
// PE of an emulated TTL_PAPERS board in shared memory — what papersctl run
// does, the way mpirun runs MPI programs locally.
//
// It creates the board, starts the processes with PAPERS_PE, PAPERS_PES,
// PAPERS_PORT and PAPERS_JOB set (package spmd reads them), each in a
// process group of its own, prefixes every output line with its PE,
// forwards signals to the groups (continuing stopped PEs so that they act
// on them, and killing what is left within a second; a second signal kills
// at once), and watches the processes: when one dies — killed by any signal
// including SIGKILL, a panic, a non-zero exit, an exit without closing its
// PE, or never opening the board within the open deadline — it aborts the
// board, so every other PE's current or next operation fails at once, and
// kills whatever is left after a grace period. A PE that gave up waiting is
// not blamed: the report names the PEs it waited for, as the board saw them
// late or as the PE's own report of its error names them (each PE writes
// its error as data where PAPERS_REPORT says: package spmd). The report is decided
// once, by the first cause: what the grace period's kills or the PEs'
// reactions do afterwards never changes it. When the PEs have ended, what
// they left running in their groups gets the grace period to finish its
// output, then is killed. Beside the board it makes the run's data network
// (spmd/shm.CreateDataNet), and it removes both when done.
package launch

import (
	"io"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
)

// Defaults.
const (
	DefaultDir         = "/dev/shm"
	BoardPrefix        = "papers-"
	DefaultOpenTimeout = 10 * time.Second
	DefaultGrace       = 2 * time.Second
)

// CheckBoard checks a board name (Config.Board): a plain name that, after
// BoardPrefix, makes a file name of at most emu.MaxNameLen characters.
func CheckBoard(name string) error { return emu.CheckNameAfter(BoardPrefix, name) }

// Config describes a run.
type Config struct {
	N       int      // processes to start
	Program string   // path or name on $PATH
	Args    []string // the program's arguments
	// Board names the shared board (file Dir/papers-Board): a plain
	// name (CheckBoard). Empty: a fresh board with a unique name. The
	// board of a live run is never disturbed: a run asking for part of a
	// board (PEs and First) joins it when the PE count matches and its
	// PEs are free, and any other run naming it is refused, with that
	// run's processes; one left by a run that is over is replaced.
	Board string
	Dir   string // where boards live; DefaultDir when empty
	// PEs is the board's PE count when this run creates it (0: First+N,
	// see BoardPEs). First is the id of the first PE this run starts: PEs
	// First..First+N-1.
	PEs, First int
	// OpenTimeout bounds how long a process may take to open the board.
	OpenTimeout time.Duration
	// Grace is how long the surviving processes get to exit after a
	// failure before they are killed.
	Grace time.Duration
	// Timeout, when set, is passed to every PE as PAPERS_TIMEOUT.
	Timeout        time.Duration
	Stdout, Stderr io.Writer // nil: os.Stdout, os.Stderr
	Env            []string  // extra environment, KEY=VALUE
	// Signals are forwarded to every running process.
	Signals <-chan os.Signal
	// Started, when set, is called with each process once it runs.
	Started func(pe int, p *os.Process)
}

// Exit is how one PE's process ended.
type Exit struct {
	PE     int
	Status int       // exit status; 128+n when killed by signal n
	Signal os.Signal // the signal that killed it, or nil
	At     time.Time // when the launcher saw it end
	// Noticed is when the PE got the error of a failed run from its port
	// (zero if it never did).
	Noticed time.Time
	// Report is the PE's account of its failure, when it wrote one.
	Report *pereport.Report
}

// Report is the outcome of a run.
type Report struct {
	Exits []Exit // indexed by PE - First
	// Failed is the PE whose failure ended the run, -1 if none.
	Failed int
	// Reason says why the run ended early, naming the PE ("PE 2 was
	// killed by signal killed") or the signal ("stopped by interrupt");
	// empty when it did not.
	Reason string
	// Aborted is when the launcher aborted the board after the failure.
	Aborted time.Time
	Status  int    // the run's exit status: 0, the failed PE's status (at least 1), or 128+n for a stop by signal n
	Board   string // the board file used
	// Signal is the stop signal that ended the run, nil if none: one from
	// Config.Signals, or SIGTERM for a cancelled context. Failed is then
	// -1, whatever the PEs did on the signal.
	Signal os.Signal
	// Lingered lists the PEs whose process groups still had processes
	// (or held their output open) a grace period after the last PE
	// ended: those processes were killed.
	Lingered []int
	// Notes say what else happened, for the user (e.g. the processes
	// killed for Lingered).
	Notes []string
}
