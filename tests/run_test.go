//go:build linux

// Package tests holds end-to-end tests that build the commands and run them
// as processes.
package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/launch"
)

var (
	binDir   string
	binOnce  sync.Once
	binError error
)

func TestMain(m *testing.M) {
	if path := os.Getenv("TESTS_CREATE_BOARD"); path != "" {
		os.Exit(createBoard(path))
	}
	code := leakcheck.Run(m)
	for _, dir := range []string{binDir, mpiBinDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// bin builds papersctl, examples/spmd and the misbehaving test program once
// and returns the path of the one named.
func bin(t testing.TB, name string) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "ttlpapers-run-")
		if binError != nil {
			return
		}
		for name, pkg := range map[string]string{"papersctl": "../cmd/papersctl", "spmd": "../examples/spmd", "hello": "../examples/hello", "runprog": "./testdata/runprog", "dataprog": "./testdata/dataprog", "lanprog": "./testdata/lanprog", "lanbench": "./testdata/lanbench", "confprog": "./testdata/confprog", "matmul": "../examples/matmul", "radixsort": "../examples/radixsort"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), pkg).CombinedOutput()
			if err != nil {
				binError = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return filepath.Join(binDir, name)
}

// shmDir is a private board directory, so tests never meet other runs' boards.
func shmDir(t *testing.T) string {
	d, err := os.MkdirTemp("/dev/shm", "ttlpapers-test-")
	if err != nil {
		d = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	return d
}

// Started by no launcher, examples/spmd runs its PEs in-process, as the
// other examples do.
func TestSpmdExampleAlone(t *testing.T) {
	cmd := exec.Command(bin(t, "spmd"), "-pes", "3")
	cmd.Env = unlaunched()
	out, err := cmd.CombinedOutput()
	for k := range 3 {
		if want := fmt.Sprintf("PE %d/3 sum=3\n", k); err != nil || !strings.Contains(string(out), want) {
			t.Errorf("spmd -pes 3: %v; want %q in\n%s", err, want, out)
		}
	}
}

// unlaunched is this process's environment without what a launcher
// (papersctl run, mpirun) sets: a program started with it runs in-process.
func unlaunched() []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "PAPERS_") && !strings.HasPrefix(v, "OMPI_") && !strings.HasPrefix(v, "PMI") {
			env = append(env, v)
		}
	}
	return env
}

func TestRunSumAcrossProcesses(t *testing.T) {
	ctl, prog := bin(t, "papersctl"), bin(t, "spmd")
	for _, n := range []int{2, 3, 4, 8, 16} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(ctl, "run", "-n", fmt.Sprint(n), "-dir", shmDir(t), "--", prog)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("n=%d: %v\n%s%s", n, err, stdout.String(), stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if len(lines) != n {
			t.Fatalf("n=%d: %d lines:\n%s", n, len(lines), stdout.String())
		}
		seen := map[string]bool{}
		for _, l := range lines {
			seen[l] = true
		}
		sum := 0
		for k := 0; k < n; k++ {
			sum += k
		}
		for k := 0; k < n; k++ {
			if want := fmt.Sprintf("[PE %d] PE %d/%d sum=%d", k, k, n, sum); !seen[want] {
				t.Errorf("n=%d: no line %q in\n%s", n, want, stdout.String())
			}
		}
	}
}

// Kill a random PE of a collective-heavy program with SIGKILL at 100 random
// moments: every survivor must get an error from its port within 100 ms
// (the board records when) and stop with an error exit of its own (not be
// killed by the launcher), and the launcher must name the dead PE.
func TestRunKillRandomPE(t *testing.T) {
	prog := bin(t, "spmd")
	dir := shmDir(t)
	const n, trials = 3, 100
	var worst, worstExit time.Duration
	late := 0
	// The 100 ms bound is about the mechanism, not the machine: when more
	// processes want the CPUs than there are (other jobs), a survivor may
	// simply not be scheduled in time, so lateness is then only logged.
	report := t.Errorf
	if load, cpus := testenv.LoadAverage(), runtime.NumCPU(); load > float64(cpus) {
		t.Logf("machine overloaded (load %.1f on %d CPUs): the 100 ms bound is logged, not enforced", load, cpus)
		report = t.Logf
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	for trial := 0; trial < trials; trial++ {
		victim := rng.IntN(n)
		delay := time.Duration(rng.IntN(40_000)) * time.Microsecond
		var killedAt time.Time
		var mu sync.Mutex
		var out bytes.Buffer
		rep, err := launch.Run(context.Background(), launch.Config{
			N: n, Program: prog, Args: []string{"-rounds", "1000000000"}, Dir: dir, Stdout: &out, Stderr: &out,
			Started: func(pe int, p *os.Process) {
				if pe == victim {
					time.AfterFunc(delay, func() {
						mu.Lock()
						killedAt = time.Now()
						mu.Unlock()
						p.Signal(unix.SIGKILL)
					})
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		at := killedAt
		mu.Unlock()
		if rep.Failed != victim || rep.Status != 128+int(unix.SIGKILL) || !strings.Contains(rep.Reason, fmt.Sprintf("PE %d ", victim)) {
			t.Fatalf("trial %d (kill PE %d after %v): report %+v\n%s", trial, victim, delay, rep, out.String())
		}
		for _, x := range rep.Exits {
			if x.PE == victim {
				continue
			}
			if x.Signal != nil || x.Status == 0 {
				t.Errorf("trial %d (kill PE %d after %v): survivor PE %d ended with status %d signal %v, want an error exit of its own\n%s", trial, victim, delay, x.PE, x.Status, x.Signal, out.String())
			}
			if x.Noticed.IsZero() {
				t.Errorf("trial %d (kill PE %d after %v): survivor PE %d never got the error from its port", trial, victim, delay, x.PE)
				continue
			}
			d := x.Noticed.Sub(at)
			worst, worstExit = max(worst, d), max(worstExit, x.At.Sub(at))
			if d > 100*time.Millisecond {
				late++
				report("trial %d (kill PE %d after %v): survivor PE %d got its error %v after the kill (launcher aborted the board after %v)", trial, victim, delay, x.PE, d, rep.Aborted.Sub(at))
			}
		}
	}
	t.Logf("%d trials, %d PEs: worst time from SIGKILL to a survivor's error: %v; to its exit: %v; survivors later than 100 ms: %d", trials, n, worst, worstExit, late)
}

func runprog(t *testing.T, cfg launch.Config) (*launch.Report, string) {
	t.Helper()
	var out bytes.Buffer
	cfg.Program, cfg.Dir, cfg.Stdout, cfg.Stderr = bin(t, "runprog"), shmDir(t), &out, &out
	rep, err := launch.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep, out.String()
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		do, reason string
		status     int
	}{
		{"panic", "PE 1 exited with status 2", 2},
		{"exit3", "PE 1 exited with status 3", 3},
		{"error", "PE 1 exited with status 1", 1},
		{"noclose", "PE 1 exited without closing its PE", 1},
	} {
		rep, out := runprog(t, launch.Config{N: 3, Args: []string{"-pe", "1", "-do", tc.do}})
		if rep.Failed != 1 || !strings.HasPrefix(rep.Reason, tc.reason) || rep.Status != tc.status {
			t.Errorf("%s: report %+v, want PE 1 failed: %q, status %d\n%s", tc.do, rep, tc.reason, tc.status, out)
		}
		for _, x := range rep.Exits {
			if x.PE != 1 && (x.Status == 0 || x.Signal != nil) {
				t.Errorf("%s: PE %d ended with status %d signal %v, want an error exit of its own\n%s", tc.do, x.PE, x.Status, x.Signal, out)
			}
		}
	}
	// A PE that hangs: the others time out, the launcher names the PE
	// that did not arrive (not the one that waited) and kills it.
	rep, out := runprog(t, launch.Config{N: 2, Args: []string{"-pe", "1", "-do", "hang"}, Timeout: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	if rep.Failed != 1 || !strings.HasPrefix(rep.Reason, "PE 1 did not arrive") || rep.Status != 1 ||
		!strings.Contains(out, "did not complete") || rep.Exits[1].Signal != unix.SIGKILL {
		t.Errorf("hang: report %+v\n%s", rep, out)
	}
	// A clean run.
	if rep, out := runprog(t, launch.Config{N: 4}); rep.Failed != -1 || rep.Status != 0 {
		t.Errorf("clean run: report %+v\n%s", rep, out)
	}
}

func TestRunBadInvocations(t *testing.T) {
	ctl := bin(t, "papersctl")
	dir := shmDir(t)
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-n", "0", "--", "true"}, "-n"},
		{[]string{"-n", "33", "--", "true"}, "1 to 32"},
		{[]string{"-n", "2"}, "no program"},
		{[]string{"-n", "2", "--", "/nonexistent/prog"}, "/nonexistent/prog"},
		{[]string{"-n", "2", "--", "true"}, "exited without opening the board"},
		{[]string{"-n", "2", "-open-timeout", "300ms", "--", "sleep", "10"}, "did not open the board within 300ms"},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(ctl, append([]string{"run", "-dir", dir}, tc.args...)...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("papersctl run %v: err %v, stderr %q, want a failure mentioning %q", tc.args, err, stderr.String(), tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("boards left behind: %v", left)
	}
}

func TestRunBoards(t *testing.T) {
	dir := shmDir(t)
	// A board left by a crashed run (its launcher killed) is replaced.
	stale := filepath.Join(dir, launch.BoardPrefix+"x")
	crashed := exec.Command(bin(t, "papersctl"), "run", "-board", "x", "-dir", dir, "-n", "1", "--", "sleep", "100")
	if err := crashed.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the run to create its board", func() bool { _, err := os.Stat(stale); return err == nil })
	crashed.Process.Kill()
	crashed.Wait()
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the killed run left no board: %v", err)
	}
	prog := bin(t, "spmd")
	var out bytes.Buffer
	rep, err := launch.Run(context.Background(), launch.Config{N: 2, Program: prog, Board: "x", Dir: dir, Stdout: &out, Stderr: &out})
	if err != nil || rep.Status != 0 {
		t.Fatalf("run on a stale board: %v %+v\n%s", err, rep, out.String())
	}
	// Two runs share a named board only when asked to: PEs 0-1 and 2-3.
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	reps := make([]*launch.Report, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], _ = launch.Run(context.Background(), launch.Config{N: 2, PEs: 4, First: 2 * i, Program: prog, Board: "shared", Dir: dir, Stdout: &outs[i], Stderr: &outs[i]})
		}()
		if i == 0 { // the first run creates the board
			waitFor(t, 10*time.Second, "the first run's board", func() bool {
				_, err := os.Stat(filepath.Join(dir, launch.BoardPrefix+"shared"))
				return err == nil
			})
		}
	}
	wg.Wait()
	for i := range 2 {
		if reps[i] == nil || reps[i].Status != 0 || strings.Count(outs[i].String(), "sum=6") != 2 {
			t.Errorf("shared board, run %d: %+v\n%s", i, reps[i], outs[i].String())
		}
	}
	// Unnamed runs get boards of their own.
	r1, _ := launch.Run(context.Background(), launch.Config{N: 1, Program: prog, Dir: dir, Stdout: &out, Stderr: &out})
	r2, _ := launch.Run(context.Background(), launch.Config{N: 1, Program: prog, Dir: dir, Stdout: &out, Stderr: &out})
	if r1 == nil || r2 == nil || r1.Board == r2.Board {
		t.Errorf("two runs used the same board")
	}
}

func TestRunForwardsSignals(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var out bytes.Buffer
	dir := shmDir(t)
	go func() {
		// Once every PE has opened the board (its port is claimed).
		waitOpened(dir, 3)
		sigs <- unix.SIGTERM
	}()
	rep, err := launch.Run(context.Background(), launch.Config{N: 3, Program: bin(t, "spmd"), Args: []string{"-rounds", "1000000000"}, Dir: dir,
		Stdout: &out, Stderr: &out, Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	// The run was stopped by the signal: that is the report, not a PE's
	// exit status 143.
	if rep.Failed != -1 || rep.Status != 143 || rep.Signal != unix.SIGTERM || rep.Reason != "stopped by terminated" ||
		!regexp.MustCompile(`stopped by terminated`).MatchString(out.String()) {
		t.Errorf("SIGTERM: report %+v\n%s", rep, out.String())
	}
}

// waitFor waits until cond holds, failing the test after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitOpened waits (up to a minute) until the one board in dir has n
// ports held.
func waitOpened(dir string, n int) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		paths, _ := filepath.Glob(filepath.Join(dir, launch.BoardPrefix+"*"))
		for _, p := range paths {
			if info, err := emu.InspectShared(p); err == nil {
				held := 0
				for _, h := range info.Holders {
					if h != 0 {
						held++
					}
				}
				if held >= n {
					return
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRunInterruptCLI: ^C to papersctl run is reported as the user's
// interrupt (exit 130, "stopped by interrupt"), not as a PE's exit status
// 130; a second ^C ends papersctl at once, with what the PEs started; and
// a PE that leaves `sleep 15` behind, then SIGTERM and
// SIGINT to papersctl — ends long before the sleep would. Repeated
// $TTLPAPERS_RUN_TRIALS times.
func TestRunInterruptCLI(t *testing.T) {
	ctl, prog := bin(t, "papersctl"), bin(t, "spmd")
	start := func(dir string, args ...string) (*exec.Cmd, *testenv.Buffer) {
		out := &testenv.Buffer{}
		cmd := exec.Command(ctl, append([]string{"run", "-dir", dir}, args...)...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	status := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	n := testenv.Trials(t, 2)
	var worst time.Duration
	for trial := range n {
		dir := shmDir(t)
		cmd, out := start(dir, "-n", "2", "--", prog, "-rounds", "1000000000")
		waitOpened(dir, 2)
		cmd.Process.Signal(unix.SIGINT)
		err := cmd.Wait()
		if s := status(err); s != 130 || !strings.Contains(out.String(), "papersctl run: stopped by interrupt\n") || strings.Contains(out.String(), "exited with status") {
			t.Fatalf("trial %d: ^C: exit %d (%v), want 130 and the interrupt reported:\n%s", trial, s, err, out.String())
		}

		// The PE shrugs off the first ^C (its background sleep ignores it);
		// the second ^C is sent once the first has reached the PE — two
		// sent at once may reach papersctl as one.
		cmd, out = start(dir, "-n", "1", "-open-timeout", "1m", "--", "sh", "-c", `trap "echo shrugged" INT TERM; sleep 30 & echo $!; while :; do wait; done`)
		waitFor(t, time.Minute, "the PE's child", func() bool { return strings.Contains(out.String(), "\n") })
		var child int
		fmt.Sscanf(strings.TrimPrefix(out.String(), "[PE 0] "), "%d", &child)
		cmd.Process.Signal(unix.SIGINT)
		waitFor(t, time.Minute, "the first ^C to reach the PE", func() bool { return strings.Contains(out.String(), "shrugged") })
		second := time.Now()
		cmd.Process.Signal(unix.SIGINT)
		err = cmd.Wait()
		took := time.Since(second)
		if s := status(err); s != 130 || took > 10*time.Second || running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: second ^C: exit %d after %v, child %d running %v; want 130 at once, the child killed:\n%s", trial, s, took, child, running(child), out.String())
		}
		if took > 500*time.Millisecond { // the stop's own grace is 700 ms
			report := t.Errorf
			if testenv.Overloaded() {
				report = t.Logf
			}
			report("trial %d: papersctl ended %v after the second ^C, want at once", trial, took)
		}
		worst = max(worst, took)

		begin := time.Now()
		cmd, out = start(dir, "-n", "1", "--", "sh", "-c", "sleep 15 & echo $!; exit 0")
		waitFor(t, time.Minute, "the PE's child", func() bool { return strings.Contains(out.String(), "\n") })
		fmt.Sscanf(strings.TrimPrefix(out.String(), "[PE 0] "), "%d", &child)
		cmd.Process.Signal(unix.SIGTERM)
		cmd.Process.Signal(unix.SIGINT)
		cmd.Wait()
		if took := time.Since(begin); took > 10*time.Second || running(child) {
			unix.Kill(child, unix.SIGKILL)
			t.Fatalf("trial %d: a PE's leftover sleep 15: papersctl took %v, the sleep running %v\n%s", trial, took, running(child), out.String())
		}
	}
	t.Logf("%d trials: ^C reported as the interrupt (130), a second ^C ends papersctl (at worst %v after it), a leftover child never holds the job", n, worst)
}

// running reports whether process pid is alive and not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	return pid > 0 && err == nil && i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
