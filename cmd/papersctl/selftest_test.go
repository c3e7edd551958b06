package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// build compiles papersctl once for the exec tests.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "papersctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type cliReport struct {
	Pass    bool              `json:"pass"`
	Backend string            `json:"backend"`
	PEs     int               `json:"pes"`
	PortOps map[string]uint64 `json:"port_ops"`
	Checks  []struct {
		Name string `json:"name"`
		Pass bool   `json:"pass"`
		Line string `json:"line"`
		Pin  int    `json:"pin"`
	} `json:"checks"`
}

func TestSelftestCommand(t *testing.T) {
	bin := build(t)
	run := func(args ...string) (cliReport, int) {
		cmd := exec.Command(bin, append([]string{"selftest", "--json"}, args...)...)
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var r cliReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%v: output is not JSON: %v\n%s", args, err, out)
		}
		return r, code
	}
	r, code := run()
	if code != 0 || !r.Pass || r.Backend != "emulator" || r.PEs != 4 || r.PortOps["barrier"] != 2 || r.PortOps["nand"] != 5 {
		t.Errorf("healthy: exit %d, pass %v, backend %q, pes %d, port_ops %v", code, r.Pass, r.Backend, r.PEs, r.PortOps)
	}
	r, code = run("--inject", "PE1.Busy=stuck0", "--pes", "2")
	if code != 1 || r.Pass {
		t.Fatalf("PE1.Busy=stuck0: exit %d, pass %v; want exit 1, pass false", code, r.Pass)
	}
	for _, c := range r.Checks {
		if !c.Pass && (c.Line != "Busy" || c.Pin != 11) {
			t.Errorf("failed check %q names line %q pin %d, want Busy pin 11", c.Name, c.Line, c.Pin)
		}
	}
}
