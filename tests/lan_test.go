//go:build linux

package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// A real board's PCs, as a builder has them: the board emulated behind
// ppdev files (papersctl emu serve --fuse) and each PE a process of its
// own with PAPERS_PORT=ppdev:DIR/parportK — the port driver, which gives
// the PEs a TCP data network with nothing to configure (the addresses and
// the run's secret cross the board at check-in).

// fuseBoard serves an n-PE board's ppdev files in a new directory until
// the test ends.
func fuseBoard(t testing.TB, n int) string {
	t.Helper()
	testenv.FUSE(t)
	dir := t.TempDir()
	var log testenv.Buffer // written by the server while the test reads it
	cmd := exec.Command(bin(t, "papersctl"), "emu", "serve", "--fuse", dir, "--pes", fmt.Sprint(n))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("parport%d", n-1))); err == nil {
			return dir
		}
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("the board server ended (%v) before its ppdev files appeared:\n%s", err, log.String())
		default:
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the board's ppdev files did not appear:\n%s", log.String())
		}
	}
}

// onPorts runs prog as PEs 0 to n-1 on the board at dir and returns each
// PE's output and error.
func onPorts(t *testing.T, dir string, n int, timeout time.Duration, prog string, args ...string) ([]string, []error) {
	t.Helper()
	outs, errs := make([]string, n), make([]error, n)
	cmds := make([]*exec.Cmd, n)
	bufs := make([]bytes.Buffer, n)
	for k := range n {
		cmd := exec.Command(prog, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("PAPERS_PORT=ppdev:%s/parport%d", dir, k),
			fmt.Sprintf("PAPERS_PE=%d", k), fmt.Sprintf("PAPERS_PES=%d", n), "PAPERS_TIMEOUT="+timeout.String())
		cmd.Stdout, cmd.Stderr = &bufs[k], &bufs[k]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[k] = cmd
	}
	for k, cmd := range cmds {
		errs[k] = cmd.Wait()
		outs[k] = bufs[k].String()
	}
	return outs, errs
}

// TestLANApplications: the Libsplit-C report's two applications and the
// data network's conformance cases on 4 PEs of a board behind ppdev
// files, each checking its results.
func TestLANApplications(t *testing.T) {
	dir := fuseBoard(t, 4)
	for _, tc := range []struct {
		prog string
		args []string
		want string
	}{
		{"matmul", []string{"-block", "32"}, "matrix multiply: 64×64 matrices, 4 PEs, 32×32 blocks: result checked"},
		{"radixsort", []string{"-memory", "-keys", "300"}, "coalesced through global memory (splitc stores): sorted and verified"},
		{"dataprog", nil, "ok strata-messages-and-blocks"},
	} {
		start := time.Now()
		outs, errs := onPorts(t, dir, 4, 20*time.Second, bin(t, tc.prog), tc.args...)
		t.Logf("%s: %v", tc.prog, time.Since(start).Round(time.Millisecond))
		for k := range 4 {
			if errs[k] != nil {
				t.Errorf("%s: PE %d: %v\n%s", tc.prog, k, errs[k], outs[k])
			}
		}
		if !strings.Contains(outs[0], tc.want) {
			t.Errorf("%s: want %q in PE 0's output:\n%s", tc.prog, tc.want, outs[0])
		}
	}
}

// TestLANDeadPE: a PE killed while the others add to its memory over the
// TCP data network: each of them names it, from its connections' end, at
// its next look. They exit once the board has also been told (each
// announces its own failure, papers.PE.Abort, whose acknowledgment the
// dead PE never gives: the board's timeout).
func TestLANDeadPE(t *testing.T) {
	dir := fuseBoard(t, 4)
	const timeout = 5 * time.Second
	start := time.Now()
	outs, errs := onPorts(t, dir, 4, timeout, bin(t, "dataprog"), "-die", "2")
	took := time.Since(start)
	for k := range 4 {
		if k == 2 {
			continue
		}
		re := regexp.MustCompile(`PE 2 has left the data network: its connection ended without its leaving`)
		if errs[k] == nil || !re.MatchString(outs[k]) {
			t.Errorf("PE %d did not name PE 2 as dead (%v):\n%s", k, errs[k], outs[k])
		}
	}
	if took > 2*timeout+5*time.Second {
		t.Errorf("the run took %v, the timeout %v", took, timeout)
	}
}
