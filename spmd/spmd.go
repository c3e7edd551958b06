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
// or SIGHUP into a non-zero exit that the other PEs notice (docs/protocol.md: the
// dying PE raises the parallel interrupt and leaves the group, so every
// other PE's current operation fails naming it, and no PE computes on
// without knowing). On a shared-memory board the launcher also aborts
// the board when any PE process dies — even by SIGKILL, which no process can
// catch — and every other PE's next or current operation fails at once.
package spmd

import (
	"flag"
	"fmt"
	"io"
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
func Env() (Options, error) { return envFrom(os.Getenv) }

// envFrom reads the options from an environment's getenv: each variable
// that is set must parse; Check judges the values.
func envFrom(getenv func(string) string) (Options, error) {
	o := Options{PE: -1, Board: getenv(EnvBoard)}
	for _, n := range []struct {
		env  string
		v    *int
		what string
	}{{EnvPE, &o.PE, "this PE's id, 0 to " + EnvPEs + "-1"}, {EnvPEs, &o.PEs, "the number of PEs, 1 to " + strconv.Itoa(lpt.MaxPEs)}} {
		if s := getenv(n.env); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				return o, fmt.Errorf("spmd: %s=%q is not a whole number: set it to %s", n.env, s, n.what)
			}
			*n.v = v
		}
	}
	for _, d := range []struct {
		env string
		v   *time.Duration
	}{{EnvTimeout, &o.Timeout}, {EnvCheckIn, &o.CheckIn}} {
		if s := getenv(d.env); s != "" {
			v, err := time.ParseDuration(s)
			if err != nil {
				return o, fmt.Errorf("spmd: %s=%q is not a duration (write e.g. 10s)", d.env, s)
			}
			*d.v = v
		}
	}
	return o, nil
}

// Check reports the first value out of range — a PE count beyond the
// board, a PE id beyond the count, a board that is not shm:PATH or a port
// spec lpt/backend accepts, a negative timeout — naming the variable and
// its flag. Values not given are left to Open, which says how to give them.
func (o Options) Check() error {
	bad := func(env, flag string, v any, want string) error {
		return fmt.Errorf("spmd: %s (-%s) %v: %s", env, flag, v, want)
	}
	switch {
	case o.PEs != 0 && (o.PEs < 1 || o.PEs > lpt.MaxPEs):
		return bad(EnvPEs, "papers.pes", o.PEs, fmt.Sprintf("need 1 to %d", lpt.MaxPEs))
	case o.PE < -1 || o.PEs > 0 && o.PE >= o.PEs:
		return bad(EnvPE, "papers.pe", o.PE, fmt.Sprintf("need 0 to %d (%s-1)", max(o.PEs-1, 0), EnvPEs))
	case o.Timeout < 0:
		return bad(EnvTimeout, "papers.timeout", o.Timeout, "need 0 (the default) or more")
	case o.CheckIn < 0:
		return bad(EnvCheckIn, "papers.checkin", o.CheckIn, "need 0 (the timeout) or more")
	}
	if o.Board == "" {
		return nil
	}
	if path, ok := strings.CutPrefix(o.Board, SharedPrefix); ok {
		if path == "" {
			return bad(EnvBoard, "papers.board", strconv.Quote(o.Board), "no path: write shm:/dev/shm/papers-NAME (papersctl run sets it)")
		}
		return nil
	}
	if err := backend.Check(o.Board); err != nil {
		return fmt.Errorf("spmd: %s (-papers.board): %w", EnvBoard, err)
	}
	return nil
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
		s.port = &guardedPort{Port: port, timeout: o.Timeout}
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
// register them first), checks the options, opens the PE, runs fn and
// exits — 0 when fn returns nil, 1 when it returns an error or the PE
// cannot open, 2 on a wrong command line or environment (as package flag
// does) or a panic, 128+n on signal n. On every failure the PE fails
// visibly (Fail) before the process exits. Main does not return.
//
// Under papersctl run every PE gets the same command line, so only PE 0
// prints the usage or a flag's error; the others exit 2 quietly.
func Main(fn func(*papers.PE) error) {
	env, envErr := Env()
	opts := commandLine
	if opts == nil {
		if flag.Parsed() {
			// Too late for flags: the environment alone.
			opts = &env
		} else {
			opts = RegisterFlags(flag.CommandLine)
		}
	}
	quiet := quietUsage(env)
	if !flag.Parsed() {
		if quiet {
			flag.CommandLine.SetOutput(io.Discard)
		}
		flag.Parse() // exits 2 on a bad flag, 0 on -h
	}
	err := envErr
	if err == nil {
		err = opts.Check()
	}
	switch {
	case err != nil && quiet:
		os.Exit(2)
	case err != nil:
		fatal(err, 2)
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

// quietUsage reports whether this process is one of several PEs started
// on one machine with one terminal (papersctl run: a shared-memory board)
// and not PE 0, which speaks for them.
func quietUsage(env Options) bool {
	return env.PE > 0 && strings.HasPrefix(env.Board, SharedPrefix)
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
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], papers.NamePE(p.Self(), err))
		return 1
	}
	if err := Close(p); err != nil {
		fmt.Fprintf(os.Stderr, "%s: PE %d: close: %v\n", os.Args[0], p.Self(), err)
		return 1
	}
	return 0
}

// Fail ends a PE that cannot go on, so that the others stop too instead of
// computing with a missing partner (docs/protocol.md), before the process exits. On a
// real board it announces its departure: it raises the parallel interrupt
// with AbortCode and leaves the group (papers.PE.Abort), so every other PE's
// current operation returns a *papers.InterruptError that carries the code
// and names this PE (Left) — as soon as they reach a barrier, not after
// their timeout. If the others do not acknowledge within the PE's timeout,
// or the port has failed, it stalls every barrier for good instead (both
// strobes low, acknowledging interrupts). On a shared-memory board it does
// nothing: the launcher aborts the board when the process exits, which
// stops the others at once. Call it from the goroutine that owns p.
func Fail(p *papers.PE, err error) {
	if shared(p) {
		return
	}
	if p.Port().Err() != nil {
		stall(p.Port(), false, 0)
		return
	}
	p.Abort(AbortCode) // bounded by the PE's timeout; on failure it stalls the port
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
	timeout time.Duration // the program's bound on a wait (0: papers.DefaultTimeout)
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

// stop ends the PE's part on the port (stall: announced through the
// interrupt) and drops every later write.
func (g *guardedPort) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		stall(g.Port, true, g.timeout)
		g.stopped = true
	}
}

// stall ends this PE's part on a real port without its *papers.PE. With
// raise (the signal handler, which has taken the port from the PE's
// goroutine), it announces the departure as Fail does (papers.Abandon with
// AbortCode, bounded by the program's wait timeout: the others name this PE as
// soon as they reach a barrier). Without raise, or when the others do not
// acknowledge, it holds both strobes low (every barrier stalls) with the
// LED red and P_NAK low (acknowledging interrupts forever, so it never
// blocks the others' acknowledge), and leaves the port so: a dead PE must
// not look transparent unless the others were told.
func stall(port lpt.Port, raise bool, timeout time.Duration) {
	if raise && papers.Abandon(port, AbortCode, timeout) == nil {
		return
	}
	port.WriteData(lpt.LR | lpt.DataMask)
	port.WriteControl(0)
}
