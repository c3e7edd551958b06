//go:build linux

package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/conformance"
	"github.com/ttlpapers/ttlpapers/conformance/dataconf"
	"github.com/ttlpapers/ttlpapers/internal/hosts"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

var (
	mpiBinOnce sync.Once
	mpiBinDir  string
	mpiBinErr  error
)

// mpiBin builds the programs of the cross-host tests with -tags mpi once
// and returns the path of the one named.
func mpiBin(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		testenv.Missing(t, "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
	}
	mpiBinOnce.Do(func() {
		mpiBinDir, mpiBinErr = os.MkdirTemp("", "ttlpapers-mpi-")
		if mpiBinErr != nil {
			return
		}
		for name, pkg := range map[string]string{"spmd": "../examples/spmd", "matmul": "../examples/matmul", "radixsort": "../examples/radixsort", "dataprog": "./testdata/dataprog", "confprog": "./testdata/confprog"} {
			if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", filepath.Join(mpiBinDir, name), pkg).CombinedOutput(); err != nil {
				mpiBinErr = fmt.Errorf("go build -tags mpi %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if mpiBinErr != nil {
		t.Fatal(mpiBinErr)
	}
	return filepath.Join(mpiBinDir, name)
}

// acrossHosts runs prog with args under mpirun on the cluster, np ranks,
// bounded by limit, and returns mpirun's combined output.
func acrossHosts(t *testing.T, c *hosts.Cluster, np int, env []string, limit time.Duration, prog string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	a := []string{}
	for _, e := range env {
		a = append(a, "-x", e)
	}
	cmd := c.Mpirun(ctx, np, append(append(a, prog), args...)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun %s across %d hosts still running after %v:\n%s", filepath.Base(prog), len(c.Hosts), limit, out)
	}
	return string(out), err
}

// onHosts is one cluster test: the programs, which build runs them, and
// the environment they get.
type onHosts struct {
	bin func(testing.TB, string) string
	env []string
}

// TestMPIAcrossHosts runs the MPI backend on two emulated hosts of two
// ranks each, as on two computers of a cluster (package internal/hosts):
// the examples, Split-C's global memory among them (an MPI window that
// spans the hosts, with Debian's stock Open MPI configuration), both
// conformance suites, and a rank stopped on the other host.
func TestMPIAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs MPI jobs across emulated hosts; skipped with -short")
	}
	testenv.Long(t, "MPI jobs across emulated hosts")
	acrossHostsSuite(t, hosts.New(t, 2, 2), onHosts{bin: mpiBin})
}

// TestBoardAcrossHosts runs the same on a board's PCs: two emulated hosts
// of two PEs each, every PE on its port of one board (served as ppdev
// files, which every host sees), started by mpirun from builds without
// MPI, global memory over the TCP data network between the hosts.
func TestBoardAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs across emulated hosts; skipped with -short")
	}
	testenv.Long(t, "jobs across emulated hosts")
	dir := fuseBoard(t, 4) // before the hosts, which keep it of the machine's FUSE mounts
	acrossHostsSuite(t, hosts.New(t, 2, 2, dir), onHosts{bin: bin, env: []string{"PAPERS_PORT=ppdev:" + dir + "/parport{pe}"}})
}

func acrossHostsSuite(t *testing.T, c *hosts.Cluster, on onHosts) {
	const np = 4
	env := func(more ...string) []string { return append(append([]string{}, on.env...), more...) }
	for _, run := range []struct {
		prog string
		args []string
		want []string
	}{
		{"spmd", []string{"-rounds", "100"}, []string{"PE 0/4 sum=6", "PE 3/4 sum=6"}},
		{"radixsort", []string{"-keys", "500", "-memory"}, []string{"sorted and verified"}},
		{"matmul", []string{"-block", "32"}, []string{"result checked"}},
	} {
		out, err := acrossHosts(t, c, np, env(), 2*time.Minute, on.bin(t, run.prog), run.args...)
		if err != nil {
			t.Errorf("%s %v: %v\n%s", run.prog, run.args, err, out)
			continue
		}
		for _, w := range run.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s %v: no %q in\n%s", run.prog, run.args, w, out)
			}
		}
	}
	out, err := acrossHosts(t, c, np, env("CONF_DIR="+t.TempDir()), 2*time.Minute, on.bin(t, "confprog"))
	for _, cc := range conformance.Cases() {
		for k := range np {
			if line := fmt.Sprintf("PE %d: ok %s\n", k, cc.Name); !strings.Contains(out, line) {
				t.Errorf("conformance: no %q (%v) in\n%s", line, err, out)
			}
		}
	}
	out, err = acrossHosts(t, c, np, env(), 2*time.Minute, on.bin(t, "dataprog"))
	for _, cc := range dataconf.Cases() {
		if n := strings.Count(out, "ok "+cc.Name+"\n"); n != np {
			t.Errorf("data conformance: %d lines %q, want %d (%v):\n%s", n, "ok "+cc.Name, np, err, out)
		}
	}
	// PE 3, on host1, stops: the others' fetch_and_add on its memory end
	// within their timeout naming it, and mpirun ends the job. (The
	// timeout also bounds MPI's set-up, which a loaded machine can make
	// take seconds.)
	const timeout = 8 * time.Second
	out, err = acrossHosts(t, c, np, env("PAPERS_TIMEOUT="+timeout.String()), time.Minute, on.bin(t, "dataprog"), "-stop", "3")
	if err == nil {
		t.Errorf("mpirun exited 0 with a stopped PE:\n%s", out)
	}
	if !regexp.MustCompile(`PE [012]: fetch_and_add did not complete within ` + timeout.String() + `: no answer from PE 3`).MatchString(out) {
		t.Errorf("no PE says that PE 3 did not answer within %v:\n%s", timeout, out)
	}
}
