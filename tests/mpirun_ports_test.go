//go:build linux

package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// serveFuse serves an emulated board of n PEs as ppdev files
// (papersctl emu serve --fuse) for the rest of the test and returns their
// directory: DIR/parport0 … parport<n-1>.
func serveFuse(t *testing.T, n int) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil || ppdevfs.FusermountPath() == "" {
		testenv.Missing(t, "FUSE unavailable (/dev/fuse and fusermount3: apt-get install fuse3)")
	}
	dir := filepath.Join(t.TempDir(), "board")
	var log bytes.Buffer
	cmd := exec.Command(bin(t, "papersctl"), "emu", "serve", "--fuse", dir, "--pes", fmt.Sprint(n))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(unix.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("emu serve: %v\n%s", err, log.String())
		}
	})
	waitFor(t, 10*time.Second, "the board's ppdev files", func() bool {
		_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("parport%d", n-1)))
		return err == nil
	})
	return dir
}

// mpirunProgs runs prog under mpirun with the environment env (each
// passed with -x), bounded by limit, and returns its combined output.
func mpirunProgs(t *testing.T, np int, env []string, limit time.Duration, prog string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		testenv.Missing(t, "mpirun not found (apt-get install openmpi-bin)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	a := []string{"--oversubscribe", "-np", fmt.Sprint(np)}
	if os.Geteuid() == 0 {
		a = append(a, "--allow-run-as-root")
	}
	for _, e := range env {
		a = append(a, "-x", e)
	}
	out, err := exec.CommandContext(ctx, "mpirun", append(append(a, prog), args...)...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun %s still running after %v:\n%s", prog, limit, out)
	}
	return string(out), err
}

// TestMpirunOnPorts: PCs that share a board, started together by mpirun
// from a build without MPI, each on its own port (one emulated board behind
// ppdev files, ports named with {pe}): each PE takes its id and count from
// mpirun. A PAPERS_PE that disagrees with mpirun is refused.
func TestMpirunOnPorts(t *testing.T) {
	const n = 4
	dir := serveFuse(t, n)
	port := "PAPERS_PORT=ppdev:" + dir + "/parport{pe}"
	out, err := mpirunProgs(t, n, []string{port}, time.Minute, bin(t, "spmd"), "-rounds", "50")
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	for k := range n {
		if want := fmt.Sprintf("PE %d/%d sum=6\n", k, n); !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	out, err = mpirunProgs(t, n, []string{port, "PAPERS_PE=1"}, time.Minute, bin(t, "spmd"))
	if err == nil || !strings.Contains(out, "disagree with the MPI launcher") {
		t.Errorf("PAPERS_PE=1 under mpirun: %v\n%s; want it refused", err, out)
	}
}
