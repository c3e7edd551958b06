package hil

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
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

// TestExitOf: the host reads a machine's exit status, and a failing
// program's report, as the guest wrote them, out of the boot noise; a
// console without them says so.
func TestExitOf(t *testing.T) {
	want := &pereport.Report{Stage: pereport.Run, Kind: pereport.Timeout, Status: 1, PE: 2, Op: "barrier", Named: []int{1},
		Cause: "papers: PE 2: barrier did not complete within 2s: PE 1 did not answer the roll call that followed\n(and a second line)"}
	js, err := json.Marshal(guestExit{Status: 1, Report: want})
	if err != nil {
		t.Fatal(err)
	}
	console := "[    1.2] random: crng init done\r\n" + qemu.FormatResult(readyResult, nil, "") + "\n" +
		"noise " + qemu.FormatData(exitResult, false, string(js)) + "\r\n[    9.9] reboot: Power down\n"
	if status, got := exitOf([]byte(console)); status != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("exitOf = %d, %+v; want 1, %+v", status, got, want)
	}
	if status, got := exitOf([]byte(qemu.FormatData(exitResult, true, `{"status":0}`))); status != 0 || got != nil {
		t.Errorf("a clean exit: %d, %+v", status, got)
	}
	if status, _ := exitOf([]byte("kernel panic\n")); status != -1 {
		t.Errorf("no exit result: status %d, want -1", status)
	}
}
