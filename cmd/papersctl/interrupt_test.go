//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// terminalLog collects what a program writes to a terminal and tells when
// a text has appeared.
type terminalLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	seen   chan struct{} // closed when want appears
	closed bool          // seen is closed
	want   string
	done   chan struct{} // closed when the terminal is closed on every side
}

func watchTerminal(r io.Reader, want string) *terminalLog {
	l := &terminalLog{seen: make(chan struct{}), want: want, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			l.mu.Lock()
			l.buf.Write(b[:n])
			if !l.closed && strings.Contains(l.buf.String(), l.want) {
				close(l.seen)
				l.closed = true
			}
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return l
}

func (l *terminalLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestBenchProgressAndInterrupt runs bench with stderr on a terminal: it
// shows a progress line, and ^C (SIGINT) prints the operations measured
// so far and exits 130.
func TestBenchProgressAndInterrupt(t *testing.T) {
	bin := build(t)
	tty, master := testenv.OpenPTY(t)
	// The ^C must come while the third or fourth operation runs, not
	// after the last: a tolerance no measurement reaches makes each run
	// its whole cap, long beside the lag of a loaded machine between the
	// progress line and the ^C (at 2 s and the default tolerance they
	// ended in milliseconds, and at load 18 the ^C came after the last).
	cmd := exec.Command(bin, "bench", "--pes", "2", "--ops", "barrier,nand4,any,all", "--max-time", "3s", "--tolerance", "1e-9")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	term := watchTerminal(master, "bench: 3/4")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.seen: // two operations measured
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("no progress line after a minute; terminal:\n%q", term.String())
	}
	cmd.Process.Signal(unix.SIGINT)
	err := cmd.Wait()
	tty.Close()
	<-term.done // read to the end
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("after ^C: %v, want exit status 130", err)
	}
	out := stdout.String()
	rows := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = true
		}
	}
	for _, op := range []string{"barrier", "nand4"} {
		if !rows[op] {
			t.Errorf("the table lacks %s, measured before ^C:\n%s", op, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("progress went to stdout:\n%q", out)
	}
	if !strings.Contains(term.String(), "stopped by interrupt") {
		t.Errorf("the terminal was not told why bench stopped:\n%q", term.String())
	}
}

// TestBenchQuietOffTerminal: without a terminal, stderr gets no progress.
func TestBenchQuietOffTerminal(t *testing.T) {
	_, stderr, status := runCLI("bench", "--pes", "2", "--ops", "barrier", "--max-time", "10ms")
	if status != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing on stderr", status, stderr)
	}
}
