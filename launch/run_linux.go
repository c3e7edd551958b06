//go:build linux

package launch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/spmd"
	"github.com/ttlpapers/ttlpapers/spmd/shm"
)

// Run runs the program and returns when every process has ended. An error
// means the run could not start (bad N, missing program, board in use);
// failures of the program are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	prog, err := cfg.check()
	if err != nil {
		return nil, err
	}
	board, path, owned, err := attach(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		board.Close()
		if owned {
			os.Remove(path)
			os.Remove(shm.DataNetPath(path))
		}
	}()
	if owned {
		if err := shm.CreateDataNet(path, cfg.PEs); err != nil {
			return nil, fmt.Errorf("launch: the data network beside the board: %w", err)
		}
	}
	r := &run{cfg: cfg, board: board, path: path, procs: make([]*os.Process, cfg.N), exits: make(chan exitEvent, cfg.N),
		rep: &Report{Failed: -1, Board: path, Exits: make([]Exit, cfg.N)}}
	if err := r.startAll(prog); err != nil {
		return nil, err
	}
	r.watch(ctx)
	r.copiers.Wait()
	return r.rep, nil
}

// check validates the configuration, fills in the defaults and finds the
// program.
func (cfg *Config) check() (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("launch: %w", err)
	}
	cfg.PEs = cfg.BoardPEs()
	prog, err := exec.LookPath(cfg.Program)
	if err != nil {
		return "", fmt.Errorf("launch: program %q: %w", cfg.Program, err)
	}
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if cfg.OpenTimeout == 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	return prog, nil
}

// attach creates the board, or joins the named board of a live run when
// this run asks for only part of it (-pes and -first): same PE count, and
// this run's PEs free. A live board is never disturbed otherwise.
func attach(cfg Config) (b *emu.Board, path string, owned bool, err error) {
	sweep(cfg.Dir)
	name := cfg.Board
	if name == "" {
		var buf [6]byte
		rand.Read(buf[:])
		name = fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(buf[:]))
	}
	path = filepath.Join(cfg.Dir, BoardPrefix+name)
	b, err = emu.CreateShared(path, cfg.PEs)
	if err == nil {
		return b, path, true, nil
	}
	info, ierr := emu.InspectShared(path)
	if cfg.Board == "" || ierr != nil || !info.Live() {
		return nil, "", false, fmt.Errorf("launch: %w", err)
	}
	if cfg.N == cfg.PEs {
		return nil, "", false, fmt.Errorf("launch: %w", field.Errorf("Board", "board %q is in use by %s: choose another {Board} name; to share it, start each run with {PEs} TOTAL and its own {First}", cfg.Board, info.Users()))
	}
	if info.PEs != cfg.PEs {
		return nil, "", false, fmt.Errorf("launch: %w", field.Errorf("PEs", "board %q was created for %d PEs and this run asks for %d ({PEs}): give every run sharing it the same {PEs}", cfg.Board, info.PEs, cfg.PEs))
	}
	for pe := cfg.First; pe < cfg.First+cfg.N; pe++ {
		if info.Holders[pe] != 0 && info.Alive[pe] {
			return nil, "", false, fmt.Errorf("launch: %w", field.Errorf("First", "PE %d of board %q is already run by process %d (%s): give this run PEs of its own with {First}", pe, cfg.Board, info.Holders[pe], info.Users()))
		}
	}
	if b, err = emu.OpenShared(path); err != nil {
		return nil, "", false, fmt.Errorf("launch: %w", err)
	}
	return b, path, false, nil
}

// sweep removes this user's boards of runs that are over (their creator and
// every process that held a port are gone), and leftovers of creations
// that died half-way.
func sweep(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, BoardPrefix+"*"))
	for _, p := range paths {
		if emu.RemoveStale(p) {
			os.Remove(shm.DataNetPath(p))
		}
	}
}

type run struct {
	cfg     Config
	board   *emu.Board
	path    string
	rep     *Report
	procs   []*os.Process // by PE - First; nil once ended
	exits   chan exitEvent
	live    int
	copiers sync.WaitGroup
	out     sync.Mutex // one line at a time on Stdout and Stderr

	grace        <-chan time.Time // when the survivors of a failure are killed
	blamedByPort bool
}

type exitEvent struct {
	k     int
	state *os.ProcessState
	at    time.Time
}

// startAll starts the N processes; if one cannot start, it kills those
// already started and waits for them.
func (r *run) startAll(prog string) error {
	for k := range r.procs {
		if err := r.startPE(prog, k); err != nil {
			r.signalAll(unix.SIGKILL)
			for ; r.live > 0; r.live-- {
				<-r.exits
			}
			r.copiers.Wait()
			return fmt.Errorf("launch: start PE %d: %w", r.cfg.First+k, err)
		}
	}
	return nil
}

// startPE starts process k, with its output prefixed by its PE, and a
// goroutine that reports its end.
func (r *run) startPE(prog string, k int) error {
	cfg, pe := r.cfg, r.cfg.First+k
	cmd := exec.Command(prog, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", spmd.EnvPE, pe), fmt.Sprintf("%s=%d", spmd.EnvPEs, cfg.PEs),
		spmd.EnvPort+"="+shm.Prefix+r.path, fmt.Sprintf("%s=%016x", shm.EnvJob, r.board.Job()))
	if cfg.Timeout > 0 {
		cmd.Env = append(cmd.Env, spmd.EnvTimeout+"="+cfg.Timeout.String())
	}
	// Own process group: a terminal's ^C reaches the PEs once, through
	// the launcher. Pdeathsig: the PEs die with the launcher. (os/exec
	// takes package syscall's type.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, s := range []struct {
		dst *io.Writer
		w   io.Writer
	}{{&cmd.Stdout, cfg.Stdout}, {&cmd.Stderr, cfg.Stderr}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		*s.dst = pw
		closers = append(closers, pw)
		r.copiers.Add(1)
		go r.prefix(pe, pr, s.w)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.procs[k] = cmd.Process
	r.live++
	if cfg.Started != nil {
		cfg.Started(pe, cmd.Process)
	}
	go func() {
		cmd.Wait()
		r.exits <- exitEvent{k: k, state: cmd.ProcessState, at: time.Now()}
	}()
	return nil
}

// stopGrace is how long PEs get to exit after the launcher is asked to
// stop (SIGINT, SIGTERM, a cancelled context) before they are killed: every
// PE ends within a second, a stopped one included.
const stopGrace = 700 * time.Millisecond

// watch waits for every process to end, acting on exits, the open
// deadline, forwarded signals and the context.
func (r *run) watch(ctx context.Context) {
	openDeadline := time.NewTimer(r.cfg.OpenTimeout)
	defer openDeadline.Stop()
	done := ctx.Done()
	for r.live > 0 {
		select {
		case e := <-r.exits:
			r.live--
			r.procs[e.k] = nil
			r.exited(e)
		case <-openDeadline.C:
			r.checkOpened()
		case <-r.grace:
			r.signalAll(unix.SIGKILL)
		case sig := <-r.cfg.Signals:
			if s, ok := sig.(unix.Signal); ok {
				r.stop(s)
			}
		case <-done:
			done = nil
			r.stop(unix.SIGTERM)
		}
	}
}

// stop passes sig to every PE, wakes the stopped ones so that they can act
// on it, and kills what is left after stopGrace.
func (r *run) stop(sig unix.Signal) {
	r.signalAll(sig)
	r.signalAll(unix.SIGCONT)
	if r.grace == nil || r.cfg.Grace > stopGrace {
		r.grace = time.After(min(r.cfg.Grace, stopGrace))
	}
}

func (r *run) signalAll(sig unix.Signal) {
	for _, p := range r.procs {
		if p != nil {
			p.Signal(sig)
		}
	}
}

// exited records how process e.k ended and whether that fails the run.
func (r *run) exited(e exitEvent) {
	pe := r.cfg.First + e.k
	x := Exit{PE: pe, At: e.at, Status: e.state.ExitCode()}
	// os.ProcessState holds package syscall's type (x/sys/unix has a
	// WaitStatus of its own that it never matches).
	if ws, ok := e.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		x.Signal, x.Status = ws.Signal(), 128+int(ws.Signal())
	}
	info := r.board.PortInfo(pe)
	x.Noticed = info.Noticed
	r.rep.Exits[e.k] = x
	switch {
	case x.Signal != nil:
		r.failed(e.k, x.Status, fmt.Sprintf("PE %d was killed by signal %v", pe, x.Signal))
	case x.Status != 0 && len(info.Late) > 0:
		r.failedWaiting(e.k, x.Status, info)
	case x.Status != 0:
		r.failed(e.k, x.Status, fmt.Sprintf("PE %d exited with status %d", pe, x.Status))
	case !info.Opened:
		r.failed(e.k, 1, fmt.Sprintf("PE %d exited without opening the board (is %s a PAPERS program? it must call spmd.Main or spmd.Open)", pe, r.cfg.Program))
	case info.Holder != 0:
		r.failed(e.k, 1, fmt.Sprintf("PE %d exited without closing its PE (it still holds its port)", pe))
	}
}

// failedWaiting handles a PE that gave up waiting at a barrier: the run
// failed because of the PEs that did not arrive, which the report names.
func (r *run) failedWaiting(k, status int, info emu.PortInfo) {
	pe := r.cfg.First + k
	late := fmt.Sprintf("PE %d", info.Late[0])
	if len(info.Late) > 1 {
		ks := make([]string, len(info.Late))
		for i, l := range info.Late {
			ks[i] = strconv.Itoa(l)
		}
		late = "PEs " + strings.Join(ks, ", ")
	}
	reason := fmt.Sprintf("%s did not arrive at a barrier: PE %d waited until its timeout and exited with status %d", late, pe, status)
	r.failBlaming(info.Late[0], status, reason+r.stoppedNote(info.Late[0]))
}

// failed records the failure of PE First+k — the first one, or the belated
// exit of the PE the ports already blamed — and aborts the board.
func (r *run) failed(k, status int, reason string) {
	pe := r.cfg.First + k
	switch {
	case r.rep.Failed == pe && r.blamedByPort: // now its own exit is known
		r.rep.Reason, r.rep.Status = reason, max(status, 1)
		r.blamedByPort = false
		return
	case r.rep.Failed >= 0:
		return
	}
	if by, why, ok := r.board.Aborted(); ok && by != pe && by >= r.cfg.First && by < r.cfg.First+r.cfg.N {
		// The PEs' ports found PE by dead before its exit reached us: this
		// one is a survivor, stopping on the abort.
		r.startGrace()
		r.rep.Failed, r.rep.Reason, r.rep.Status = by, why+r.stoppedNote(by), 1
		r.blamedByPort = true
		return
	}
	r.failBlaming(pe, status, reason)
}

// failBlaming ends the run blaming pe: the board is aborted, so that every
// other PE stops at once, and the survivors get the grace period.
func (r *run) failBlaming(pe, status int, reason string) {
	if r.rep.Failed >= 0 {
		return
	}
	r.startGrace()
	r.rep.Failed, r.rep.Reason, r.rep.Status = pe, reason, max(status, 1)
	r.board.Abort(pe, reason)
	r.rep.Aborted = time.Now()
}

// stoppedNote says that PE pe's process is stopped, if it is one of this
// run's and it is.
func (r *run) stoppedNote(pe int) string {
	if i := pe - r.cfg.First; i >= 0 && i < len(r.procs) && r.procs[i] != nil && emu.Stopped(r.procs[i].Pid) {
		return fmt.Sprintf(" (PE %d's process is stopped)", pe)
	}
	return ""
}

func (r *run) startGrace() {
	if r.grace == nil {
		r.grace = time.After(r.cfg.Grace)
	}
}

// checkOpened fails the run if a PE has not opened the board by the open
// deadline.
func (r *run) checkOpened() {
	for k, p := range r.procs {
		if pe := r.cfg.First + k; p != nil && !r.board.PortInfo(pe).Opened {
			r.failed(k, 1, fmt.Sprintf("PE %d did not open the board within %v (is %s a PAPERS program? it must call spmd.Main or spmd.Open)", pe, r.cfg.OpenTimeout, r.cfg.Program))
			r.signalAll(unix.SIGKILL)
			return
		}
	}
}

// prefix copies lines from rd to w, each prefixed with "[PE k] ".
func (r *run) prefix(pe int, rd *os.File, w io.Writer) {
	defer r.copiers.Done()
	defer rd.Close()
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	tag := fmt.Sprintf("[PE %d] ", pe)
	for sc.Scan() {
		r.out.Lock()
		fmt.Fprintf(w, "%s%s\n", tag, sc.Bytes())
		r.out.Unlock()
	}
}
