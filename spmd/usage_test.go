package spmd_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// The test binary doubles as a PAPERS program for TestUsage: with
// SPMD_USAGE_HELPER set it is one, its command line the program's.
func init() {
	if os.Getenv("SPMD_USAGE_HELPER") != "" {
		spmd.Main(func(*papers.PE) error { return nil })
	}
}

// mainProcess runs the helper program with env and args and returns its
// exit status and stderr.
func mainProcess(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	return testProcess(t, append(env, "SPMD_USAGE_HELPER=1"), args...)
}

// testProcess runs the test binary in the role env gives it, with args,
// and returns its exit status and stderr.
func testProcess(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// TestUsage: a wrong command line or environment exits 2 before anything
// opens, with a message naming the variable or flag; under papersctl run
// (a shared-memory board) only PE 0 prints it, so that N PEs do not print
// the same usage N times.
func TestUsage(t *testing.T) {
	shm := func(pe string) []string {
		return []string{spmd.EnvPE + "=" + pe, spmd.EnvPEs + "=4", spmd.EnvPort + "=shm:/dev/shm/papers-none"}
	}
	for _, c := range []struct {
		name   string
		env    []string
		args   []string
		status int
		want   string // in stderr; "" means stderr must be empty
	}{
		{"bad flag, PE 0", shm("0"), []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"bad flag, PE 2", shm("2"), []string{"-bogus"}, 2, ""},
		{"help, PE 0", shm("0"), []string{"-h"}, 0, "-papers.pe"},
		{"help, PE 3", shm("3"), []string{"-h"}, 0, ""},
		{"bad flag on a real port speaks", []string{spmd.EnvPE + "=2", spmd.EnvPEs + "=4", spmd.EnvPort + "=port:0x378"}, []string{"-bogus"}, 2, "-bogus"},
		{"bad flag on ports under mpirun, PE 0", []string{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", spmd.EnvPort + "=port:0x378"}, []string{"-bogus"}, 2, "-bogus"},
		{"bad flag on ports under mpirun, PE 2", []string{"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", spmd.EnvPort + "=port:0x378"}, []string{"-bogus"}, 2, ""},
		{"PE count beyond the board", shm("0"), []string{"-papers.pes", "40"}, 2, "PAPERS_PES (-papers.pes) 40: need 1 to 32"},
		{"PE id beyond the count", nil, []string{"-papers.pe", "4", "-papers.pes", "4"}, 2, "PAPERS_PE (-papers.pe) 4: need 0 to 3"},
		{"negative PE id", []string{spmd.EnvPE + "=-1", spmd.EnvPEs + "=4", spmd.EnvPort + "=port:0x378"}, nil, 2, "PAPERS_PE=-1 is negative"},
		{"unreadable variable", []string{spmd.EnvPE + "=one"}, nil, 2, `PAPERS_PE="one" is not a whole number`},
		{"bad board", []string{spmd.EnvPE + "=0", spmd.EnvPEs + "=2", spmd.EnvPort + "=port:zzz"}, nil, 2, "port base"},
		{"the old flag name", []string{spmd.EnvPE + "=0", spmd.EnvPEs + "=2"}, []string{"-papers.board", "port:zzz"}, 2, "port base"},
		{"negative timeout", shm("0"), []string{"-papers.timeout", "-1s"}, 2, "PAPERS_TIMEOUT (-papers.timeout) -1s"},
	} {
		status, stderr := mainProcess(t, c.env, c.args...)
		if status != c.status || c.want == "" && stderr != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, status, stderr, c.status, c.want)
		}
	}
}
