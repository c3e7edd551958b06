//go:build mpi

package mpi_test

// The test binary doubles as the MPI program: started by mpirun (its
// environment says so) its TestMain runs one rank, in the main goroutine
// as MPI wants, in the mode MPI_TEST_MODE names; the tests start it under
// mpirun and judge what the ranks print and how mpirun exits.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/conformance"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/mpi"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

const envMode = "MPI_TEST_MODE"

func TestMain(m *testing.M) {
	if _, _, ok := mpi.Launched(); ok && os.Getenv(envMode) != "" {
		os.Exit(rank(os.Getenv(envMode)))
	}
	os.Exit(m.Run())
}

// rank runs one rank of the mode and returns its exit status.
func rank(mode string) int {
	if mode == "spmd-fail" {
		spmd.Main(failing) // exits
	}
	if mode == "stop-init" || mode == "stop-open" {
		stopEarly(mode)
	}
	p, err := mpi.Open(papers.Config{Timeout: timeoutOf(), CheckInTimeout: checkInOf()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	switch mode {
	case "conformance":
		err = runConformance(p)
	case "stop", "kill":
		err = victim(p, mode)
	case "bench":
		err = bench(p)
	case "allocs":
		err = allocs(p)
	case "datanet":
		err = runDataNet(p)
	case "datanet-stop":
		err = dataNetVictim(p)
	case "datanet-leave":
		err = dataNetLeaver(p)
	default:
		err = fmt.Errorf("unknown %s %q", envMode, mode)
	}
	if err != nil {
		fmt.Printf("PE %d: FAIL: %v\n", p.Self(), err)
		return 1
	}
	if err := p.Close(); err != nil {
		fmt.Printf("PE %d: close: %v\n", p.Self(), err)
		return 1
	}
	return 0
}

// checkInOf is MPI_TEST_CHECKIN: a long check-in for the tests of a rank
// stopped after it, whose MPI_Init can take seconds beside other test
// packages; 0 (the timeout's, at least papers.MinCheckIn) when unset.
func checkInOf() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("MPI_TEST_CHECKIN"))
	return d
}

func timeoutOf() time.Duration {
	d, err := time.ParseDuration(os.Getenv("MPI_TEST_TIMEOUT"))
	if err != nil {
		return 20 * time.Second
	}
	return d
}

func runConformance(p *papers.PE) error {
	side := &conformance.DirSide{Dir: os.Getenv("MPI_TEST_DIR"), Self: p.Self()}
	for _, c := range conformance.Cases() {
		if err := c.Run(p, side); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		fmt.Printf("PE %d: ok %s\n", p.Self(), c.Name)
	}
	return nil
}

// victim runs barriers; the last PE stops (SIGSTOP) or dies (SIGKILL)
// after 100 of them. The others must fail naming it.
func victim(p *papers.PE, mode string) error {
	last := p.PEs() - 1
	for i := 0; ; i++ {
		if i == 100 && p.Self() == last {
			sig := syscall.SIGSTOP
			if mode == "kill" {
				sig = syscall.SIGKILL
			}
			syscall.Kill(os.Getpid(), sig)
		}
		if err := p.Barrier(); err != nil {
			fmt.Printf("PE %d: after %d barriers: %v\n", p.Self(), i, err)
			return err
		}
	}
}

// stopEarly stops the last rank (SIGSTOP) before it calls mpi.Open: before
// MPI_Init (stop-init), or once MPI is initialised (stop-open).
func stopEarly(mode string) {
	if pe, pes, _ := mpi.Launched(); pe == pes-1 {
		if mode == "stop-open" {
			if err := mpi.Init(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	}
}

// failing is an spmd program whose PE 1 returns an error; the others must
// see its departure as an interrupt naming it.
func failing(p *papers.PE) error {
	if p.Self() == 1 {
		return errors.New("deliberate failure")
	}
	for {
		err := p.Barrier()
		var ie *papers.InterruptError
		if errors.As(err, &ie) {
			fmt.Printf("PE %d: saw: %v\n", p.Self(), err)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// mpirun runs this test binary's ranks in mode under the launcher of the
// MPI it is built for (launcher_*_test.go), bounded by limit, with MPI's
// messages over the network instead of shared memory if network, and
// returns its combined output and error.
func mpirun(t testing.TB, np int, mode string, limit time.Duration, network bool, env ...string) (string, error) {
	t.Helper()
	return mpirunWith(t, np, mode, limit, network, nil, env...)
}

// mpirunWith is mpirun with more launcher arguments.
func mpirunWith(t testing.TB, np int, mode string, limit time.Duration, network bool, launcher []string, env ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath(mpirunCmd); err != nil {
		testenv.Missing(t, mpirunCmd+" not found (apt-get install "+mpirunPackage+")")
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append(mpirunArgs(np), launcher...)
	if network {
		netArgs, netEnv := overNetwork()
		args, env = append(args, netArgs...), append(env, netEnv...)
	}
	cmd := exec.CommandContext(ctx, mpirunCmd, append(args, os.Args[0], "-test.run=^$")...)
	cmd.Env = append(os.Environ(), append(env, envMode+"="+mode)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s -np %d (%s) still running after %v:\n%s", mpirunCmd, np, mode, limit, out)
	}
	return string(out), err
}

// TestConformance runs the suite package emulate's tests run on the
// emulated board, on 2, 3, 4 and 8 MPI ranks (8 found control messages and
// communicator creation sharing a tag; 2, where the one PE left alone never
// waits, found rejoins unseen by members whose collectives never wait) meeting in shared memory, and on
// ranks split into nodes (mpi.EnvNode): 3 nodes of 3, 3 and 2 ranks, whose
// leaders meet over the network, and 4 ranks each a node of its own with
// MPI's messages over the network (overNetwork), the path of a cluster.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		np   int
		node string
		net  bool
	}{{2, "", false}, {3, "", false}, {4, "", false}, {8, "", false}, {8, "3", false}, {4, "1", true}} {
		name := fmt.Sprintf("%d ranks, %s=%q, network=%v", c.np, mpi.EnvNode, c.node, c.net)
		out, err := mpirun(t, c.np, "conformance", 3*time.Minute, c.net, "MPI_TEST_DIR="+t.TempDir(), mpi.EnvNode+"="+c.node)
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
			continue
		}
		for _, cc := range conformance.Cases() {
			for k := range c.np {
				if line := fmt.Sprintf("PE %d: ok %s\n", k, cc.Name); !strings.Contains(out, line) {
					t.Errorf("%s: no %q in:\n%s", name, line, out)
				}
			}
		}
	}
}

// TestStoppedRank: a rank stopped by SIGSTOP makes the other ranks'
// barrier fail within the timeout with an error naming it, and mpirun ends
// the job with a non-zero status. The first rank to fail ends the job:
// mpirun then continues and kills the rest (the stopped rank too, which may
// answer a late ping meanwhile), so one report naming it is what is sure.
func TestStoppedRank(t *testing.T) {
	const timeout = 2 * time.Second
	start := time.Now()
	out, err := mpirun(t, 3, "stop", time.Minute, false, "MPI_TEST_TIMEOUT="+timeout.String(), "MPI_TEST_CHECKIN=30s")
	if err == nil {
		t.Fatalf("mpirun exited 0 with a stopped rank:\n%s", out)
	}
	named := false
	for _, k := range []int{0, 1} {
		named = named || strings.Contains(out, fmt.Sprintf("PE %d: barrier did not complete within %v: PE 2 did not answer a ping", k, timeout))
	}
	if !named {
		t.Errorf("no rank reports that PE 2 did not answer:\n%s", out)
	}
	// mpirun's start, 100 barriers, the timeout and the ping's deadline.
	if d := time.Since(start); d > 3*timeout+10*time.Second {
		t.Errorf("the job took %v to end after a rank stopped (timeout %v)", d, timeout)
	}
	t.Logf("mpirun ended %v after it started:\n%s", time.Since(start).Round(time.Millisecond), out)
}

// TestStoppedBeforeOpen: a rank stopped before it opens its PE makes the
// others' mpi.Open end within the check-in timeout, never hang in MPI's
// blocking setup, and mpirun exits non-zero. Stopped once MPI is
// initialised, the rank is named by the others' check-in; stopped before
// MPI_Init, which waits for every rank to start it and cannot say which
// has not, the others' watchdog ends them with an error saying so.
//
// The timeout is 6 s, not 2: MPICH's MPI_Init took over 2 s beside the
// spmd package in CI, and stop-open's watchdog then fired in MPI_Init.
func TestStoppedBeforeOpen(t *testing.T) {
	const timeout = 6 * time.Second
	for _, c := range []struct{ mode, want string }{
		{"stop-open", fmt.Sprintf("check-in did not complete within %v: PE 2 did not reach mpi.Open", timeout)},
		{"stop-init", fmt.Sprintf("MPI_Init did not return within %v", timeout)},
	} {
		start := time.Now()
		out, err := mpirun(t, 3, c.mode, time.Minute, false, "MPI_TEST_TIMEOUT="+timeout.String())
		if err == nil {
			t.Errorf("%s: mpirun exited 0 with a stopped rank:\n%s", c.mode, out)
		}
		named := false
		for _, k := range []int{0, 1} {
			named = named || strings.Contains(out, fmt.Sprintf("papers: PE %d: %s", k, c.want))
		}
		if !named {
			t.Errorf("%s: no rank reports %q:\n%s", c.mode, c.want, out)
		}
		// mpirun's start, the timeout and the job's end.
		if d := time.Since(start); d > 3*timeout+10*time.Second {
			t.Errorf("%s: the job took %v to end after a rank stopped (timeout %v)", c.mode, d, timeout)
		}
		t.Logf("%s: mpirun ended %v after it started:\n%s", c.mode, time.Since(start).Round(time.Millisecond), out)
	}
}

// TestKilledRank: a rank killed by SIGKILL ends the job with a non-zero
// status and the launcher's report of it (killedReport), within the
// timeout.
func TestKilledRank(t *testing.T) {
	const timeout = 5 * time.Second
	start := time.Now()
	out, err := mpirun(t, 3, "kill", time.Minute, false, "MPI_TEST_TIMEOUT="+timeout.String())
	if err == nil {
		t.Fatalf("mpirun exited 0 with a killed rank:\n%s", out)
	}
	if !strings.Contains(out, killedReport) {
		t.Errorf("no %q in the report:\n%s", killedReport, out)
	}
	if d := time.Since(start); d > 2*timeout+5*time.Second {
		t.Errorf("the job took %v to end after a rank died (timeout %v)", d, timeout)
	}
}

// TestFailingSPMD: an spmd program (spmd.Main) on MPI whose PE returns an
// error announces its departure: the others' barrier returns an interrupt
// naming it, and they end without MPI_Finalize, which would wait for the
// failed rank, saying so. Run with the launcher told not to end the job
// when one rank fails (keepGoing), as a batch system may not: otherwise it
// can kill the others before they print what they saw, and would hide a
// hang. Then the launcher's own status is unreliable (both report 0), so
// it is checked in a second run as launchers start by default.
func TestFailingSPMD(t *testing.T) {
	if out, err := mpirun(t, 3, "spmd-fail", time.Minute, false); err == nil {
		t.Errorf("%s exited 0 though PE 1 failed:\n%s", mpirunCmd, out)
	}
	out, _ := mpirunWith(t, 3, "spmd-fail", time.Minute, false, keepGoing)
	for _, k := range []int{0, 2} {
		// The interrupt may come while the PE still completes its
		// check-in: its first barrier returns it, named for the check-in.
		saw := regexp.MustCompile(fmt.Sprintf(`PE %d: saw: papers: PE %d: (barrier|check-in) interrupted by a parallel interrupt with code 0xf; PE 1 left the group`, k, k))
		ended := fmt.Sprintf("papers: PE %d: PE 1 failed and ended without MPI_Finalize", k)
		if !saw.MatchString(out) || !strings.Contains(out, ended) {
			t.Errorf("PE %d: no %q, or no %q, in:\n%s", k, saw, ended, out)
		}
	}
	if !strings.Contains(out, "deliberate failure") {
		t.Errorf("PE 1's error is not reported:\n%s", out)
	}
}

// BenchmarkCollectives measures the MPI backend's barrier and 1-int
// Reduce (the engine's own collectives, coll.go) at 2, 4 and 8 ranks beside
// baseline/mpi/collectives.c (MPI_Barrier, MPI_Allreduce) run in the same
// invocation, and reports both and their ratio: on shared memory; with
// MPI over TCP (--mca btl tcp,self), where the anchor's messages take TCP
// and the backend's ranks still meet in shared memory, as the ranks of one
// node of a cluster do; and over TCP with every rank a node of its own
// (mpi.EnvNode=1), where every collective crosses the network as it does
// between nodes. Each rank loop is a fixed 20000 operations (as the
// anchor's): run with -benchtime=1x. Beside the anchor's figures it reports
// the ratios to MPI_Barrier and MPI_Allreduce measured in the backend's own
// processes, in alternating blocks (see bench): the load of a shared
// machine changes between two runs, not between two blocks.
func BenchmarkCollectives(b *testing.B) {
	for _, np := range []int{2, 4, 8} {
		for _, path := range []struct {
			name, node string
			tcp        bool
		}{{"shm", "", false}, {"tcp", "", true}, {"tcp-node=1", "1", true}} {
			b.Run(fmt.Sprintf("np=%d/%s", np, path.name), func(b *testing.B) {
				if mpirunCmd != "mpirun" {
					b.Skip("the baseline is built and run with Open MPI's mpicc and mpirun")
				}
				anchor, err := baseline.MPI(np, path.tcp)
				if err != nil {
					b.Skipf("anchor: %v", err)
				}
				out, err := mpirun(b, np, "bench", 5*time.Minute, path.tcp, mpi.EnvNode+"="+path.node)
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				ours, alt := parseBench(b, out)
				b.ReportMetric(ours[0], "µs/barrier")
				b.ReportMetric(ours[1], "µs/allreduce")
				b.ReportMetric(ours[0]/anchor.Barrier, "barrier/anchor")
				b.ReportMetric(ours[1]/anchor.AllreduceInt, "allreduce/anchor")
				b.ReportMetric(alt[1]/alt[0], "barrier/MPI_Barrier-alternating")
				b.ReportMetric(alt[3]/alt[2], "allreduce/MPI_Allreduce-alternating")
				b.Logf("np=%d %s: barrier %.3f µs (anchor %.3f, ×%.2f), allreduce %.3f µs (anchor %.3f, ×%.2f); alternating: barrier %.3f µs (MPI_Barrier %.3f, ×%.2f), allreduce %.3f µs (MPI_Allreduce %.3f, ×%.2f)",
					np, path.name, ours[0], anchor.Barrier, ours[0]/anchor.Barrier, ours[1], anchor.AllreduceInt, ours[1]/anchor.AllreduceInt,
					alt[1], alt[0], alt[1]/alt[0], alt[3], alt[2], alt[3]/alt[2])
			})
		}
	}
}

// TestZeroAllocs: the hot collectives — barrier, split-phase barrier and
// 1-int Reduce — and an active message's round trip allocate nothing, on
// shared memory and between node leaders (the data network's two
// transports: shmnet.Net on one node, MPI point-to-point across).
func TestZeroAllocs(t *testing.T) {
	for _, node := range []string{"", "1"} {
		out, err := mpirun(t, 2, "allocs", time.Minute, false, mpi.EnvNode+"="+node)
		if err != nil {
			t.Fatalf("%s=%q: %v\n%s", mpi.EnvNode, node, err, out)
		}
		for k := range 2 {
			if want := fmt.Sprintf("PE %d: allocs 0 0 0 0\n", k); !strings.Contains(out, want) {
				t.Errorf("%s=%q: no %q in:\n%s", mpi.EnvNode, node, want, out)
			}
		}
	}
}

// allocs is the ranks' side of TestZeroAllocs.
func allocs(p *papers.PE) error {
	var err error
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	ep, err := am.Of(p)
	if err != nil {
		return err
	}
	got, want := 0, 0
	hRep := ep.Register(func(*am.Msg) { got++ })
	hReq := ep.Register(func(m *am.Msg) { m.Reply(hRep, m.Args) })
	replied := func() bool { return got >= want }
	a := [4]float64{
		testing.AllocsPerRun(1000, func() { keep(p.Barrier()) }),
		testing.AllocsPerRun(1000, func() { keep(p.StartBarrier()); keep(p.CompleteBarrier()) }),
		testing.AllocsPerRun(1000, func() { _, e := papers.Reduce(p, papers.Sum, int32(p.Self())); keep(e) }),
		testing.AllocsPerRun(1000, func() { // PE 1 answers in the barrier
			if p.Self() == 0 {
				want++
				keep(ep.Request(1, hReq, am.Args{1}))
				keep(ep.Wait("reply", 1, replied))
			}
			keep(am.Barrier(p))
		}),
	}
	fmt.Printf("PE %d: allocs %v %v %v %v\n", p.Self(), a[0], a[1], a[2], a[3])
	return err
}

// bench is the ranks' side of BenchmarkCollectives: as the anchor, 1000
// warm-up operations, then 20000 timed; then, in the same process, blocks
// of 1000 of MPI's blocking calls and of the backend's, alternating, 10 of
// each: on a machine shared with other work the load changes between the
// anchor's run and the backend's, and alternating blocks see the same
// load. PE 0 prints the means over ranks.
func bench(p *papers.PE) error {
	const skip, it, blk, rounds = 1000, 20000, 1000, 10
	barrier := mpi.Barrier
	reduce := func() error { _, err := papers.Reduce(p, papers.Sum, int32(p.Self())); return err }
	allreduce := func() error { _, err := mpi.AllreduceInt(p.Self()); return err }
	loop := func(op func() error, n int) (time.Duration, error) {
		t := time.Now()
		for range n {
			if err := op(); err != nil {
				return 0, err
			}
		}
		return time.Since(t), nil
	}
	ops := [...]func() error{p.Barrier, reduce, barrier, p.Barrier, allreduce, reduce}
	var d [len(ops)]time.Duration
	for i, op := range ops[:2] {
		if _, err := loop(op, skip); err != nil {
			return err
		}
		t, err := loop(op, it)
		if err != nil {
			return err
		}
		d[i] = t * blk * rounds / it
	}
	for range rounds {
		for i, op := range ops[2:] {
			t, err := loop(op, blk)
			if err != nil {
				return err
			}
			d[2+i] += t
		}
	}
	var us [len(ops)]float64
	for i := range d {
		sum, err := papers.Reduce(p, papers.Sum, float64(d[i].Nanoseconds())/1e3/(blk*rounds))
		if err != nil {
			return err
		}
		us[i] = sum / float64(p.PEs())
	}
	if p.Self() == 0 {
		fmt.Printf("bench barrier_us %.3f allreduce_int_us %.3f\n", us[0], us[1])
		fmt.Printf("alternating MPI_Barrier %.3f barrier %.3f MPI_Allreduce %.3f allreduce %.3f\n", us[2], us[3], us[4], us[5])
	}
	return nil
}

// parseBench returns the backend's barrier and allreduce, then
// alternating with MPI's: MPI_Barrier, barrier, MPI_Allreduce, allreduce.
func parseBench(b *testing.B, out string) (r [2]float64, alt [4]float64) {
	found := 0
	for _, line := range strings.Split(out, "\n") {
		if n, _ := fmt.Sscanf(line, "bench barrier_us %g allreduce_int_us %g", &r[0], &r[1]); n == 2 {
			found++
		}
		if n, _ := fmt.Sscanf(line, "alternating MPI_Barrier %g barrier %g MPI_Allreduce %g allreduce %g", &alt[0], &alt[1], &alt[2], &alt[3]); n == 4 {
			found++
		}
	}
	if found != 2 {
		b.Fatalf("no bench lines in:\n%s", out)
	}
	return r, alt
}
