package hil

import (
	"slices"
	"testing"
)

// TestStatus: each event is reported as it happens, and the summary names
// every machine's state and port operations.
func TestStatus(t *testing.T) {
	var got []string
	ops := []uint64{0, 120}
	s := &status{report: func(m string) { got = append(got, m) }, states: make([]string, 2), ops: func(k int) uint64 { return ops[k] }}
	s.event(-1, "booting", "booting 2 machines")
	s.event(1, "booted", "pe1: booted")
	s.summary()
	s.event(-1, "running", "prog starts")
	s.event(0, "powered off", "pe0: exit 0")
	s.summary()
	want := []string{"booting 2 machines", "pe1: booted", "pe0 booting; pe1 booted, 120 port operations",
		"prog starts", "pe0: exit 0", "pe0 powered off; pe1 running, 120 port operations"}
	if !slices.Equal(got, want) {
		t.Errorf("reports\n%q, want\n%q", got, want)
	}
	(&status{states: make([]string, 1)}).summary() // no Progress: nothing to call
}

// TestWhat: progress and failure lines name the program or the command.
func TestWhat(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Program: "/tmp/build/hello", Args: []string{"-x"}}, "hello"},
		{Config{Args: []string{"selftest", "--port", "0x378"}}, "papersctl selftest --port 0x378"},
	} {
		if got := c.cfg.what(); got != c.want {
			t.Errorf("%+v: what() = %q, want %q", c.cfg, got, c.want)
		}
	}
}

// TestProgramEnv: a program gets ProgramTimeout unless its Env bounds the
// waits itself.
func TestProgramEnv(t *testing.T) {
	if got, want := (Config{}).programEnv(), []string{"PAPERS_TIMEOUT=1m0s"}; !slices.Equal(got, want) {
		t.Errorf("no Env: %q, want %q", got, want)
	}
	env := []string{"PAPERS_CHECKIN=3m", "PAPERS_TIMEOUT=20s"}
	if got := (Config{Env: env}).programEnv(); !slices.Equal(got, env) {
		t.Errorf("Env %q: %q, want it unchanged", env, got)
	}
}
