//go:build linux

package launch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/peset"
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
		err = shm.CreateDataNet(path, cfg.PEs)
	} else {
		err = shm.WaitDataNet(path, dataNetWait)
	}
	if err != nil {
		return nil, fmt.Errorf("launch: the data network beside the board: %w", err)
	}
	reports, err := os.MkdirTemp("", "papers-reports-")
	if err != nil {
		return nil, fmt.Errorf("launch: a directory for the PEs' reports: %w", err)
	}
	defer os.RemoveAll(reports)
	r := &run{cfg: cfg, board: board, path: path, reports: reports, procs: make([]*os.Process, cfg.N), groups: make([]int, cfg.N),
		exits: make(chan exitEvent, cfg.N), pending: -1, rep: &Report{Failed: -1, Board: path, Exits: make([]Exit, cfg.N)}}
	if err := r.startAll(prog); err != nil {
		return nil, err
	}
	r.watch(ctx)
	r.finish()
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

// dataNetWait bounds how long a run joining another run's board waits for
// the data network that run makes right after the board.
const dataNetWait = 5 * time.Second

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
	if errno := unix.Errno(0); errors.As(err, &errno) && (errors.Is(errno, fs.ErrPermission) || errno == unix.EROFS) {
		return nil, "", false, fmt.Errorf("launch: cannot create board %q in directory %s (%v): give -dir a directory you can write to", name, cfg.Dir, errno)
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
	reports string // where the PEs write their reports (pereport.Env)
	rep     *Report
	procs   []*os.Process // by PE - First; nil once reaped
	// groups are the PEs' process groups (each PE leads one), by PE -
	// First; 0 once the group is known to be empty. A group outlives its
	// PE while the PE's children live, and its id cannot be reused
	// meanwhile: signals sent to it reach the PE and whatever it started
	// (unless that left the group, as a daemon does on purpose). Process
	// groups need nothing beyond POSIX; a cgroup would also catch
	// processes that leave their group, but needs a delegated cgroup
	// tree that an ordinary user's session may not have.
	groups  []int
	pipes   []*os.File // read ends of the PEs' output pipes
	exits   chan exitEvent
	live    int
	copiers sync.WaitGroup
	out     sync.Mutex // one line at a time on Stdout and Stderr

	grace   <-chan time.Time // when the survivors of a failure are killed
	stops   int              // stop signals (or a cancelled context) received
	decided bool             // the report's cause is recorded
	// pending is the PE whose death the ports found before its exit
	// reached the launcher (-1: none): its exit, when it comes, says how
	// it died.
	pending int
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
			r.expire(time.Now())
			r.copiers.Wait()
			return fmt.Errorf("launch: start PE %d: %w", r.cfg.First+k, err)
		}
	}
	return nil
}

// startPE starts process k in a process group of its own, with its output
// prefixed by its PE, and a goroutine that reports its end.
func (r *run) startPE(prog string, k int) error {
	cfg, pe := r.cfg, r.cfg.First+k
	cmd := exec.Command(prog, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", spmd.EnvPE, pe), fmt.Sprintf("%s=%d", spmd.EnvPEs, cfg.PEs),
		spmd.EnvPort+"="+shm.Prefix+r.path, fmt.Sprintf("%s=%016x", shm.EnvJob, r.board.Job()), pereport.Env+"="+r.reportPath(k))
	if cfg.Timeout > 0 {
		cmd.Env = append(cmd.Env, spmd.EnvTimeout+"="+cfg.Timeout.String())
	}
	// Own process group: a terminal's ^C reaches the PEs once, through
	// the launcher, and the launcher's signals reach what each PE starts.
	// Pdeathsig: the PEs die with the launcher. (os/exec takes package
	// syscall's type.)
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
		r.pipes = append(r.pipes, pr)
		r.copiers.Add(1)
		go r.prefix(pe, pr, s.w)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.procs[k], r.groups[k] = cmd.Process, cmd.Process.Pid
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

// reportPath is where process k writes its report.
func (r *run) reportPath(k int) string {
	return filepath.Join(r.reports, fmt.Sprintf("pe%d.json", r.cfg.First+k))
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
			r.ended(e)
		case <-openDeadline.C:
			r.checkOpened()
		case <-r.grace:
			r.signalAll(unix.SIGKILL)
		case sig := <-r.cfg.Signals:
			r.stop(sig, "")
		case <-done:
			done = nil
			r.stop(unix.SIGTERM, "stopped: "+context.Cause(ctx).Error())
		}
	}
}

// finish waits, once every PE has ended, for what they left behind: output
// still to copy, processes still in their groups. It gives them the grace
// period (less after a stop, none after a second one), then kills the
// groups and stops copying, so the run never outlives its PEs by more.
func (r *run) finish() {
	grace := r.cfg.Grace
	switch {
	case r.stops > 1:
		grace = 0
	case r.stops == 1:
		grace = min(grace, stopGrace)
	}
	end := time.Now().Add(grace)
	r.expire(end)
	copied := make(chan struct{})
	go func() {
		r.copiers.Wait()
		close(copied)
	}()
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-copied:
			copied = nil
		case <-poll.C:
		case sig := <-r.cfg.Signals:
			r.stop(sig, "")
			// A stop shortens what is left of the grace period as it
			// would the PEs'; a second one ends it now.
			soon := time.Now().Add(min(grace, stopGrace))
			if r.stops > 1 {
				soon = time.Now()
			}
			if soon.Before(end) {
				end = soon
				r.expire(end)
				deadline.Reset(time.Until(end))
			}
		case <-deadline.C:
			if r.rep.Lingered = r.lingering(); len(r.rep.Lingered) > 0 {
				r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("what %s started was still running at the end of the grace period after the PEs ended: killed its process group", peset.Of(r.rep.Lingered...)))
			}
			r.signalAll(unix.SIGKILL)
			r.expire(time.Now())
			r.copiers.Wait()
			// A kill is delivered, not done, when kill returns: see the
			// processes gone (a moment) before the board goes.
			for gone := time.Now().Add(time.Second); len(r.lingering()) > 0 && time.Now().Before(gone); {
				time.Sleep(5 * time.Millisecond)
			}
			return
		}
		if copied == nil && len(r.lingering()) == 0 {
			return
		}
	}
}

// lingering returns the PEs whose process groups still have running
// processes. Dead ones do not count: an orphan's zombie stays in its group
// until init reaps it, which some inits do only now and then.
func (r *run) lingering() []int {
	var pes []int
	for k, g := range r.groups {
		if g != 0 && unix.Kill(-g, 0) == unix.ESRCH {
			r.groups[k] = 0
		}
		if r.groups[k] != 0 && groupRunning(g) {
			pes = append(pes, r.cfg.First+k)
		}
	}
	return pes
}

// groupRunning reports whether a process of group g is alive (not a
// zombie), from /proc.
func groupRunning(g int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume it is
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if state, group, ok := procStat(pid); ok && group == g && state != 'Z' && state != 'X' {
				return true
			}
		}
	}
	return false
}

// procStat returns process pid's state letter and process group, from
// /proc/pid/stat; ok is false if it does not exist.
func procStat(pid int) (state byte, group int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')') // after the command: state, parent, group
	if err != nil || i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	group, err = strconv.Atoi(f[2])
	return f[0][0], group, err == nil
}

// expire makes the output copiers stop reading at t.
func (r *run) expire(t time.Time) {
	for _, p := range r.pipes {
		p.SetReadDeadline(t)
	}
}

// stop acts on a stop signal (why: the reason to report, "" for "stopped
// by" the signal): the first one, unless a failure came before it, is the
// run's outcome; it is passed to every PE's group, the stopped PEs are
// woken so that they can act on it, and what is left is killed after
// stopGrace. A second one kills every group at once.
func (r *run) stop(sig os.Signal, why string) {
	r.stops++
	if r.stops > 1 {
		r.signalAll(unix.SIGKILL)
		r.expire(time.Now())
		return
	}
	s, ok := sig.(unix.Signal)
	if !ok {
		s = unix.SIGTERM
	}
	if why == "" {
		why = fmt.Sprintf("stopped by %v", sig)
	}
	if r.decide(-1, stop.Status(s), why) {
		r.rep.Signal = s
	}
	r.signalAll(s)
	r.signalAll(unix.SIGCONT)
	if r.grace == nil || r.cfg.Grace > stopGrace {
		r.grace = time.After(min(r.cfg.Grace, stopGrace))
	}
}

// signalAll sends sig to every PE's process group, and to a PE that left
// its group.
func (r *run) signalAll(sig unix.Signal) {
	for k, g := range r.groups {
		if g == 0 {
			continue
		}
		if unix.Kill(-g, sig) == unix.ESRCH {
			r.groups[k] = 0
			if p := r.procs[k]; p != nil {
				p.Signal(sig)
			}
		}
	}
}

// ended records how process e.k ended and whether that fails the run.
func (r *run) ended(e exitEvent) {
	pe := r.cfg.First + e.k
	x := Exit{PE: pe, At: e.at, Status: e.state.ExitCode()}
	// os.ProcessState holds package syscall's type (x/sys/unix has a
	// WaitStatus of its own that it never matches).
	if ws, ok := e.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		x.Signal, x.Status = ws.Signal(), 128+int(ws.Signal())
	}
	info := r.board.PortInfo(pe)
	x.Noticed = info.Noticed
	var err error
	if x.Report, err = pereport.Read(r.reportPath(e.k)); err != nil {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("PE %d: %v", pe, err))
	}
	r.rep.Exits[e.k] = x
	// The PEs its error names, unless the ports found another PE dead
	// first (failed: the cause is that one, and its exit says how it
	// died). The ports may find this PE's own exit before the launcher
	// does: its error still says whom it waited for.
	var named []int
	if by, _, aborted := r.board.Aborted(); !aborted || by == pe {
		named = r.namedOthers(pe, x.Report)
	}
	switch {
	case x.Signal != nil:
		r.failed(e.k, x.Status, fmt.Sprintf("PE %d was killed by signal %v", pe, x.Signal))
	case x.Status != 0 && len(info.Late) > 0:
		r.failedWaiting(x.Status, fmt.Sprintf("%s did not arrive at a barrier: PE %d waited until its timeout and exited with status %d", peset.Of(info.Late...), pe, x.Status), info.Late)
	case x.Status != 0 && len(named) > 0:
		if r.pending == pe { // blamed for its exit, which a survivor's report found first
			r.decided, r.pending = false, -1
		}
		r.failedWaiting(x.Status, fmt.Sprintf("%s named by the error of PE %d (%s), which exited with status %d", peset.Of(named...), pe, x.Report.What(), x.Status), named)
	case x.Status != 0:
		reason := fmt.Sprintf("PE %d exited with status %d", pe, x.Status)
		if s := r.stoppedOther(pe); s >= 0 {
			// A stopped PE holds every other up, in check-in as at a
			// barrier: it is the likelier cause of one that gave up.
			r.failBlaming(s, x.Status, fmt.Sprintf("PE %d's process is stopped: %s while it waited", s, reason))
			return
		}
		r.failed(e.k, x.Status, reason)
	case !info.Opened:
		r.failed(e.k, 1, fmt.Sprintf("PE %d exited without opening the board (is %s a PAPERS program? it must call spmd.Main or spmd.Open)", pe, r.cfg.Program))
	case info.Holder != 0:
		r.failed(e.k, 1, fmt.Sprintf("PE %d exited without closing its PE (it still holds its port)", pe))
	}
}

// namedOthers are the PEs of this run, other than pe, that pe's report
// names as the cause of its failure; none when it names itself.
func (r *run) namedOthers(pe int, rep *pereport.Report) []int {
	if rep == nil || rep.Names(pe) {
		return nil
	}
	var named []int
	for _, k := range rep.Named {
		if k >= r.cfg.First && k < r.cfg.First+r.cfg.N {
			named = append(named, k)
		}
	}
	return named
}

// failedWaiting handles a PE that gave up waiting for others (the board
// saw them late at a barrier, or the PE's error named them): the run
// failed because of them, which reason names.
func (r *run) failedWaiting(status int, reason string, others []int) {
	// Of several, a stopped one is the likelier cause (the others may
	// just be slow to be scheduled): blame it.
	blamed := others[0]
	for _, l := range others {
		if r.stopped(l) {
			blamed = l
			break
		}
	}
	r.failBlaming(blamed, status, reason+r.stoppedNote(blamed))
}

// failed records the failure of PE First+k, if it is the first cause —
// or the exit of the PE whose death the ports found first, which says
// how it died — and aborts the board.
func (r *run) failed(k, status int, reason string) {
	pe := r.cfg.First + k
	if r.pending == pe { // the cause, now known in full
		r.rep.Reason, r.rep.Status, r.pending = reason, max(status, 1), -1
		return
	}
	if r.decided {
		return
	}
	if by, why, ok := r.board.Aborted(); ok && by != pe && by >= r.cfg.First && by < r.cfg.First+r.cfg.N {
		// The PEs' ports found PE by dead, or holding them up, before its
		// own exit reached the launcher: this one is a survivor, stopping
		// on the abort.
		r.decide(by, 1, why+r.stoppedNote(by))
		r.startGrace()
		if p := r.procs[by-r.cfg.First]; p == nil || hasEnded(p.Pid) {
			// Dead already, by its own hand or another's: its exit will
			// say how. One still running (stopped, hung) keeps this
			// reason, whatever the grace period's kill then does.
			r.pending = by
		}
		return
	}
	r.failBlaming(pe, status, reason)
}

// failBlaming ends the run blaming pe, unless it already has a cause: the
// board is aborted, so that every other PE stops at once, and the
// survivors get the grace period.
func (r *run) failBlaming(pe, status int, reason string) {
	if !r.decide(pe, status, reason) {
		return
	}
	r.startGrace()
	r.board.Abort(pe, reason)
	r.rep.Aborted = time.Now()
}

// decide records the run's outcome unless it has one: the first cause
// wins.
func (r *run) decide(pe, status int, reason string) bool {
	if r.decided {
		return false
	}
	r.decided = true
	r.rep.Failed, r.rep.Reason, r.rep.Status = pe, reason, max(status, 1)
	return true
}

// hasEnded reports whether the launcher's child pid has ended, reaped or
// not, without reaping it.
func hasEnded(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == unix.ECHILD || err == nil && info.Signo == int32(unix.SIGCHLD) {
		return true
	}
	// Being reaped by the goroutine waiting for it: no longer waitable,
	// not yet gone.
	state, _, ok := procStat(pid)
	return !ok || state == 'Z' || state == 'X'
}

// stopped reports whether PE pe's process, one of this run's, is stopped.
func (r *run) stopped(pe int) bool {
	i := pe - r.cfg.First
	return i >= 0 && i < len(r.procs) && r.procs[i] != nil && emu.Stopped(r.procs[i].Pid)
}

// stoppedNote says that PE pe's process is stopped, if it is.
func (r *run) stoppedNote(pe int) string {
	if r.stopped(pe) {
		return fmt.Sprintf(" (PE %d's process is stopped)", pe)
	}
	return ""
}

// stoppedOther returns a PE of this run other than pe whose process is
// stopped, or -1.
func (r *run) stoppedOther(pe int) int {
	for k := range r.procs {
		if other := r.cfg.First + k; other != pe && r.stopped(other) {
			return other
		}
	}
	return -1
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

// maxLine is the longest piece of a line written at once: a longer line
// is written in pieces of maxLine bytes, each prefixed and ended as a line
// of its own, so that no PE's output waits on another's unfinished line.
const maxLine = 64 << 10

// prefix copies lines from rd to w, each prefixed with "[PE k] " and
// written whole, so that the PEs' lines never mix. It reads to the end of
// the output (or the deadline expire sets): a line of any length passes,
// in pieces, and never makes a PE's write fail.
func (r *run) prefix(pe int, rd *os.File, w io.Writer) {
	defer r.copiers.Done()
	defer rd.Close()
	tag := fmt.Sprintf("[PE %d] ", pe)
	line := append(make([]byte, 0, len(tag)+maxLine+1), tag...)
	flush := func() {
		r.out.Lock()
		w.Write(append(line, '\n'))
		r.out.Unlock()
		line = line[:len(tag)]
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := rd.Read(buf)
		for data := buf[:n]; len(data) > 0; {
			end := bytes.IndexByte(data, '\n')
			nl := end >= 0
			if !nl {
				end = len(data)
			}
			if room := maxLine - (len(line) - len(tag)); end > room {
				end = room
				line = append(line, data[:end]...)
				data = data[end:]
				flush()
				continue
			}
			line = append(line, data[:end]...)
			data = data[end:]
			if nl {
				data = data[1:]
				flush()
			}
		}
		if err != nil {
			if len(line) > len(tag) {
				flush()
			}
			return
		}
	}
}
