package spmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
	"github.com/ttlpapers/ttlpapers/spmd/shm"
)

// failAbsent is TestReport's failing program: its error, wrapped, is a
// collective's that needed PE 3.
func failAbsent(p *papers.PE) error {
	return fmt.Errorf("the sum: %w", &papers.AbsentError{PE: p.Self(), Op: "reduce", Missing: 1 << 3, Why: "root"})
}

// TestReport: a PE that fails writes its error as data to the file
// PAPERS_REPORT names — the stage, the exit status, its PE, and what the
// error's value says — whether its command line or configuration is
// refused, its program returns an error, or it panics; one that is quiet
// about a wrong command line (not PE 0 under a launcher) still reports it.
func TestReport(t *testing.T) {
	board := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(board, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	onBoard := []string{spmd.EnvPE + "=0", spmd.EnvPEs + "=1", spmd.EnvPort + "=" + shm.Prefix + board}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want pereport.Report // Cause aside
	}{
		{"bad flag", []string{"SPMD_USAGE_HELPER=1"}, []string{"-bogus"},
			pereport.Report{Stage: pereport.Setup, Kind: pereport.Other, Status: 2, PE: -1}},
		{"unreadable variable", []string{"SPMD_USAGE_HELPER=1", spmd.EnvPE + "=one"}, nil,
			pereport.Report{Stage: pereport.Setup, Kind: pereport.Other, Status: 2, PE: -1}},
		{"quiet PE 2", []string{"SPMD_USAGE_HELPER=1", spmd.EnvPE + "=2", spmd.EnvPEs + "=4", spmd.EnvPort + "=shm:/dev/shm/papers-none", spmd.EnvTimeout + "=-1s"}, nil,
			pereport.Report{Stage: pereport.Setup, Kind: pereport.Other, Status: 2, PE: 2}},
		{"no PE count", []string{"SPMD_USAGE_HELPER=1", spmd.EnvPE + "=0"}, nil,
			pereport.Report{Stage: pereport.Setup, Kind: pereport.Other, Status: 1, PE: 0}},
		{"program error", append([]string{"SPMD_TEST_ROLE=absent"}, onBoard...), nil,
			pereport.Report{Stage: pereport.Run, Kind: pereport.Absent, Status: 1, PE: 0, Op: "reduce", Named: []int{3}}},
		{"panic", append([]string{"SPMD_TEST_ROLE=panic"}, onBoard...), nil,
			pereport.Report{Stage: pereport.Run, Kind: pereport.Panic, Status: 2, PE: 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			status, stderr := testProcess(t, append(c.env, pereport.Env+"="+path), c.args...)
			r, err := pereport.Read(path)
			if err != nil || r == nil {
				t.Fatalf("exit %d, stderr %q: report %v, %v", status, stderr, r, err)
			}
			if r.Cause == "" {
				t.Errorf("the report has no cause: %+v", r)
			}
			r.Cause = ""
			if status != c.want.Status || !reflect.DeepEqual(*r, c.want) {
				t.Errorf("exit %d, report %+v; want %+v", status, *r, c.want)
			}
		})
	}
	// A PE that does not fail writes none.
	path := filepath.Join(t.TempDir(), "report.json")
	if status, stderr := mainProcess(t, append(onBoard, pereport.Env+"="+path)); status != 0 {
		t.Fatalf("a PE that returns nil: exit %d, %s", status, stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a PE that did not fail wrote a report (%v)", err)
	}
}
