//go:build linux

package launch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// Run runs the program and returns when every process has ended. An error
// means the run could not start (bad N, missing program, board in use);
// failures of the program are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.PEs == 0 {
		cfg.PEs = cfg.First + cfg.N
	}
	if cfg.N < 1 || cfg.First < 0 || cfg.First+cfg.N > cfg.PEs {
		return nil, fmt.Errorf("launch: cannot start %d processes as PEs %d.. of a %d-PE board: give -n from 1 to 32", cfg.N, cfg.First, cfg.PEs)
	}
	if _, err := hw.SizeFor(cfg.PEs); err != nil {
		return nil, fmt.Errorf("launch: %d PEs: %w", cfg.PEs, err)
	}
	if cfg.Program == "" {
		return nil, errors.New("launch: no program to run: give it after --, e.g. papersctl run -n 4 -- ./prog")
	}
	prog, err := exec.LookPath(cfg.Program)
	if err != nil {
		return nil, fmt.Errorf("launch: program %q: %w", cfg.Program, err)
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
	board, path, owned, err := attach(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		board.Close()
		if owned {
			os.Remove(path)
		}
	}()
	r := &run{cfg: cfg, board: board, rep: &Report{Failed: -1, Board: path, Exits: make([]Exit, cfg.N)}}
	return r.rep, r.start(ctx, prog, path)
}

// attach creates the board, or joins the named board of a live run.
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
	if cfg.Board == "" {
		return nil, "", false, fmt.Errorf("launch: %w", err)
	}
	if b, oerr := emu.OpenShared(path); oerr == nil {
		if b.PEs() < cfg.First+cfg.N {
			b.Close()
			return nil, "", false, fmt.Errorf("launch: shared board %s has %d PEs, too few for PEs %d to %d", path, b.PEs(), cfg.First, cfg.First+cfg.N-1)
		}
		return b, path, false, nil
	}
	return nil, "", false, fmt.Errorf("launch: %w", err)
}

// sweep removes the boards of runs that crashed (their creator is gone).
func sweep(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, BoardPrefix+"*"))
	for _, p := range paths {
		if strings.HasSuffix(p, ".tmp") {
			continue
		}
		// CreateShared replaces a stale board; a live one is left alone.
		if b, err := emu.CreateShared(p, 1); err == nil {
			b.Close()
			os.Remove(p)
		}
	}
}

type run struct {
	cfg   Config
	board *emu.Board
	rep   *Report
	out   sync.Mutex // one line at a time on Stdout and Stderr
}

type exitEvent struct {
	k     int
	state *os.ProcessState
	err   error
	at    time.Time
}

func (r *run) start(ctx context.Context, prog, path string) error {
	cfg := r.cfg
	procs := make([]*os.Process, cfg.N)
	exits := make(chan exitEvent, cfg.N)
	var copiers sync.WaitGroup
	live := 0
	killAll := func(sig unix.Signal) {
		for _, p := range procs {
			if p != nil {
				p.Signal(sig)
			}
		}
	}
	for k := 0; k < cfg.N; k++ {
		pe := cfg.First + k
		cmd := exec.Command(prog, cfg.Args...)
		cmd.Env = append(os.Environ(), cfg.Env...)
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", spmd.EnvPE, pe), fmt.Sprintf("%s=%d", spmd.EnvPEs, cfg.PEs), spmd.EnvBoard+"="+spmd.SharedPrefix+path)
		if cfg.Timeout > 0 {
			cmd.Env = append(cmd.Env, spmd.EnvTimeout+"="+cfg.Timeout.String())
		}
		// Own process group: a terminal's ^C reaches the PEs once, through
		// the launcher. Pdeathsig: the PEs die with the launcher. (os/exec
		// takes package syscall's type.)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
		var err error
		var closers []io.Closer
		for _, s := range []struct {
			dst *io.Writer
			w   io.Writer
		}{{&cmd.Stdout, cfg.Stdout}, {&cmd.Stderr, cfg.Stderr}} {
			pr, pw, perr := os.Pipe()
			if perr != nil {
				err = perr
				break
			}
			*s.dst = pw
			closers = append(closers, pw)
			copiers.Add(1)
			go r.prefix(pe, pr, s.w, &copiers)
		}
		if err == nil {
			err = cmd.Start()
		}
		for _, c := range closers {
			c.Close()
		}
		if err != nil {
			killAll(unix.SIGKILL)
			for ; live > 0; live-- {
				<-exits
			}
			copiers.Wait()
			return fmt.Errorf("launch: start PE %d: %w", pe, err)
		}
		procs[k] = cmd.Process
		live++
		if cfg.Started != nil {
			cfg.Started(pe, cmd.Process)
		}
		go func() {
			err := cmd.Wait()
			exits <- exitEvent{k: k, state: cmd.ProcessState, err: err, at: time.Now()}
		}()
	}
	openDeadline := time.NewTimer(cfg.OpenTimeout)
	defer openDeadline.Stop()
	var grace <-chan time.Time
	// failed records the failure of PE First+k, the first one or the
	// belated exit of the PE already blamed, and aborts the board.
	blamedByPort := false
	failed := func(k int, status int, reason string) {
		pe := cfg.First + k
		switch {
		case r.rep.Failed == pe && blamedByPort: // now its own exit is known
			r.rep.Reason, r.rep.Status = reason, max(status, 1)
			blamedByPort = false
			return
		case r.rep.Failed >= 0:
			return
		}
		grace = time.After(cfg.Grace)
		if by, why, ok := r.board.Aborted(); ok && by != pe && by >= cfg.First && by < cfg.First+cfg.N {
			// The PEs' ports found PE by dead before its exit reached us:
			// this one is a survivor, stopping on the abort.
			r.rep.Failed, r.rep.Reason, r.rep.Status = by, why, 1
			blamedByPort = true
			return
		}
		r.rep.Failed, r.rep.Reason, r.rep.Status = pe, reason, max(status, 1)
		r.board.Abort(pe, reason)
		r.rep.Aborted = time.Now()
	}
	done := ctx.Done()
	for live > 0 {
		select {
		case e := <-exits:
			live--
			procs[e.k] = nil
			pe := cfg.First + e.k
			x := Exit{PE: pe, At: e.at, Status: e.state.ExitCode()}
			// os.ProcessState holds package syscall's type (x/sys/unix has
			// a WaitStatus of its own that it never matches).
			if ws, ok := e.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				x.Signal, x.Status = ws.Signal(), 128+int(ws.Signal())
			}
			// Abort first: PortInfo takes the board lock, which a PE
			// killed mid-write may hold until a waiter takes it over.
			switch {
			case x.Signal != nil:
				failed(e.k, x.Status, fmt.Sprintf("PE %d was killed by signal %v", pe, x.Signal))
			case x.Status != 0:
				failed(e.k, x.Status, fmt.Sprintf("PE %d exited with status %d", pe, x.Status))
			}
			info := r.board.PortInfo(pe)
			x.Noticed = info.Noticed
			r.rep.Exits[e.k] = x
			switch {
			case x.Status != 0:
			case !info.Opened:
				failed(e.k, 1, fmt.Sprintf("PE %d exited without opening the board (is %s a PAPERS program? it must call spmd.Main or spmd.Open)", pe, cfg.Program))
			case info.Holder != 0:
				failed(e.k, 1, fmt.Sprintf("PE %d exited without closing its PE (it still holds its port)", pe))
			}
		case <-openDeadline.C:
			for k, p := range procs {
				if p != nil && !r.board.PortInfo(cfg.First+k).Opened {
					failed(k, 1, fmt.Sprintf("PE %d did not open the board within %v (is %s a PAPERS program? it must call spmd.Main or spmd.Open)", cfg.First+k, cfg.OpenTimeout, cfg.Program))
					killAll(unix.SIGKILL)
					break
				}
			}
		case <-grace:
			killAll(unix.SIGKILL)
		case sig := <-cfg.Signals:
			if s, ok := sig.(unix.Signal); ok {
				killAll(s)
			}
		case <-done:
			done = nil
			killAll(unix.SIGTERM)
			grace = time.After(cfg.Grace)
		}
	}
	copiers.Wait()
	return nil
}

// prefix copies lines from rd to w, each prefixed with "[PE k] ".
func (r *run) prefix(pe int, rd *os.File, w io.Writer, wg *sync.WaitGroup) {
	defer wg.Done()
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
