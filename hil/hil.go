// Package hil closes the hardware loop: it runs the unmodified static
// papersctl binary — the one a person copies to a real PC, doing ioperm and
// inb/outb on port 0x378 — inside N QEMU virtual machines with real Debian
// kernels, and wires each machine's ISA parallel port to one PE of a single
// emulated board.
//
// The wiring is QEMU's "parallel" chardev (formerly "parport"), which
// forwards every guest access to the port's registers as a ppdev ioctl on a
// file; package ppdevfs serves those files from an emu.Board through FUSE.
// Run builds the initramfs (the papersctl binary, booted as init by the
// kernel with "rdinit=/papersctl -- hil --guest", and the command to run),
// mounts the board, boots the machines, collects each one's console and exit
// status, and tears everything down — machines, mount and temporary files —
// however the run ends.
package hil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// PEsPlaceholder in Config.Args is replaced in each machine by the machine
// count, as spmd.PESpec ("{pe}") is by its PE number.
const PEsPlaceholder = "{pes}"

// Config describes a run.
type Config struct {
	N      int      // machines, one per PE: 1 to lpt.MaxPEs
	Faults []string // board faults as emu.ParseFault reads them ("PE2.D6=stuck0")
	// Args is the papersctl command line each machine runs, without the
	// program name, e.g. {"selftest", "--port", "0x378", "--pe", "{pe}", "--pes", "{pes}"};
	// with Program, the program's arguments.
	Args []string
	// Program, when set, is a static linux/amd64 SPMD program (spmd.Main;
	// see CheckProgram) that each machine runs, unchanged, instead of a
	// papersctl command: as PE k of N with PAPERS_PORT=0x378 (direct I/O on
	// its port), as it would on a PC of a real board. The machines then also
	// share one LAN (LANPrefix), for the program's data network.
	Program string
	// Env is more environment for Program, as NAME=value: the spmd
	// variables (PAPERS_TIMEOUT, PAPERS_CHECKIN) bound its waits. Without
	// PAPERS_TIMEOUT in it, the program gets ProgramTimeout: machines that
	// QEMU emulates are many times slower than the host, more so on a
	// loaded one, and a 10 s wait for the others to connect failed there.
	// A -papers.timeout in Args overrides it.
	Env []string
	// Binary is a static linux/amd64 papersctl (CGO_ENABLED=0); see
	// BuildPapersctl and StaticSelf.
	Binary string
	// Kernel is the guest kernel; nil means qemu.FindKernel.
	Kernel *qemu.Kernel
	// Timeout bounds each machine from boot to power-off. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Memory is each machine's RAM; empty means 192M.
	Memory string
	// Output, when set, receives every machine's console as it arrives,
	// each line prefixed with "pe<k>| ".
	Output io.Writer
	// WorkDir is where the run's temporary directory (initramfs, board
	// mount point) goes; empty means os.TempDir(). Nothing is left in it.
	WorkDir string
	// BoardDir, when set, is where the board is served while the machines
	// run (created if missing, and then removed): its ppdev files and its
	// faults file (ppdevfs.FaultsFile), through which ppdevfs.ChangeFaults
	// (papersctl emu fault) pulls a cable or sticks a line mid-run. Empty
	// means a directory inside the run's temporary one.
	BoardDir string
	// Log receives the board server's complaints (unknown ioctls). Nil
	// means the standard logger.
	Log *log.Logger
	// Input, when set, steers the machines' commands while they run:
	// Input(k), when not nil, is typed into machine k's console after the
	// start line, and the command reads its standard input from the
	// console. Run calls Input as it boots the machines, and reads each
	// reader it returns to its end (dropping the rest once the machine is
	// gone), so the caller must end it, e.g. close the writer of an
	// io.Pipe.
	Input func(pe int) io.Reader
	// Progress, when set, receives one line whenever a machine boots, the
	// command starts in the machines, or a machine powers off ("pe2:
	// exit 0"), and every ProgressEvery each machine's state and port
	// operations, so that a run of minutes is never silent.
	Progress func(status string)
}

// Machine is what one machine did.
type Machine struct {
	PE       int
	Exit     int    // the command's exit status; -1 when it did not report one
	Console  []byte // everything the machine printed (kernel, command, QEMU)
	Err      error  // the machine failed: timeout, QEMU error, no exit status
	Wall     time.Duration
	Ioctls   uint64        // port operations the board server answered for it
	PerOp    time.Duration // mean time between them (see ppdevfs.Stats.PerOp)
	BusyTime time.Duration // first to last port operation
	// Report is a failing Program's account of its error (spmd.Main
	// writes it: package pereport); nil when it did not fail, was killed,
	// or the machine ran a papersctl command.
	Report *pereport.Report
}

// Result is a whole run.
type Result struct {
	Machines []Machine
	Wall     time.Duration // from mounting the board to the last teardown
}

// OK reports whether every machine's command exited with status 0.
func (r *Result) OK() bool {
	for _, m := range r.Machines {
		if m.Err != nil || m.Exit != 0 {
			return false
		}
	}
	return len(r.Machines) > 0
}

// Summary is one line per machine: exit status, port operations, error.
func (r *Result) Summary() string {
	var b strings.Builder
	for _, m := range r.Machines {
		fmt.Fprintf(&b, "pe%d: exit %d in %v, %d port operations", m.PE, m.Exit, m.Wall.Round(time.Millisecond), m.Ioctls)
		if m.Err != nil {
			fmt.Fprintf(&b, ": %v", m.Err)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// The guest side's files in the initramfs and its result line.
const (
	guestBinary = "papersctl"
	guestArgs   = "hil/args.json"
	// guestName names the command or program in the guest's failure
	// lines (Config.what).
	guestName = "hil/name"
	// guestEnv is the Program's environment (Config.programEnv), one
	// NAME=value a line.
	guestEnv = "hil/env"
	// guestProgram is Config.Program in the machines; its presence
	// tells the guest to run it, on the LAN.
	guestProgram = "hil/program"
	// guestInput's presence tells the guest to give the command its
	// console as standard input (Config.Input).
	guestInput = "hil/input"
	// guestReport is where a failing Program writes its report
	// (pereport.Env), which the exit result carries to the host.
	guestReport = "hil/report.json"
	exitResult  = "hil-exit"
	readyResult = "hil-ready"
)

// guestExit is the exit result's detail, as JSON: the command's exit
// status and, for a Program that failed, its report.
type guestExit struct {
	Status int              `json:"status"`
	Report *pereport.Report `json:"report,omitempty"`
}

// Preflight checks that this host can run machines — QEMU, the guest
// kernel, FUSE for the board — without doing anything, so that a command
// can refuse before slow preparations such as building the binary. Run
// checks the same.
func Preflight() error {
	if _, err := qemu.FindQEMU(); err != nil {
		return err
	}
	if _, err := qemu.FindKernel(); err != nil {
		return err
	}
	return ppdevfs.Available()
}

// Run boots the machines, runs the command in each against one emulated
// board, and tears everything down. Cancelling ctx stops the run (machines
// are killed, the board unmounted). The error is about the run itself
// (setup failed); each machine's own failure is in its Machine.Err.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, kernel, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	board, err := faultyBoard(cfg.N, cfg.Faults)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tmp, err := os.MkdirTemp(cfg.WorkDir, "ttlpapers-hil-")
	if err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	defer os.RemoveAll(tmp)
	initrd := filepath.Join(tmp, "initrd.cpio")
	if err := writeInitramfs(initrd, cfg, kernel); err != nil {
		return nil, err
	}
	mnt, made, err := boardDir(cfg.BoardDir, tmp)
	if err != nil {
		return nil, err
	}
	if made {
		defer os.Remove(mnt)
	}
	srv, err := ppdevfs.Mount(mnt, board, ppdevfs.Options{PEs: cfg.N, Log: cfg.Log})
	if err != nil {
		return nil, err
	}
	var lan *hub
	if cfg.Program != "" {
		if lan, err = startHub(tmp); err != nil {
			srv.Unmount()
			return nil, err
		}
	}
	res, err := runMachines(ctx, cfg, kernel, initrd, srv, lan)
	if lan != nil {
		lan.close()
	}
	// Every QEMU has exited (runMachine waits), so nothing holds the files.
	if uerr := srv.Unmount(); err == nil {
		err = uerr
	}
	if res != nil {
		res.Wall = time.Since(start)
	}
	return res, err
}

// boardDir returns the directory to serve the board in: dir, or a new one
// in tmp when dir is empty; made says it was created here (and is to be
// removed).
func boardDir(dir, tmp string) (_ string, made bool, _ error) {
	if dir == "" {
		dir = filepath.Join(tmp, "board")
	} else if _, err := os.Stat(dir); err == nil {
		return dir, false, nil // Validate saw that it is a directory
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("hil: board directory: %w", err)
	}
	return dir, true, nil
}

// Validate reports every problem with cfg's machines, faults, command and
// timeout as *field.Error values, joined. (The binary and the kernel are
// looked for when the run starts.)
func (cfg Config) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) { errs = append(errs, field.Errorf(name, format, args...)) }
	if cfg.N < 1 || cfg.N > lpt.MaxPEs {
		bad("N", "{N} %d: %d machines: use 1 to %d", cfg.N, cfg.N, lpt.MaxPEs)
	}
	for _, s := range cfg.Faults {
		f, err := emu.ParseFault(s)
		if err == nil && cfg.N >= 1 {
			err = f.OnBoard(cfg.N)
		}
		if err != nil {
			bad("Faults", "{Faults} %s: %v", s, err)
		}
	}
	if len(cfg.Args) == 0 && cfg.Program == "" {
		bad("Args", "no papersctl command to run in the machines ({Args}), e.g. selftest --port 0x378")
	}
	if st, err := os.Stat(cfg.BoardDir); cfg.BoardDir != "" && err == nil && !st.IsDir() {
		bad("BoardDir", "{BoardDir} %s is not a directory: name a new or an empty directory to serve the board in", cfg.BoardDir)
	}
	if cfg.Timeout < 0 {
		bad("Timeout", "{Timeout} %v: need 0 (the default) or more", cfg.Timeout)
	}
	return errors.Join(errs...)
}

// prepare checks cfg, fills in its defaults and finds QEMU and the kernel,
// before any work starts.
func prepare(cfg Config) (Config, *qemu.Kernel, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, nil, fmt.Errorf("hil: %w", err)
	}
	if cfg.Binary == "" {
		return cfg, nil, errors.New("hil: no papersctl binary: build one with BuildPapersctl")
	}
	if cfg.Program != "" {
		if err := CheckProgram(cfg.Program); err != nil {
			return cfg, nil, err
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Memory == "" {
		cfg.Memory = "192M"
	}
	if cfg.Log == nil {
		cfg.Log = log.Default()
	}
	if _, err := qemu.FindQEMU(); err != nil {
		return cfg, nil, err
	}
	if cfg.Kernel != nil {
		return cfg, cfg.Kernel, nil
	}
	kernel, err := qemu.FindKernel()
	return cfg, kernel, err
}

// what names what the machines run, for progress and failure lines.
func (cfg Config) what() string {
	if cfg.Program != "" {
		return filepath.Base(cfg.Program)
	}
	return "papersctl " + strings.Join(cfg.Args, " ")
}

// DefaultTimeout bounds each machine from boot to power-off when
// Config.Timeout is zero. Four machines that print hello took 3m38s at load
// 30 on 2 cores (5 minutes is too tight there); a stuck machine is still
// named, later, and Progress shows what each is doing meanwhile.
const DefaultTimeout = 15 * time.Minute

// ProgramTimeout is PAPERS_TIMEOUT for a Program whose Config.Env gives
// none.
const ProgramTimeout = time.Minute

// programEnv is the Program's environment beyond its PE and port: Env,
// with ProgramTimeout unless Env sets a timeout.
func (cfg Config) programEnv() []string {
	for _, v := range cfg.Env {
		if strings.HasPrefix(v, spmd.EnvTimeout+"=") {
			return cfg.Env
		}
	}
	return append(slices.Clip(cfg.Env), spmd.EnvTimeout+"="+ProgramTimeout.String())
}

// faultyBoard is the emulated board for n PEs with the faults injected.
func faultyBoard(n int, faults []string) (*emu.Board, error) {
	board, err := emu.New(n)
	if err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	for _, s := range faults {
		f, err := emu.ParseFault(s)
		if err != nil {
			return nil, err
		}
		if err := board.Inject(f); err != nil {
			return nil, err
		}
	}
	return board, nil
}

// runMachines boots one machine per PE on the board's files and waits for
// every one to power off.
func runMachines(ctx context.Context, cfg Config, kernel *qemu.Kernel, initrd string, srv *ppdevfs.Server, lan *hub) (*Result, error) {
	gate, err := newStartGate(cfg.N, cfg.Input)
	if err != nil {
		return nil, err
	}
	defer gate.close()
	res := &Result{Machines: make([]Machine, cfg.N)}
	st := &status{report: cfg.Progress, states: make([]string, cfg.N), ops: func(k int) uint64 { return srv.Stats(k).Ioctls }}
	gate.started = func() { st.event(-1, "running", fmt.Sprintf("%s starts in the machines", cfg.what())) }
	st.event(-1, "booting", fmt.Sprintf("booting %d machines", cfg.N))
	done := make(chan struct{})
	var wg, ticker sync.WaitGroup
	ticker.Go(func() { st.every(done) })
	for k := range cfg.N {
		wg.Go(func() {
			args := qemu.ParallelPassthrough(srv.Path(k))
			if lan != nil {
				args = append(args, lan.qemuArgs(k)...)
			}
			m := runMachine(ctx, cfg, kernel, initrd, args, k, gate, st)
			res.Machines[k] = m
			end := fmt.Sprintf("exit %d", m.Exit)
			if m.Err != nil {
				end = m.Err.Error()
			}
			st.event(k, "powered off", fmt.Sprintf("pe%d: %s after %v", k, end, m.Wall.Round(time.Second)))
		})
	}
	wg.Wait()
	close(done)
	ticker.Wait()
	for k := range res.Machines {
		st := srv.Stats(k)
		m := &res.Machines[k]
		m.Ioctls, m.PerOp, m.BusyTime = st.Ioctls, st.PerOp(), st.Busy
	}
	return res, nil
}

// writeInitramfs packs papersctl (the machines' init), the command's
// arguments and, with a Program, the program and the network card's module.
func writeInitramfs(path string, cfg Config, kernel *qemu.Kernel) error {
	bin, err := os.ReadFile(cfg.Binary)
	if err != nil {
		return fmt.Errorf("hil: reading the papersctl binary: %w", err)
	}
	js, err := json.Marshal(cfg.Args)
	if err != nil {
		return err
	}
	files := []qemu.File{{Path: guestBinary, Mode: 0o755, Data: bin}, {Path: guestArgs, Data: js}, {Path: guestName, Data: []byte(cfg.what())}}
	if cfg.Input != nil {
		files = append(files, qemu.File{Path: guestInput})
	}
	if cfg.Program != "" {
		prog, err := os.ReadFile(cfg.Program)
		if err != nil {
			return fmt.Errorf("hil: reading the program: %w", err)
		}
		mod, err := kernel.Module(lanModule)
		if err != nil {
			return err
		}
		env := strings.Join(cfg.programEnv(), "\n")
		files = append(files, qemu.File{Path: guestProgram, Mode: 0o755, Data: prog}, qemu.File{Path: guestEnv, Data: []byte(env)}, mod)
	}
	var buf bytes.Buffer
	if err := qemu.WriteInitramfs(&buf, files...); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func runMachine(ctx context.Context, cfg Config, kernel *qemu.Kernel, initrd string, qemuArgs []string, pe int, gate *startGate, st *status) Machine {
	m := Machine{PE: pe, Exit: -1}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var once sync.Once
	arrived := func() {
		once.Do(func() {
			st.event(pe, "booted", fmt.Sprintf("pe%d: booted in %v, waiting for the others", pe, time.Since(start).Round(time.Second)))
			gate.arrive()
		})
	}
	defer once.Do(gate.arrive) // a machine that dies before it is ready must not hold the others
	console := io.Writer(&lineWatcher{marker: readyMarker, fn: arrived})
	if cfg.Output != nil {
		pw := &prefixWriter{w: cfg.Output, prefix: fmt.Sprintf("pe%d| ", pe)}
		defer pw.Flush()
		console = io.MultiWriter(console, pw)
	}
	vm, err := qemu.Start(ctx, qemu.Options{
		Kernel: kernel.Vmlinuz,
		Initrd: initrd,
		// The kernel passes what follows "--" to init as its arguments.
		Append:  fmt.Sprintf("quiet rdinit=/%s -- hil --guest --pe %d --pes %d", guestBinary, pe, cfg.N),
		Memory:  cfg.Memory,
		Args:    qemuArgs,
		Console: console,
		Stdin:   gate.r[pe],
	})
	gate.r[pe].Close() // QEMU has its own copy
	if err != nil {
		m.Err = err
		return m
	}
	m.Console, m.Err = vm.Wait()
	m.Wall = time.Since(start)
	if ctx.Err() == context.DeadlineExceeded {
		m.Err = fmt.Errorf("hil: machine %d did not power off within %v (killed)", pe, cfg.Timeout)
	}
	m.Exit, m.Report = exitOf(m.Console)
	if m.Exit < 0 && m.Err == nil {
		m.Err = fmt.Errorf("hil: machine %d powered off without reporting the command's exit status (see its console)", pe)
	}
	return m
}

// ProgressEvery is how often Config.Progress hears every machine's state
// when nothing else happened: a run on a loaded machine takes minutes. A
// ticker's line comes late on a busy PC (32 s apart at load 35 with 30 s),
// so it is well under the 30 s a user should never wait for a line.
const ProgressEvery = 20 * time.Second

// status tracks each machine for Config.Progress: its events as they
// happen, and every machine's state every ProgressEvery.
type status struct {
	mu     sync.Mutex
	report func(string)
	states []string         // each machine's state: "booting", "booted", …
	ops    func(int) uint64 // port operations machine k has made so far
}

// event sets machine k's state (k < 0: every machine's) and reports what
// happened.
func (s *status) event(k int, state, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k < 0 {
		for i := range s.states {
			s.states[i] = state
		}
	} else {
		s.states[k] = state
	}
	if s.report != nil {
		s.report(what)
	}
}

// summary reports every machine's state and port operations so far.
func (s *status) summary() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.report == nil {
		return
	}
	parts := make([]string, len(s.states))
	for k, st := range s.states {
		parts[k] = fmt.Sprintf("pe%d %s", k, st)
		if n := s.ops(k); n > 0 {
			parts[k] += fmt.Sprintf(", %d port operations", n)
		}
	}
	s.report(strings.Join(parts, "; "))
}

// every calls summary every ProgressEvery until done is closed.
func (s *status) every(done <-chan struct{}) { tickUntil(done, s.summary) }

// tickUntil calls f every ProgressEvery until done is closed.
func tickUntil(done <-chan struct{}, f func()) {
	tick := time.NewTicker(ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			f()
		}
	}
}

// readyMarker is the console line a guest prints when it waits to start.
var readyMarker = []byte(qemu.FormatResult(readyResult, nil, ""))

// startGate holds every machine's command until all machines are ready.
// Machines boot at different speeds, and a BIOS probes the port with test
// patterns (SeaBIOS writes 0xaa, which raises S1) that a PE already checking
// in would take for another PE's strobes. Each machine's console input is a
// pipe; the start signal is one line typed into all of them. Then each
// pipe is closed, or with Config.Input it carries what the caller types.
type startGate struct {
	mu       sync.Mutex
	waiting  int
	r, w     []*os.File
	input    []io.Reader // Config.Input's readers; nil entries: none
	released bool
	started  func() // called when the last machine arrives
}

func newStartGate(n int, input func(pe int) io.Reader) (*startGate, error) {
	g := &startGate{waiting: n, input: make([]io.Reader, n)}
	for k := 0; k < n; k++ {
		r, w, err := os.Pipe()
		if err != nil {
			g.close()
			return nil, fmt.Errorf("hil: %w", err)
		}
		g.r, g.w = append(g.r, r), append(g.w, w)
		if input != nil {
			g.input[k] = input(k)
		}
	}
	return g, nil
}

// arrive counts one machine ready (or gone); the last one starts them all.
func (g *startGate) arrive() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiting--; g.waiting == 0 && !g.released {
		if g.started != nil {
			g.started()
		}
		for k, w := range g.w {
			w.WriteString("go\n") // fails harmlessly for a machine that has exited
			if in := g.input[k]; in != nil {
				go typeInto(w, in)
				g.w[k] = nil // typeInto closes it
			}
		}
		g.closeLocked()
	}
}

// typeInto copies in to a machine's console, then drops what still comes
// once the machine is gone, so that the caller's writes never block.
func typeInto(w *os.File, in io.Reader) {
	io.Copy(w, in)
	w.Close()
	io.Copy(io.Discard, in)
}

func (g *startGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closeLocked()
	for _, r := range g.r {
		r.Close()
	}
}

func (g *startGate) closeLocked() {
	if !g.released {
		for _, w := range g.w {
			if w != nil {
				w.Close()
			}
		}
		g.released = true
	}
}

// lineWatcher calls fn for each console line containing marker.
type lineWatcher struct {
	marker []byte
	fn     func()
	line   []byte
}

func (l *lineWatcher) Write(b []byte) (int, error) {
	for _, c := range b {
		if c != '\n' {
			l.line = append(l.line, c)
			continue
		}
		if bytes.Contains(l.line, l.marker) {
			l.fn()
		}
		l.line = l.line[:0]
	}
	return len(b), nil
}

// exitOf finds a machine's exit result in its console: the command's exit
// status (-1 when it reported none) and a failing Program's report.
func exitOf(console []byte) (int, *pereport.Report) {
	for _, r := range slices.Backward(qemu.ParseResults(console)) {
		var x guestExit
		if r.Name == exitResult && json.Unmarshal([]byte(r.Detail), &x) == nil {
			return x.Status, x.Report
		}
	}
	return -1, nil
}

// Substitute returns args with the placeholders replaced for one PE.
func Substitute(args []string, pe, pes int) []string {
	r := strings.NewReplacer(spmd.PESpec, strconv.Itoa(pe), PEsPlaceholder, strconv.Itoa(pes))
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// prefixWriter writes whole lines, each with a prefix, so that machines'
// consoles interleave line by line. It drops carriage returns and the
// terminal escape sequences SeaBIOS and the kernel send.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	line   []byte
	esc    int // 0: text; 1: after ESC; 2: inside a CSI sequence
}

var outputMu sync.Mutex // serialises lines from all machines

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range b {
		switch {
		case p.esc == 1: // ESC [ starts a CSI sequence; ESC x is complete
			p.esc = 0
			if c == '[' {
				p.esc = 2
			}
		case p.esc == 2: // CSI ends with a byte in 0x40-0x7e
			if c >= 0x40 && c <= 0x7e {
				p.esc = 0
			}
		case c == 0x1b:
			p.esc = 1
		case c == '\n':
			p.line = append(p.line, c)
			p.emit()
		case c >= ' ' || c == '\t':
			p.line = append(p.line, c)
		}
	}
	return len(b), nil
}

func (p *prefixWriter) emit() {
	outputMu.Lock()
	io.WriteString(p.w, p.prefix)
	p.w.Write(p.line)
	outputMu.Unlock()
	p.line = p.line[:0]
}

// Flush writes a last unterminated line.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.line) > 0 {
		p.line = append(p.line, '\n')
		p.emit()
	}
}
