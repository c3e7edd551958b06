// Package spmd runs one PAPERS program unchanged three ways: on the real
// board (one process per PC, each with its own printer port), as N
// processes on one machine attached to an emulated board in shared memory
// (papersctl run, like mpirun), and in-process for tests (package emulate).
//
// A program's main is
//
//	func main() { spmd.Main(run) }
//	func run(p *papers.PE) error { ... }
//
// and takes its PE id, PE count and board from flags or the environment:
//
//	PAPERS_PE      this PE's id, 0 to PAPERS_PES-1      (-papers.pe)
//	PAPERS_PES     the number of PEs                     (-papers.pes)
//	PAPERS_BOARD   the board:                            (-papers.board)
//	                 shm:/dev/shm/papers-NAME  an emulated board in shared memory
//	                 port:0x378, ppdev:/dev/parport0, devport:0x378, gpio:...
//	                                           a real port (package lpt/backend)
//	PAPERS_TIMEOUT bound on every wait, a Go duration    (-papers.timeout)
//	PAPERS_CHECKIN bound on Open's wait for the other PEs
//	               to start (default PAPERS_TIMEOUT)     (-papers.checkin)
//
// papersctl run sets the first three for each process it starts.
//
// Failure handling: Main turns a panic, an error return or a SIGINT, SIGTERM
// or SIGHUP into a non-zero exit that the other PEs notice (SPEC §5: the
// dying PE raises the parallel interrupt and stalls every barrier, so no PE
// computes on without it). On a shared-memory board the launcher also aborts
// the board when any PE process dies — even by SIGKILL, which no process can
// catch — and every other PE's next or current operation fails at once.
package spmd

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Environment variables read by Env and the flag defaults.
const (
	EnvPE      = "PAPERS_PE"
	EnvPEs     = "PAPERS_PES"
	EnvBoard   = "PAPERS_BOARD"
	EnvTimeout = "PAPERS_TIMEOUT"
	EnvCheckIn = "PAPERS_CHECKIN"
	// EnvJob, set by papersctl run, is the job id of the shared board the
	// PE must find under PAPERS_BOARD: a PE started for one run never joins
	// another's board of the same name.
	EnvJob = "PAPERS_JOB"
)

// SharedPrefix starts a PAPERS_BOARD naming a shared-memory board.
const SharedPrefix = "shm:"

// AbortCode is the interrupt code a failing PE raises on a real board.
const AbortCode = 0xf

// Options say which PE this process is and where its board is.
type Options struct {
	PE      int           // -1 when unset
	PEs     int           // 0 when unset
	Board   string        // PAPERS_BOARD syntax
	Timeout time.Duration // 0: papers.DefaultTimeout
	CheckIn time.Duration // 0: Timeout
}

// Env reads the options from the environment.
func Env() (Options, error) {
	o := Options{PE: -1, Board: os.Getenv(EnvBoard)}
	var err error
	if s := os.Getenv(EnvPE); s != "" {
		if o.PE, err = strconv.Atoi(s); err != nil {
			return o, fmt.Errorf("spmd: %s=%q is not a number", EnvPE, s)
		}
	}
	if s := os.Getenv(EnvPEs); s != "" {
		if o.PEs, err = strconv.Atoi(s); err != nil {
			return o, fmt.Errorf("spmd: %s=%q is not a number", EnvPEs, s)
		}
	}
	for _, d := range []struct {
		env string
		v   *time.Duration
	}{{EnvTimeout, &o.Timeout}, {EnvCheckIn, &o.CheckIn}} {
		if s := os.Getenv(d.env); s != "" {
			if *d.v, err = time.ParseDuration(s); err != nil {
				return o, fmt.Errorf("spmd: %s=%q is not a duration (write e.g. 10s)", d.env, s)
			}
		}
	}
	return o, nil
}

// RegisterFlags adds -papers.pe, -papers.pes, -papers.board,
// -papers.timeout and -papers.checkin to fs, with the environment (Env) as
// their defaults; the returned options hold the values once fs is parsed.
// An unreadable environment variable is reported by Open.
func RegisterFlags(fs *flag.FlagSet) *Options {
	o, _ := Env()
	opts := &o
	if fs == flag.CommandLine {
		commandLine = opts
	}
	fs.IntVar(&opts.PE, "papers.pe", o.PE, "this PE's id, 0 to PEs-1 (env "+EnvPE+")")
	fs.IntVar(&opts.PEs, "papers.pes", o.PEs, "number of PEs (env "+EnvPEs+")")
	fs.StringVar(&opts.Board, "papers.board", o.Board, "board: shm:PATH, port:0x378, ppdev:/dev/parport0, devport:0x378 or gpio:MAPPING (env "+EnvBoard+")")
	fs.DurationVar(&opts.Timeout, "papers.timeout", o.Timeout, "bound on every wait, 0 for the default (env "+EnvTimeout+")")
	fs.DurationVar(&opts.CheckIn, "papers.checkin", o.CheckIn, "bound on the wait for the other PEs to start, 0 for the wait timeout (env "+EnvCheckIn+")")
	return opts
}

// Open opens this process's PE with the options from the environment.
func Open() (*papers.PE, error) {
	o, err := Env()
	if err != nil {
		return nil, err
	}
	return o.Open()
}

// session is what the failure path needs besides the PE.
type session struct {
	board *emu.Board // shared board, nil on a real port
	port  lpt.Port
}

var sessions sync.Map // *papers.PE → *session

// commandLine holds the options registered on flag.CommandLine, if any.
var commandLine *Options

// Open attaches to the board, opens the port and checks in with the other
// PEs (papers.Open). Close the PE with Close.
func (o Options) Open() (*papers.PE, error) {
	switch {
	case o.PEs < 1:
		return nil, fmt.Errorf("spmd: no PE count: set %s or -papers.pes (papersctl run sets it)", EnvPEs)
	case o.PE < 0:
		return nil, fmt.Errorf("spmd: no PE id: set %s or -papers.pe to 0..%d (papersctl run sets it)", EnvPE, o.PEs-1)
	case o.Board == "":
		return nil, fmt.Errorf("spmd: no board: set %s or -papers.board to shm:PATH, port:0x378, ppdev:/dev/parport0 or gpio:..., or start the program with papersctl run", EnvBoard)
	}
	s := &session{}
	if path, ok := strings.CutPrefix(o.Board, SharedPrefix); ok {
		b, err := emu.OpenShared(path)
		if err != nil {
			return nil, fmt.Errorf("spmd: PE %d: %w", o.PE, err)
		}
		if o.PE >= b.PEs() {
			b.Close()
			return nil, fmt.Errorf("spmd: PE id %d does not fit the %d-PE board %s", o.PE, b.PEs(), path)
		}
		if job := os.Getenv(EnvJob); job != "" && job != fmt.Sprintf("%016x", b.Job()) {
			b.Close()
			return nil, fmt.Errorf("spmd: PE %d: board %s belongs to job %016x, not to this PE's job %s (%s): the run it was started for is over", o.PE, path, b.Job(), job, EnvJob)
		}
		port, err := b.Port(o.PE)
		if err != nil {
			b.Close()
			return nil, err
		}
		s.board, s.port = b, port
	} else {
		port, err := backend.Open(o.Board)
		if err != nil {
			return nil, fmt.Errorf("spmd: PE %d: %w", o.PE, err)
		}
		s.port = &guardedPort{Port: port}
	}
	p, err := papers.Open(s.port, papers.Config{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckInTimeout: o.CheckIn})
	if err != nil {
		if s.board != nil {
			s.board.Close()
		}
		return nil, err
	}
	sessions.Store(p, s)
	return p, nil
}

// Close closes a PE opened by Open (papers.PE.Close: the port is parked, or
// stays transparent after Leave) and detaches from its board.
func Close(p *papers.PE) error {
	err := p.Close()
	if v, ok := sessions.LoadAndDelete(p); ok && v.(*session).board != nil {
		if cerr := v.(*session).board.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Main is a PAPERS program's main: it parses the command line (adding the
// -papers.* flags unless RegisterFlags did; call Main before flag.Parse, or
// register them first), opens the PE, runs fn and exits — 0 when fn
// returns nil, 1 when it returns an error or the PE cannot open, 2 on a
// panic, 128+n on signal n. On every failure the PE fails visibly (Fail)
// before the process exits. Main does not return.
func Main(fn func(*papers.PE) error) {
	opts := commandLine
	if opts == nil {
		if flag.Parsed() {
			// Too late for flags: the environment alone.
			o, _ := Env()
			opts = &o
		} else {
			opts = RegisterFlags(flag.CommandLine)
		}
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	if _, err := Env(); err != nil {
		fatal(err, 1)
	}
	// Stop signals are caught from before the check-in on: a PE told to
	// stop while it waits for the others exits at once, as it would later.
	var opened atomic.Pointer[papers.PE]
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stop.Signals...)
	go stopOnSignal(sigs, &opened)
	p, err := opts.Open()
	if err != nil {
		fatal(err, 1)
	}
	opened.Store(p)
	os.Exit(run(p, fn))
}

func fatal(err error, code int) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
	os.Exit(code)
}

// stopOnSignal exits on the first stop signal. Another goroutine owns the
// PE, so no protocol: on a real port it takes the port from that goroutine
// and stalls it (a shared board is aborted by its launcher when we exit).
func stopOnSignal(sigs <-chan os.Signal, opened *atomic.Pointer[papers.PE]) {
	sig := <-sigs
	who := "PE"
	if p := opened.Load(); p != nil {
		if g, ok := p.Port().(*guardedPort); ok {
			g.stop()
		}
		who = fmt.Sprintf("PE %d", p.Self())
	}
	fmt.Fprintf(os.Stderr, "%s: %s: stopped by %v\n", os.Args[0], who, sig)
	os.Exit(stop.Status(sig))
}

// run runs fn on p and returns the exit status.
func run(p *papers.PE, fn func(*papers.PE) error) (code int) {
	defer func() {
		if r := recover(); r != nil {
			Fail(p, fmt.Errorf("panic: %v", r))
			fmt.Fprintf(os.Stderr, "%s: PE %d: panic: %v\n", os.Args[0], p.Self(), r)
			code = 2
		}
	}()
	if err := fn(p); err != nil {
		Fail(p, err)
		fmt.Fprintf(os.Stderr, "%s: PE %d: %v\n", os.Args[0], p.Self(), err)
		return 1
	}
	if err := Close(p); err != nil {
		fmt.Fprintf(os.Stderr, "%s: PE %d: close: %v\n", os.Args[0], p.Self(), err)
		return 1
	}
	return 0
}

// Fail ends a PE that cannot go on, so that the others stop too instead of
// computing with a missing partner (SPEC §5), before the process exits. On a
// real board, unless err shows that the program is already being aborted (a
// parallel interrupt), it raises the parallel interrupt with AbortCode,
// which the others receive as a *papers.InterruptError from their current
// operation; then it stalls every barrier for good (both strobes low). On a
// shared-memory board it does nothing: the launcher aborts the board when
// the process exits, which stops the others at once. Call it from the
// goroutine that owns p.
func Fail(p *papers.PE, err error) {
	if shared(p) {
		return
	}
	var ie *papers.InterruptError
	if !errors.As(err, &ie) && p.Port().Err() == nil {
		p.Interrupt(AbortCode) // bounded by the PE's timeout; an error changes nothing
	}
	stall(p.Port(), false)
}

func shared(p *papers.PE) bool {
	v, ok := sessions.Load(p)
	return ok && v.(*session).board != nil
}

// guardedPort is a real port whose writes the signal handler can stop for
// good. Without it, a write the PE's goroutine makes between the handler's
// stall and the process's exit would be the port's last value, and could
// show the others a PE that is alive and at their barrier.
type guardedPort struct {
	lpt.Port
	mu      sync.Mutex
	stopped bool
}

func (g *guardedPort) WriteData(v uint8) {
	g.mu.Lock()
	if !g.stopped {
		g.Port.WriteData(v)
	}
	g.mu.Unlock()
}

func (g *guardedPort) WriteControl(v uint8) {
	g.mu.Lock()
	if !g.stopped {
		g.Port.WriteControl(v)
	}
	g.mu.Unlock()
}

// stop stalls the port, raising the interrupt request, and drops every
// later write.
func (g *guardedPort) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		stall(g.Port, true)
		g.stopped = true
	}
}

// stall holds both strobes low (every barrier stalls) with the LED red,
// raising the interrupt request if raise is set, and leaves the port so: a
// dead PE must not look transparent.
func stall(port lpt.Port, raise bool) {
	port.WriteData(lpt.LR | lpt.DataMask)
	if raise {
		port.WriteControl(lpt.NAK | lpt.IRQ)
	}
}
