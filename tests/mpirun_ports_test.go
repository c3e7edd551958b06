//go:build linux

package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

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
// mpirun, and global memory runs on the TCP data network. A PAPERS_PE that
// disagrees with mpirun is refused. A PE killed mid-run ends the job, and
// mpirun names it; the next run works at once.
func TestMpirunOnPorts(t *testing.T) {
	const n = 4
	dir := fuseBoard(t, n)
	port := "PAPERS_PORT=ppdev:" + dir + "/parport{pe}"
	for _, run := range []struct {
		prog string
		args []string
		want []string
	}{
		{"spmd", []string{"-rounds", "50"}, []string{"PE 0/4 sum=6\n", "PE 3/4 sum=6\n"}},
		{"matmul", []string{"-block", "32"}, []string{"result checked"}},
		{"radixsort", []string{"-keys", "300", "-memory"}, []string{"coalesced through global memory (splitc stores): sorted and verified"}},
		{"dataprog", nil, []string{"ok strata-messages-and-blocks"}},
	} {
		out, err := mpirunProgs(t, n, []string{port, "PAPERS_TIMEOUT=20s"}, time.Minute, bin(t, run.prog), run.args...)
		if err != nil {
			t.Errorf("mpirun %s: %v\n%s", run.prog, err, out)
			continue
		}
		for _, w := range run.want {
			if !strings.Contains(out, w) {
				t.Errorf("mpirun %s: no %q in\n%s", run.prog, w, out)
			}
		}
	}
	out, err := mpirunProgs(t, n, []string{port, "PAPERS_PE=1"}, time.Minute, bin(t, "spmd"))
	if err == nil || !strings.Contains(out, "disagree with the MPI launcher") {
		t.Errorf("PAPERS_PE=1 under mpirun: %v\n%s; want it refused", err, out)
	}
	out, err = mpirunProgs(t, n, []string{port, "PAPERS_TIMEOUT=5s"}, time.Minute, bin(t, "dataprog"), "-die", "2")
	if err == nil || !regexp.MustCompile(`rank 2 .*exited on signal 9`).MatchString(strings.ReplaceAll(out, "\n", " ")) {
		t.Errorf("PE 2 killed: mpirun %v; want it to name rank 2:\n%s", err, out)
	}
	// The board the killed run left behind serves the next run at once.
	out, err = mpirunProgs(t, n, []string{port, "PAPERS_TIMEOUT=20s"}, time.Minute, bin(t, "spmd"), "-rounds", "50")
	if err != nil || !strings.Contains(out, "PE 0/4 sum=6\n") {
		t.Errorf("the run after the killed one: %v\n%s", err, out)
	}
}
