//go:build linux

package launch_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/launch"
)

// TestRunLongLine: a line of 1.1 MB (over the 1 MiB that once made the
// copier give up, killing the PE by SIGPIPE or losing the line) passes
// whole, in prefixed pieces, and the run succeeds.
func TestRunLongLine(t *testing.T) {
	const n = 1_100_000
	trials := testenv.Trials(t, 2)
	defer func() { t.Logf("%d trials: the line came through whole every time", trials) }()
	for trial := range trials {
		var out bytes.Buffer
		rep, err := launch.Run(context.Background(), launch.Config{N: 2, Program: os.Args[0], Dir: t.TempDir(),
			Env: []string{fmt.Sprintf("%s=%d", longLinePE, n)}, Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != 0 || rep.Failed != -1 {
			t.Fatalf("trial %d: report %+v", trial, rep)
		}
		xs, pieces := 0, 0
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			rest, ok := strings.CutPrefix(l, "[PE 0] ")
			if !ok || strings.Trim(rest, "x") != "" {
				t.Fatalf("trial %d: line %.80q… is not a prefixed piece of PE 0's line", trial, l)
			}
			xs += len(rest)
			pieces++
		}
		if xs != n {
			t.Fatalf("trial %d: %d of the line's %d bytes arrived", trial, xs, n)
		}
		if trial == 0 {
			t.Logf("a %d-byte line came through whole in %d prefixed pieces", n, pieces)
		}
	}
}

// TestRunBlamesNamedPE: a PE whose error names another (a wait on it that
// timed out) is not blamed: the run's report names the PE its report of
// the error named, and keeps that report.
func TestRunBlamesNamedPE(t *testing.T) {
	var out bytes.Buffer
	rep, err := launch.Run(context.Background(), launch.Config{N: 3, Program: os.Args[0], Dir: t.TempDir(), Grace: 200 * time.Millisecond,
		Env: []string{namingPE + "=1"}, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 2 || !strings.HasPrefix(rep.Reason, "PE 2 named by the error of PE 0 (timeout in get)") || rep.Status != 1 {
		t.Errorf("report %+v, want PE 2 blamed by PE 0's report\n%s", rep, out.String())
	}
	if r := rep.Exits[0].Report; r == nil || r.Kind != pereport.Timeout || !slices.Equal(r.Named, []int{2}) || r.PE != 0 {
		t.Errorf("PE 0's report in the run's: %+v", r)
	}
}

// childPID runs sh with script as the one PE and returns the report, its
// output and the pid the script printed first (that of a background
// child).
func childPID(t *testing.T, script string, cfg launch.Config, during func(out *testenv.Buffer)) (*launch.Report, string, int) {
	t.Helper()
	out := &testenv.Buffer{}
	cfg.N, cfg.Program, cfg.Args, cfg.Dir, cfg.Stdout, cfg.Stderr = 1, "sh", []string{"-c", script}, t.TempDir(), out, out
	if during != nil {
		go during(out)
	}
	rep, err := launch.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscanf(strings.TrimPrefix(out.String(), "[PE 0] "), "%d", &pid)
	if pid == 0 {
		t.Fatalf("the script printed no pid:\n%s", out.String())
	}
	return rep, out.String(), pid
}

// running reports whether process pid is alive and not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	return err == nil && i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// waitOutput waits until out holds a line (the script's pid).
func waitOutput(out *testenv.Buffer) {
	for !strings.Contains(out.String(), "\n") {
		time.Sleep(time.Millisecond)
	}
}

// TestRunChildOutlivesPE: a PE that leaves a child running (holding its
// output open) does not keep the job alive: a grace period after the PE
// ends, its process group is killed, and the report says so.
func TestRunChildOutlivesPE(t *testing.T) {
	const grace = 300 * time.Millisecond
	var worst time.Duration
	trials := testenv.Trials(t, 2)
	defer func() {
		t.Logf("%d trials: the job ended at worst %v after it started (grace %v), the child killed", trials, worst, grace)
	}()
	for trial := range trials {
		start := time.Now()
		rep, out, child := childPID(t, "sleep 30 & echo $!; exit 0", launch.Config{Grace: grace}, nil)
		took := time.Since(start)
		worst = max(worst, took)
		if running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: the PE's child %d still runs after the job", trial, child)
		}
		if took > grace+10*time.Second || !slices.Equal(rep.Lingered, []int{0}) || len(rep.Notes) != 1 ||
			rep.Failed != 0 || !strings.Contains(rep.Reason, "without opening the board") {
			t.Fatalf("trial %d: took %v (grace %v), report %+v\n%s", trial, took, grace, rep, out)
		}
	}
}

// TestRunSignalReachesGroup: a stop signal reaches what a PE started, not
// only the PE; the run reports the signal itself (not a PE's exit status
// 143) and ends long before the child would have.
func TestRunSignalReachesGroup(t *testing.T) {
	var worst time.Duration
	trials := testenv.Trials(t, 2)
	defer func() {
		t.Logf("%d trials: SIGTERM reached the PE's child every time; the run took at worst %v", trials, worst)
	}()
	for trial := range trials {
		sigs := make(chan os.Signal, 1)
		start := time.Now()
		rep, out, child := childPID(t, "sleep 30 & echo $!; wait", launch.Config{Signals: sigs, OpenTimeout: time.Minute},
			func(out *testenv.Buffer) { waitOutput(out); sigs <- unix.SIGTERM })
		took := time.Since(start)
		worst = max(worst, took)
		if running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: SIGTERM did not reach the PE's child %d", trial, child)
		}
		if took > 10*time.Second || rep.Signal != unix.SIGTERM || rep.Status != 143 || rep.Failed != -1 || rep.Reason != "stopped by terminated" {
			t.Fatalf("trial %d: took %v, report %+v\n%s", trial, took, rep, out)
		}
	}
}

// TestRunSecondSignal: a PE whose group ignores the first stop signal is
// killed at once by a second one, long before the stop's grace period.
func TestRunSecondSignal(t *testing.T) {
	var worst time.Duration
	n := testenv.Trials(t, 2)
	defer func() { t.Logf("%d trials: the run ended at worst %v after the second SIGINT", n, worst) }()
	for trial := range n {
		sigs := make(chan os.Signal, 1)
		var second time.Time
		rep, out, child := childPID(t, `trap "" INT; sleep 30 & echo $!; wait`, launch.Config{Signals: sigs, OpenTimeout: time.Minute},
			func(out *testenv.Buffer) {
				waitOutput(out)
				sigs <- unix.SIGINT
				time.Sleep(50 * time.Millisecond)
				second = time.Now()
				sigs <- unix.SIGINT
			})
		took := time.Since(second)
		if running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: the second SIGINT did not kill the PE's child %d", trial, child)
		}
		if rep.Signal != unix.SIGINT || rep.Status != 130 || rep.Failed != -1 || took > 10*time.Second {
			t.Fatalf("trial %d: ended %v after the second SIGINT, report %+v\n%s", trial, took, rep, out)
		}
		// The first stop's grace period is 700 ms: ending well within it
		// shows the second signal acted (a bound on the machine as much
		// as on the launcher: logged when the machine is overloaded).
		if took > 500*time.Millisecond {
			report := t.Errorf
			if testenv.Overloaded() {
				report = t.Logf
			}
			report("trial %d: ended %v after the second SIGINT, want at once (well within the stop's 700 ms)", trial, took)
		}
		worst = max(worst, took)
	}
}

// TestRunStopWhileLingering: a stop signal after the PEs have ended, while
// what one started lingers, cuts the grace period short (to the stop's)
// and reaches that process's group; the report is the stop.
func TestRunStopWhileLingering(t *testing.T) {
	trials := testenv.Trials(t, 2)
	var worst time.Duration
	defer func() { t.Logf("%d trials: the run ended at worst %v after the stop (grace 1m)", trials, worst) }()
	for trial := range trials {
		sigs := make(chan os.Signal, 1)
		var sent time.Time
		rep, out, child := childPID(t, "sleep 30 & echo $!; exit 0", launch.Config{Signals: sigs, Grace: time.Minute, OpenTimeout: time.Minute},
			func(out *testenv.Buffer) {
				waitOutput(out)
				time.Sleep(100 * time.Millisecond) // the PE has exited
				sent = time.Now()
				sigs <- unix.SIGTERM
			})
		took := time.Since(sent)
		worst = max(worst, took)
		if running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: the stop did not reach the lingering child %d", trial, child)
		}
		// The PE's exit without opening the board came first: the report
		// stays that.
		if took > 30*time.Second || rep.Failed != 0 || rep.Signal != nil {
			t.Fatalf("trial %d: ended %v after the stop, report %+v\n%s", trial, took, rep, out)
		}
	}
}
