// Package spmd runs one PAPERS program unchanged every way there is: on the
// real board (one process per PC, each with its own printer port), as N
// processes on one machine attached to an emulated board in shared memory
// (papersctl run), on a cluster under mpirun (built with -tags mpi), and
// in-process for tests (package emulate).
//
// A program's main is
//
//	func main() { spmd.Main(run) }
//	func run(p *papers.PE) error { ... }
//
// and takes its PE id, PE count and port from flags or the environment:
//
//	PAPERS_PE      this PE's id, 0 to PAPERS_PES-1      (-papers.pe)
//	PAPERS_PES     the number of PEs                     (-papers.pes)
//	PAPERS_PORT    the port spec:                        (-papers.port)
//	                 shm:/dev/shm/papers-NAME  an emulated board in shared memory
//	                 port:0x378, ppdev:/dev/parport0, devport:0x378, gpio:...
//	                                           a real port (package lpt/backend)
//	                 mpi                       MPI (package mpi; built with -tags mpi)
//	PAPERS_TIMEOUT bound on every wait, a Go duration    (-papers.timeout)
//	PAPERS_CHECKIN bound on Open's wait for the other PEs
//	               to start (default PAPERS_TIMEOUT, at least 1m)
//	                                                     (-papers.checkin)
//	PAPERS_LISTEN  on a real board, the address or network
//	               interface of the TCP data network     (-papers.listen)
//	               (default: the host's; none: no data network)
//	PAPERS_VERIFY  true: prove the board with every
//	               collective (papers.Config.Verify)     (-papers.verify)
//	PAPERS_TAG     compared at check-in beside the program
//	               and the PE count (papers.Config.Tag)  (-papers.tag)
//
// papersctl run sets the first three for each process it starts. Started
// by an MPI launcher (mpirun, mpiexec, srun) a program takes its PE id and
// count from the launcher's environment (package mpienv), whatever
// its port and whether or not it was built with MPI: with no port it runs
// on MPI, and with one — mpirun -np 4 -x PAPERS_PORT=0x378 on four PCs of a
// board — on the board. A port spec may say {pe} (PESpec) for the PE id, to
// give each PE of one machine its own port: ppdev:DIR/parport{pe}. PAPERS_BOARD and -papers.board are
// the old names of PAPERS_PORT and -papers.port, still read.
//
// Each way of running is a driver of package substrate, registered by a
// package of its own (spmd/shm, spmd/port, mpi); this package names none of
// them but in backends.go, which links them all.
//
// The end of a run: when fn returns nil, Main (and Close) ends the PE with
// papers.PE.Finish. The PEs end together: a PE that returns first keeps
// serving its global memory and the data network until every PE has
// returned, as OpenSHMEM's shmem_finalize and a UPC program's exit do, so
// no final barrier is needed. Then the PEs prove the run — a census of
// the participants and a test of every data line — and only then does
// any exit 0: a PE unplugged or a data line stuck since the last proof
// makes every PE exit 1, naming the PE or line and the calls whose
// results may lack it (docs/protocol.md, "Proving the run"). A PE that
// meets the board while another has returned is told so, naming it (a
// *papers.InterruptError with Returned), and the run fails: it did not end
// together. So does a PE that returns more than PAPERS_TIMEOUT before
// another.
//
// Failure handling: Main turns a panic, an error return or a SIGINT, SIGTERM
// or SIGHUP into a non-zero exit that the other PEs notice (docs/protocol.md: the
// dying PE raises the parallel interrupt and leaves the group, so every
// other PE's current operation fails naming it, and no PE computes on
// without knowing). On a shared-memory board the launcher also aborts the
// board when any PE process dies — even by SIGKILL, which no process can
// catch — and every other PE's next or current operation fails at once;
// under mpirun, mpirun ends the job. A PE that fails also writes its error
// as data — the stage, its kind, the PE, the operation, the PEs and the
// line it names — to the file its launcher names in PAPERS_REPORT
// (package internal/pereport), which papersctl run and hil read instead
// of the PE's output.
package spmd

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/internal/mpienv"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// Environment variables read by Env and the flag defaults. The data
// network's, PAPERS_LISTEN, is tcpnet.EnvListen: the package that reads
// its value names it.
const (
	EnvPE      = "PAPERS_PE"
	EnvPEs     = "PAPERS_PES"
	EnvPort    = "PAPERS_PORT"
	EnvTimeout = "PAPERS_TIMEOUT"
	EnvCheckIn = "PAPERS_CHECKIN"
	EnvVerify  = "PAPERS_VERIFY"
	EnvTag     = "PAPERS_TAG"
	// EnvBoard is the old name of EnvPort, still read when EnvPort is not
	// set.
	//
	// Deprecated: use EnvPort.
	EnvBoard = "PAPERS_BOARD"
)

// DefaultCheckIn is the least check-in a program gets when PAPERS_CHECKIN
// and -papers.checkin are not set: processes that a launcher or a person
// starts together took more than 10 s to start at load 20–35 on 2 cores,
// where a check-in of the operations' 10 s failed, reading like a fault of
// the program. A PE that is not coming is still named, after it.
const DefaultCheckIn = time.Minute

// AbortCode is the interrupt code a failing PE raises (Fail).
const AbortCode = substrate.AbortCode

// Options say which PE this process is and where its port is.
type Options struct {
	PE      int           // -1 when unset
	PEs     int           // 0 when unset
	Port    string        // a port spec (PAPERS_PORT)
	Timeout time.Duration // 0: papers.DefaultTimeout
	CheckIn time.Duration // 0: Timeout, at least DefaultCheckIn
	Listen  string        // a real board's data network: address or interface (PAPERS_LISTEN)
	LAN     string        // how that network protects its frames: "" (authenticated) or private (PAPERS_LAN)
	Verify  bool          // prove the board with every collective's result (PAPERS_VERIFY)
	Tag     string        // compared at check-in (papers.Config.Tag; PAPERS_TAG)
}

// Env reads the options from the environment.
func Env() (Options, error) { return envFrom(os.Getenv) }

// envFrom reads the options from an environment's getenv: each variable
// that is set must parse; Check judges the values.
func envFrom(getenv func(string) string) (Options, error) {
	o := Options{PE: -1, Port: getenv(EnvPort), Listen: getenv(tcpnet.EnvListen), LAN: getenv(tcpnet.EnvLAN), Tag: getenv(EnvTag)}
	if old := getenv(EnvBoard); old != "" {
		if o.Port != "" && o.Port != old {
			return o, fmt.Errorf("spmd: %s=%q and %s=%q disagree: set only %s (%s is its old name)", EnvPort, o.Port, EnvBoard, old, EnvPort, EnvBoard)
		}
		o.Port = old
	}
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
			if v < 0 { // -1 would read as "not set" (Options.PE's default)
				return o, fmt.Errorf("spmd: %s=%d is negative: set it to %s", n.env, v, n.what)
			}
			*n.v = v
		}
	}
	if s := getenv(EnvVerify); s != "" {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return o, fmt.Errorf("spmd: %s=%q is not true or false", EnvVerify, s)
		}
		o.Verify = v
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
// board, a PE id beyond the count, a port spec its driver refuses, a
// negative timeout — naming the variable and its flag. Values not given
// are left to Open, which says how to give them.
func (o Options) Check() error {
	if err := o.checkValues(); err != nil {
		return err
	}
	_, err := o.driver()
	return err
}

// checkValues judges the values that need no driver.
func (o Options) checkValues() error {
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
	if err := tcpnet.CheckListen(o.Listen); err != nil {
		return fmt.Errorf("spmd: -papers.listen: %w", err)
	}
	if _, err := tcpnet.ParseMode(o.LAN); err != nil {
		return fmt.Errorf("spmd: -papers.lan: %w", err)
	}
	return nil
}

// driver finds the driver of the port spec and has it check the spec
// (nil, nil when no port is given).
func (o Options) driver() (substrate.Driver, error) {
	if o.Port == "" {
		return nil, nil
	}
	d, err := substrate.Lookup(o.Port)
	if err == nil {
		err = d.Check(o.Port)
	}
	if err != nil {
		return nil, fmt.Errorf("spmd: %s (-papers.port): %w", EnvPort, err)
	}
	return d, nil
}

// RegisterFlags adds -papers.pe, -papers.pes, -papers.port (and its old
// name -papers.board), -papers.timeout, -papers.checkin, -papers.listen, -papers.lan, -papers.verify and -papers.tag to fs, with the
// environment (Env) as their defaults; the returned options hold the values
// once fs is parsed. An unreadable environment variable is reported by
// Open.
func RegisterFlags(fs *flag.FlagSet) *Options {
	env, err := Env()
	opts := registerFlags(fs, env)
	if fs == flag.CommandLine {
		commandLine = &registered{env: env, envErr: err, opts: opts}
	}
	return opts
}

// registerFlags adds the flags to fs with the environment's options o as
// their defaults.
func registerFlags(fs *flag.FlagSet, o Options) *Options {
	opts := &o
	fs.IntVar(&opts.PE, "papers.pe", o.PE, "this PE's id, 0 to PEs-1 (env "+EnvPE+")")
	fs.IntVar(&opts.PEs, "papers.pes", o.PEs, "number of PEs (env "+EnvPEs+")")
	fs.StringVar(&opts.Port, "papers.port", o.Port, "port spec: shm:PATH, port:0x378, ppdev:/dev/parport0, devport:0x378, gpio:MAPPING or mpi (env "+EnvPort+")")
	fs.StringVar(&opts.Port, "papers.board", o.Port, "old name of -papers.port")
	fs.DurationVar(&opts.Timeout, "papers.timeout", o.Timeout, "bound on every wait, 0 for the default (env "+EnvTimeout+")")
	fs.StringVar(&opts.Listen, "papers.listen", o.Listen, "a real board's TCP data network: this PC's address or interface on the LAN, or none (env "+tcpnet.EnvListen+")")
	fs.StringVar(&opts.LAN, "papers.lan", o.LAN, "how the TCP data network protects its frames: authenticated (the default) or private, encrypted too (env "+tcpnet.EnvLAN+")")
	fs.DurationVar(&opts.CheckIn, "papers.checkin", o.CheckIn, "bound on the wait for the other PEs to start, 0 for the wait timeout but at least "+DefaultCheckIn.String()+" (env "+EnvCheckIn+")")
	fs.BoolVar(&opts.Verify, "papers.verify", o.Verify, "prove the board (a census and a test of every data line) before every collective returns, not only at the end of the run (env "+EnvVerify+")")
	fs.StringVar(&opts.Tag, "papers.tag", o.Tag, "a tag every PE must have alike to check in together, such as its input's version (env "+EnvTag+")")
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

// Launched reports whether this process is one PE of a program whose PEs
// are processes: started by papersctl run or mpirun, or given a port, a PE
// id or a PE count (PAPERS_PORT, PAPERS_PE, PAPERS_PES, or a -papers.*
// flag on the command line). A program that can also run its PEs
// in-process (examples/hello, examples/matmul) asks it to choose; Main then
// says what is missing, where running in-process would ignore what the
// user set.
func Launched() bool {
	launched := launchedBy(os.Getenv).mpi
	for _, env := range []string{EnvPort, EnvBoard, EnvPE, EnvPEs} {
		launched = launched || os.Getenv(env) != ""
	}
	return launched || papersFlag(os.Args[1:])
}

// papersFlag reports whether args give a -papers.* flag.
func papersFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"); name != a && strings.HasPrefix(name, "papers.") {
			return true
		}
	}
	return false
}

var sessions sync.Map // *papers.PE → substrate.Session

// commandLine is what RegisterFlags registered on flag.CommandLine, if
// it did.
var commandLine *registered

// registered are a program's options: the environment's, read once, and
// those its flags give.
type registered struct {
	env    Options
	envErr error
	opts   *Options
}

// launcher is what started this process, as its environment says: an MPI
// launcher (mpirun, mpiexec, srun: package mpienv) gives the PE id and
// count. Main asks once.
type launcher struct {
	mpi     bool
	pe, pes int
}

func launchedBy(getenv func(string) string) launcher {
	pe, pes, ok := mpienv.Launched(getenv)
	return launcher{mpi: ok, pe: pe, pes: pes}
}

// PESpec is what a port spec may say for the PE id, to give each PE of one
// machine a port of its own: ppdev:DIR/parport{pe} is ppdev:DIR/parport2
// on PE 2.
const PESpec = "{pe}"

// resolve completes the options from the launcher that started this
// process. An MPI launcher (mpirun, mpiexec, srun: package mpienv)
// gives the PE id and count whatever the port — the PCs of a board started
// together — and they must agree with any given; with no port given, the
// driver that recognises the launcher (mpi) is the port. Then PESpec in
// the port spec becomes the PE id.
func (o Options) resolve(l launcher) (Options, error) {
	if l.mpi {
		if o.PE >= 0 && o.PE != l.pe || o.PEs > 0 && l.pes > 0 && o.PEs != l.pes {
			return o, fmt.Errorf("spmd: %s=%d %s=%d disagree with the MPI launcher, which started this process as PE %d of %d: unset them", EnvPE, o.PE, EnvPEs, o.PEs, l.pe, l.pes)
		}
		o.PE, o.PEs = l.pe, cmp.Or(l.pes, o.PEs)
		if o.Port == "" {
			if name, _, _, ok := substrate.Launched(); ok {
				o.Port = name
			}
		}
	}
	if o.PE >= 0 {
		o.Port = strings.ReplaceAll(o.Port, PESpec, strconv.Itoa(o.PE))
	}
	return o, nil
}

// Open opens the port its spec names (through the driver registered for
// it) and checks in with the other PEs (papers.Open). Close the PE with
// Close.
func (o Options) Open() (*papers.PE, error) {
	c, err := o.settle(launchedBy(os.Getenv))
	if err != nil {
		return nil, err
	}
	return c.open(context.Background())
}

// config is a PE's configuration once settle checked it: complete, every
// value in range, and the port's driver found. The drivers trust it.
type config struct {
	Options
	driver substrate.Driver
}

// usageError is a configuration the command line or the environment got
// wrong (Main exits 2, as package flag does).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// settle is the one check of a PE's configuration: it completes o from
// the launcher l (resolve), judges every value (Check), requires the PE id,
// count and port, and finds the port's driver.
func (o Options) settle(l launcher) (config, error) {
	given := o.Port != ""
	o, err := o.resolve(l)
	if err != nil {
		return config{}, err
	}
	if err := o.checkValues(); err != nil {
		return config{}, &usageError{err}
	}
	d, err := o.driver()
	switch {
	case err != nil && !given:
		// The launcher's driver refuses to run (mpirun, a program built
		// without MPI): not the command line's fault.
		return config{}, err
	case err != nil:
		return config{}, &usageError{err}
	}
	switch {
	case o.PEs < 1:
		return config{}, fmt.Errorf("spmd: no PE count: set %s or -papers.pes (papersctl run and mpirun set it)", EnvPEs)
	case o.PE < 0:
		return config{}, fmt.Errorf("spmd: no PE id: set %s or -papers.pe to 0..%d (papersctl run and mpirun set it)", EnvPE, o.PEs-1)
	case o.Port == "":
		return config{}, fmt.Errorf("spmd: no port: set %s or -papers.port to shm:PATH, port:0x378, ppdev:/dev/parport0, gpio:... or mpi, or start the program with papersctl run or mpirun", EnvPort)
	}
	if o.CheckIn == 0 {
		o.CheckIn = max(cmp.Or(o.Timeout, papers.DefaultTimeout), DefaultCheckIn)
	}
	return config{o, d}, nil
}

// open opens the PE c describes; ctx ends its check-in
// (substrate.Options).
func (c config) open(ctx context.Context) (*papers.PE, error) {
	o := c.Options
	s, err := c.driver.Open(o.Port, substrate.Options{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckIn: o.CheckIn, Listen: o.Listen, LAN: o.LAN, Tag: o.Tag, Context: ctx, Verify: o.Verify})
	if err != nil {
		return nil, err // the driver's or papers' own error, naming the PE
	}
	sessions.Store(s.PE(), s)
	return s.PE(), nil
}

// Close closes a PE opened by Open and releases its port or board. On a
// real board it announces that the PE's program returned
// (papers.PE.Finish), so that a PE returning while the others compute is
// named as such; elsewhere it is papers.PE.Close.
func Close(p *papers.PE) error {
	if v, ok := sessions.LoadAndDelete(p); ok {
		return v.(substrate.Session).Close()
	}
	return p.Close()
}

// Main is a PAPERS program's main: it parses the command line (adding the
// -papers.* flags unless RegisterFlags did; call Main before flag.Parse, or
// register them first), checks the options, opens the PE, runs fn and
// exits — 0 when fn returns nil, 1 when it returns an error or the PE
// cannot open, 2 on a wrong command line or environment (as package flag
// does) or a panic, 128+n on signal n. On every failure the PE fails
// visibly (Fail) before the process exits. Main does not return.
//
// Under papersctl run and mpirun every PE gets the same command line, so
// only PE 0 prints the usage or a flag's error; the others exit 2 quietly.
func Main(fn func(*papers.PE) error) {
	l := launchedBy(os.Getenv)
	reg := commandLine
	if reg == nil {
		env, err := Env()
		reg = &registered{env: env, envErr: err, opts: &env}
		if !flag.Parsed() {
			reg.opts = registerFlags(flag.CommandLine, env)
		} // else too late for flags: the environment alone
	}
	quiet := l.quietUsage(reg.env)
	if !flag.Parsed() {
		if quiet {
			flag.CommandLine.SetOutput(io.Discard)
		}
		// As flag.Parse, which exits 2 on a bad flag and 0 on -h, but
		// reporting the bad flag first. Package flag prints it and the
		// usage.
		flag.CommandLine.Init(flag.CommandLine.Name(), flag.ContinueOnError)
		switch err := flag.CommandLine.Parse(os.Args[1:]); {
		case errors.Is(err, flag.ErrHelp):
			os.Exit(0)
		case err != nil:
			report(pereport.Setup, reg.opts.PE, "", err, 2)
			os.Exit(2)
		}
	}
	err := reg.envErr
	if err == nil {
		var c config
		if c, err = reg.opts.settle(l); err == nil {
			openAndRun(c, fn) // does not return
		}
	}
	code := 1
	if _, usage := errors.AsType[*usageError](err); usage || reg.envErr != nil {
		code = 2
	}
	if code == 2 && quiet {
		report(pereport.Setup, reg.opts.PE, "", err, code)
		os.Exit(code)
	}
	fatal(pereport.Setup, reg.opts.PE, err, code)
}

// openAndRun opens the PE c describes, runs fn and exits.
func openAndRun(c config, fn func(*papers.PE) error) {
	// Stop signals are caught from before the check-in on: a PE told to
	// stop while it waits for the others exits at once, as it would later.
	var opened atomic.Pointer[papers.PE]
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stop.Signals...)
	checkIn, stopCheckIn := context.WithCancelCause(context.Background())
	opening := make(chan struct{})
	go stopOnSignal(sigs, c.PE, stopCheckIn, opening, &opened)
	p, err := c.open(checkIn)
	opened.Store(p)
	close(opening)
	if err != nil {
		if checkIn.Err() != nil {
			runtime.Goexit() // stopped while checking in: stopOnSignal says so and exits
		}
		fatal(pereport.Open, c.PE, err, 1)
	}
	os.Exit(run(p, fn))
}

// quietUsage reports whether this process is one of several PEs whose
// launcher merges their output (papersctl run, mpirun) and not PE 0, which
// speaks for them.
func (l launcher) quietUsage(env Options) bool {
	env, err := env.resolve(l)
	if err != nil || env.PE <= 0 {
		return false
	}
	if l.mpi {
		return true // an MPI launcher merges every rank's output, whatever the port
	}
	if env.Port == "" {
		return false
	}
	d, err := substrate.Lookup(env.Port)
	if err != nil {
		return false
	}
	t, ok := d.(substrate.SharedTerminal)
	return ok && t.SharedTerminal()
}

// fatal reports err, of PE pe at stage, and exits with code.
func fatal(stage pereport.Stage, pe int, err error, code int) {
	report(stage, pe, "", err, code)
	fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
	os.Exit(code)
}

// reported makes the report once: a stop signal may come while the
// program's own failure is being written.
var reported sync.Once

// report writes this PE's failure as data for its launcher
// (pereport.Env): its error's value, the stage, the exit status, and kind
// when it is not the error's (a panic, a signal).
func report(stage pereport.Stage, pe int, kind pereport.Kind, err error, status int) {
	reported.Do(func() {
		r := pereport.From(err)
		r.Stage, r.PE, r.Status = stage, pe, status
		if kind != "" {
			r.Kind = kind
		}
		if werr := pereport.Write(r); werr != nil {
			fmt.Fprintf(os.Stderr, "%s: PE %d: the report of its failure: %v\n", os.Args[0], pe, werr)
		}
	})
}

// stopOnSignal exits on the first stop signal. Another goroutine owns the
// PE, so no protocol here: the driver ends the PE's part (Session.Stop: on
// a real port it takes the port from that goroutine and announces the
// departure; a shared board is aborted by its launcher when we exit).
//
// A PE stopped while it checks in ends its check-in (stopCheckIn), which
// announces its departure to the PEs that counted it (papers.Open), and
// exits once Open has returned (opening closed). It says why and writes
// its report first: a launcher kills a PE that takes longer than its
// grace to end (at load 15, announcing took longer), and its output and
// report must still say that a signal stopped it.
func stopOnSignal(sigs <-chan os.Signal, pe int, stopCheckIn context.CancelCauseFunc, opening <-chan struct{}, opened *atomic.Pointer[papers.PE]) {
	sig := <-sigs
	stage := pereport.Open
	if opened.Load() != nil {
		stage = pereport.Run
	}
	err := fmt.Errorf("PE %d: stopped by %v", pe, sig)
	report(stage, pe, pereport.Signal, err, stop.Status(sig))
	fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
	if opened.Load() == nil {
		stopCheckIn(fmt.Errorf("stopped by %v", sig))
		<-opening
	}
	if p := opened.Load(); p != nil {
		if v, ok := sessions.Load(p); ok {
			v.(substrate.Session).Stop()
		}
	}
	os.Exit(stop.Status(sig))
}

// run runs fn on p and returns the exit status.
func run(p *papers.PE, fn func(*papers.PE) error) (code int) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("panic: %v", r)
			Fail(p, err)
			report(pereport.Run, p.Self(), pereport.Panic, err, 2)
			fmt.Fprintf(os.Stderr, "%s: PE %d: %v\n", os.Args[0], p.Self(), err)
			code = 2
		}
	}()
	if err := fn(p); err != nil {
		Fail(p, err)
		report(pereport.Run, p.Self(), "", err, 1)
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], papers.NamePE(p.Self(), err))
		return 1
	}
	if err := Close(p); err != nil { // the end of the run: it did not end together, or is not proven
		report(pereport.End, p.Self(), "", err, 1)
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], papers.NamePE(p.Self(), err))
		return 1
	}
	return 0
}

// Fail ends a PE that cannot go on, so that the others stop too instead of
// computing with a missing partner (docs/protocol.md), before the process
// exits; its driver does what its substrate allows (the Fail of its
// substrate.Session). On a real board it announces its departure: it raises
// the parallel interrupt with AbortCode and leaves the group
// (papers.PE.Abort), so every other PE's
// current operation returns a *papers.InterruptError that carries the code
// and names this PE (Left) — as soon as they reach a barrier, not after
// their timeout. If the others do not acknowledge within the PE's timeout,
// or the port has failed, it stalls every barrier for good instead (both
// strobes low, acknowledging interrupts). On a shared-memory board it does
// nothing: the launcher aborts the board when the process exits, which
// stops the others at once. Under MPI it aborts as on a board, and mpirun
// ends the job when the process exits. Call it from the goroutine that
// owns p.
func Fail(p *papers.PE, err error) {
	if v, ok := sessions.Load(p); ok {
		v.(substrate.Session).Fail(err)
		return
	}
	p.Abort(AbortCode)
}
