//go:build linux

package tests

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The data network's conformance cases as the processes of papersctl run:
// Split-C's global memory and Strata's messages between processes, over
// the shared-memory transport the launcher makes beside the board and
// removes with it.
func TestRunDataNet(t *testing.T) {
	ctl, prog := bin(t, "papersctl"), bin(t, "dataprog")
	dir := shmDir(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ctl, "run", "-n", "3", "-dir", dir, "--", prog)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	for k := range 3 {
		for _, c := range []string{"am-request-reply", "splitc-global-memory", "strata-messages-and-blocks"} {
			if want := fmt.Sprintf("[PE %d] ok %s\n", k, c); !strings.Contains(stdout.String(), want) {
				t.Errorf("no line %q in\n%s", want, stdout.String())
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// A PE killed while the others add to its memory: their waits end in an
// error naming it (its process died), not a hang or a timeout.
func TestRunDataNetDeadPE(t *testing.T) {
	ctl, prog := bin(t, "papersctl"), bin(t, "dataprog")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ctl, "run", "-n", "3", "-dir", shmDir(t), "-timeout", "60s", "--", prog, "-die", "2")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("the run succeeded with PE 2 killed\n%s%s", stdout.String(), stderr.String())
	}
	for k := range 2 {
		re := regexp.MustCompile(fmt.Sprintf(`\[PE %d\] .*PE 2 has left the data network: its process \(pid \d+\) died without leaving`, k))
		if !re.MatchString(stderr.String()) {
			t.Errorf("PE %d did not name PE 2 as dead:\n%s", k, stderr.String())
		}
	}
}

// The Libsplit-C report's two applications as papersctl run's processes:
// the matrix multiply's bulk gets and the radix sort's coalesce through
// stores, over the shared-memory data network; each checks its result.
// Each takes a -papers.* flag beside its own, as spmd.Main's programs do.
func TestRunSplitCApplications(t *testing.T) {
	ctl := bin(t, "papersctl")
	for _, tc := range []struct {
		prog string
		args []string
		want string
	}{
		{"matmul", []string{"-block", "32", "-papers.timeout", "20s"}, "[PE 0] matrix multiply: 64×64 matrices, 4 PEs, 32×32 blocks: result checked"},
		{"radixsort", []string{"-memory", "-papers.timeout", "20s", "-keys", "300"}, "coalesced through global memory (splitc stores): sorted and verified"},
	} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(ctl, append([]string{"run", "-n", "4", "-dir", shmDir(t), "--", bin(t, tc.prog)}, tc.args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%s: %v; want %q in\n%s%s", tc.prog, err, tc.want, stdout.String(), stderr.String())
		}
	}
}
