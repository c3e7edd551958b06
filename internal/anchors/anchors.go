// Package anchors runs the baseline programs of ../shared/anchors — the
// native Go barriers and Open MPI's collectives — so that the
// project's benchmarks (go test -bench, papersctl bench --procs) measure
// them in the same invocation and print ratios rather than absolute times
// from different days. Each baseline is built once per process, to a
// temporary directory, and each figure measured once per PE count.
package anchors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvDir overrides where the anchors are found.
const EnvDir = "PAPERS_ANCHORS"

// ErrAbsent reports that the anchors, or a tool one needs, are missing:
// the benchmarks then skip the comparison with a note.
var ErrAbsent = errors.New("anchors: not found")

// Dir finds the anchors: $PAPERS_ANCHORS, else a directory shared/anchors
// in the working directory or one of its parents (from a checkout in
// /work/main, /work/shared/anchors).
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fi, err := os.Stat(filepath.Join(d, "shared", "anchors")); err == nil && fi.IsDir() {
			return filepath.Join(d, "shared", "anchors"), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: no shared/anchors above the working directory (set %s)", ErrAbsent, EnvDir)
		}
		d = parent
	}
}

var (
	mu      sync.Mutex
	builds  = map[string]string{} // anchor → binary
	figures = map[string]float64{}
	tmp     string
)

// runTimeout bounds one run of an anchor.
const runTimeout = 3 * time.Minute

// GoBarriers are gobarrier's native Go barriers between n goroutines, in
// µs per barrier: a sense-reversing spin barrier (the floor while every
// goroutine has a CPU), the same barrier yielding at once, and a
// sync.Cond barrier (the Go runtime's own park and hand-off: the floor when
// goroutines outnumber CPUs).
type GoBarriers struct {
	Spin, Yield, Cond float64
}

// Best is the lowest of the three: the floor for an emulator that runs
// each PE as a goroutine.
func (g GoBarriers) Best() float64 { return min(g.Spin, g.Yield, g.Cond) }

// Go returns gobarrier's three barriers with n goroutines; one run gives
// all three.
func Go(n int) (GoBarriers, error) {
	key := fmt.Sprintf("go n=%d", n)
	var g GoBarriers
	for _, f := range []struct {
		v    *float64
		name string
	}{{&g.Spin, "spin_barrier_us"}, {&g.Yield, "yield_barrier_us"}, {&g.Cond, "cond_barrier_us"}} {
		v, err := figure(key+" "+f.name, func() (string, error) { return runGo(key, n) }, f.name)
		if err != nil {
			return g, err
		}
		*f.v = v
	}
	return g, nil
}

// runGo runs gobarrier once per PE count; the caller holds mu.
func runGo(key string, n int) (string, error) {
	return once(key, func() (string, error) {
		bin, err := build("gobarrier", func(dir, out string) *exec.Cmd {
			cmd := exec.Command("go", "build", "-o", out, ".")
			cmd.Dir = filepath.Join(dir, "gobarrier")
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
			return cmd
		})
		if err != nil {
			return "", err
		}
		// Fewer barriers for many PEs: the UDP barrier it also runs sends
		// n² datagrams a round.
		iters := max(2000, 200000/(n*n))
		return run(exec.Command(bin, "-n", strconv.Itoa(n), "-iters", strconv.Itoa(iters)))
	})
}

// MPIBarrier returns MPI_Barrier's time per barrier with n ranks on this
// machine (mpirun --oversubscribe), in µs.
func MPIBarrier(n int) (float64, error) {
	c, err := MPI(n, false)
	return c.Barrier, err
}

// Collectives are mpi_collectives.c's figures, µs per operation.
type Collectives struct {
	Barrier, AllreduceInt, BcastByte float64
}

// MPI returns mpi_collectives.c's figures with n ranks on this machine
// (mpirun --oversubscribe; with tcp, --mca btl tcp,self: the path a
// cluster's network takes). The anchor is built with mpicc with its loop
// counts divided by 10, so that 8 ranks on 2 CPUs take seconds rather than
// a minute; one run gives every figure.
func MPI(n int, tcp bool) (Collectives, error) {
	key := fmt.Sprintf("mpi np=%d tcp=%v", n, tcp)
	var c Collectives
	for _, f := range []struct {
		v    *float64
		name string
	}{{&c.Barrier, "barrier_us"}, {&c.AllreduceInt, "allreduce_int_us"}, {&c.BcastByte, "bcast_byte_us"}} {
		v, err := figure(key+" "+f.name, func() (string, error) { return runMPI(key, n, tcp) }, f.name)
		if err != nil {
			return c, err
		}
		*f.v = v
	}
	return c, nil
}

// outputs caches an anchor's output per configuration (guarded by mu).
var outputs = map[string]string{}

// once runs an anchor once per configuration; the caller holds mu.
func once(key string, measure func() (string, error)) (string, error) {
	if out, ok := outputs[key]; ok {
		return out, nil
	}
	out, err := measure()
	if err == nil {
		outputs[key] = out
	}
	return out, err
}

// runMPI runs mpi_collectives.c once per configuration; the caller holds
// mu.
func runMPI(key string, n int, tcp bool) (string, error) {
	return once(key, func() (string, error) {
		bin, err := buildMPI("mpi", "mpi_collectives.c", "skip = 10000, it = 200000", "skip = 1000, it = 20000")
		if err != nil {
			return "", err
		}
		if _, err := exec.LookPath("mpirun"); err != nil {
			return "", fmt.Errorf("%w: mpirun: %v", ErrAbsent, err)
		}
		args := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(n)}, TCPArgs(tcp)...)
		return run(exec.Command("mpirun", append(args, bin)...))
	})
}

// TCPArgs are mpirun's arguments for the TCP path (none without tcp).
func TCPArgs(tcp bool) []string {
	if tcp {
		return []string{"--mca", "btl", "tcp,self"}
	}
	return nil
}

// MPIData runs mpi_data.c at 2 ranks (its loop counts divided by 5, to
// keep it to seconds on a shared machine) and returns its figures by
// name: round_trip_us, send_us, get_us, put_us, and "put_bw_MBps
// size=N" for each size.
func MPIData() (map[string]float64, error) {
	mu.Lock()
	bin, err := buildMPI("mpi_data", "mpi_data.c", "it = 100000, skip = 5000", "it = 20000, skip = 1000")
	mu.Unlock()
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		return nil, fmt.Errorf("%w: mpirun: %v", ErrAbsent, err)
	}
	out, err := run(exec.Command("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", bin))
	if err != nil {
		return nil, err
	}
	figs := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line) // mpi np=2 NAME [size=N] VALUE
		if len(f) < 4 || f[0] != "mpi" {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			figs[strings.Join(f[2:len(f)-1], " ")] = v
		}
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("anchors: mpi_data printed no figures:\n%s", out)
	}
	return figs, nil
}

// buildMPI builds an MPI anchor with mpicc, its loop counts (old) replaced
// by new; the caller holds mu.
func buildMPI(name, file, old, new string) (string, error) {
	return build(name, func(dir, out string) *exec.Cmd {
		src, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil
		}
		c := out + ".c"
		if os.WriteFile(c, []byte(strings.Replace(string(src), old, new, 1)), 0o644) != nil {
			return nil
		}
		return exec.Command("mpicc", "-O2", "-o", out, c)
	})
}

// figure measures one anchor figure once per process.
func figure(key string, measure func() (string, error), name string) (float64, error) {
	mu.Lock()
	defer mu.Unlock()
	if v, ok := figures[key]; ok {
		return v, nil
	}
	out, err := measure()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == name {
				v, err := strconv.ParseFloat(f[i+1], 64)
				if err == nil {
					figures[key] = v
				}
				return v, err
			}
		}
	}
	return 0, fmt.Errorf("anchors: %s printed no %s:\n%s", key, name, out)
}

// build builds an anchor once; mk returns the build command for the
// anchors' directory and the output path (nil: the source is missing).
func build(name string, mk func(dir, out string) *exec.Cmd) (string, error) {
	if bin, ok := builds[name]; ok {
		return bin, nil
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if tmp == "" {
		if tmp, err = os.MkdirTemp("", "ttlpapers-anchors-"); err != nil {
			return "", err
		}
	}
	out := filepath.Join(tmp, name)
	cmd := mk(dir, out)
	if cmd == nil {
		return "", fmt.Errorf("%w: %s's source in %s", ErrAbsent, name, dir)
	}
	if cmd.Err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrAbsent, cmd.Args[0], cmd.Err)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("anchors: build %s: %v\n%s", name, err, msg)
	}
	builds[name] = out
	return out, nil
}

func run(cmd *exec.Cmd) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	out, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("anchors: %s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out), nil
}

// Cleanup removes the built anchors.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if tmp != "" {
		os.RemoveAll(tmp)
		tmp, builds, outputs = "", map[string]string{}, map[string]string{}
	}
}

// ReportGo adds g, the Go barriers measured for b's PE count, to b's
// metrics (spin-ns, yield-ns, cond-ns), with x-best: b's time per
// operation over the best of them. err is Go's: without the anchors it
// logs why and adds nothing.
func ReportGo(b *testing.B, g GoBarriers, err error) {
	if err != nil {
		b.Logf("no Go anchors: %v", err)
		return
	}
	b.ReportMetric(g.Spin*1e3, "spin-ns")
	b.ReportMetric(g.Yield*1e3, "yield-ns")
	b.ReportMetric(g.Cond*1e3, "cond-ns")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(g.Best()*1e3), "x-best")
}
