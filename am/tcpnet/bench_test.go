//go:build linux

package tcpnet_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
	"github.com/ttlpapers/ttlpapers/splitc"
)

// ops are the operations the benchmarks time on PE 0 of 2 goroutine PEs
// on TCP: a round trip of active messages, and a Split-C bulk put to PE
// 1's part of a spread array or a bulk get from it, to completion.
type ops struct {
	ep       *am.Endpoint
	m        *splitc.Memory
	req, rep am.HandlerID
	replies  int
	want     int
	replied  func() bool // made once: a closure per wait would allocate
	dst      splitc.Global[uint64]
	buf      []uint64
}

func (o *ops) roundTrip() error {
	o.want = o.replies + 1
	if err := o.ep.Request(1, o.req, am.Args{1}); err != nil {
		return err
	}
	return o.ep.Wait("round trip", 1, o.replied)
}

func (o *ops) put(size int) error {
	if err := splitc.BulkPut(o.m, o.dst, o.buf[:size/8]); err != nil {
		return err
	}
	return splitc.Sync(o.m)
}

func (o *ops) get(size int) error {
	if err := splitc.BulkGet(o.m, o.buf[:size/8], o.dst); err != nil {
		return err
	}
	return splitc.Sync(o.m)
}

// maxPut is the largest bulk put or get timed.
const maxPut = 1 << 20

// maxBulk is the largest block BenchmarkVsGoTCP moves.
const maxBulk = 16 << 20

// pair runs client on PE 0, with blocks of up to maxPut bytes; PE 1
// serves until it returns. The frames are authenticated, the default.
func pair(tb testing.TB, client func(o *ops) error) { pairOf(tb, tcpnet.Authenticated, maxPut, client) }

// pairOf is pair with the frames protected by mode, and blocks of up to
// most bytes.
func pairOf(tb testing.TB, mode tcpnet.Mode, most int, client func(o *ops) error) {
	tb.Helper()
	err := runMode(tb, 2, "", mode, 20*time.Second, func(p *papers.PE) error {
		ep, err := am.Of(p)
		if err != nil {
			return err
		}
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		s, err := splitc.AllSpreadMalloc[uint64](m, 2*most/8)
		if err != nil {
			return err
		}
		o := &ops{ep: ep, m: m, dst: s.At(1), buf: make([]uint64, most/8+2)[2:]}
		o.replied = func() bool { return o.replies == o.want }
		o.req = ep.Register(func(m *am.Msg) { m.Reply(o.rep, m.Args) })
		o.rep = ep.Register(func(*am.Msg) { o.replies++ })
		stop := false
		hStop := ep.Register(func(*am.Msg) { stop = true })
		if err := am.Barrier(p); err != nil { // every PE has its handlers
			return err
		}
		if p.Self() == 1 {
			return ep.Wait("serve", 0, func() bool { return stop })
		}
		if err := client(o); err != nil {
			return err
		}
		return ep.Request(1, hStop, am.Args{})
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestZeroAllocs: a round trip, a bulk put and a bulk get, on both PEs
// (the count is the process's), allocate nothing, with the frames
// authenticated or private; nor does the question a slow board wait asks
// every 10 ms (Endpoint.Dead), while the other PE is attached.
func TestZeroAllocs(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector's own allocations count too; .ci/run runs this test without it")
	}
	for _, mode := range []tcpnet.Mode{tcpnet.Authenticated, tcpnet.Private} {
		pairOf(t, mode, maxPut, func(o *ops) error {
			var err error
			keep := func(e error) {
				if e != nil && err == nil {
					err = e
				}
			}
			if a := testing.AllocsPerRun(2000, func() { keep(o.roundTrip()) }); a != 0 {
				t.Errorf("%s: a round trip allocates %v times", mode, a)
			}
			var dead peset.Set
			if a := testing.AllocsPerRun(2000, func() { dead |= o.ep.Dead(1 << 1) }); a != 0 || dead != 0 {
				t.Errorf("%s: asking whether PE 1 died allocates %v times, and says %v", mode, a, dead)
			}
			for _, size := range []int{4 << 10, 64 << 10, maxPut} {
				if a := testing.AllocsPerRun(500, func() { keep(o.put(size)) }); a != 0 {
					t.Errorf("%s: a bulk put of %d bytes allocates %v times", mode, size, a)
				}
				if a := testing.AllocsPerRun(500, func() { keep(o.get(size)) }); a != 0 {
					t.Errorf("%s: a bulk get of %d bytes allocates %v times", mode, size, a)
				}
			}
			return err
		})
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	b.ReportAllocs()
	pair(b, func(o *ops) error {
		for b.Loop() {
			if err := o.roundTrip(); err != nil {
				return err
			}
		}
		return nil
	})
}

func BenchmarkBulkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, maxPut} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			pair(b, func(o *ops) error {
				for b.Loop() {
					if err := o.put(size); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

func BenchmarkBulkGet(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, maxPut, maxBulk} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			pairOf(b, tcpnet.Authenticated, maxBulk, func(o *ops) error {
				for b.Loop() {
					if err := o.get(size); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// openMPI runs testdata/mpi_tcp.c over TCP (mpirun --mca btl tcp,self,
// its windows kept off shared memory: --mca osc ^sm,ucx, else the ranks
// of one host get and put through osc sm, memory copies).
type openMPI struct{ bin string }

// newOpenMPI builds the program; nil, said, when MPI is missing or it
// does not build: the other columns are still measured.
func newOpenMPI(b *testing.B) *openMPI {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Logf("no Open MPI column: %s not found (apt-get install openmpi-bin libopenmpi-dev)", tool)
			return nil
		}
	}
	bin := filepath.Join(b.TempDir(), "mpi_tcp")
	if out, err := exec.Command("mpicc", "-O2", "-o", bin, filepath.Join("testdata", "mpi_tcp.c")).CombinedOutput(); err != nil {
		b.Logf("no Open MPI column: mpicc: %v\n%s", err, out)
		return nil
	}
	return &openMPI{bin}
}

// figures runs the program on np ranks with args and returns what it
// printed, by name (empty if m is nil or the run failed, which it says).
func (m *openMPI) figures(b *testing.B, np int, args ...string) map[string]float64 {
	figs := map[string]float64{}
	if m == nil {
		return figs
	}
	cmd := append([]string{"--allow-run-as-root", "--oversubscribe", "--mca", "btl", "tcp,self", "--mca", "osc", "^sm,ucx", "-np", strconv.Itoa(np), m.bin}, args...)
	out, err := exec.Command("mpirun", cmd...).CombinedOutput()
	if err != nil {
		b.Logf("no Open MPI figures this round: mpirun: %v\n%s", err, out)
		return figs
	}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				figs[strings.Join(f[:len(f)-1], " ")] = v
			}
		}
	}
	return figs
}

// modes are the frames' protections the benchmarks compare: the default
// (authenticated) against none, and encryption.
var modes = []tcpnet.Mode{tcpnet.Unprotected, tcpnet.Authenticated, tcpnet.Private}

// BenchmarkVsGoTCP times, in each of 3 rounds, ours, a plain Go TCP
// pair (baseline.GoTCP: the floor for Go on this kernel) and Open MPI over
// TCP (testdata/mpi_tcp.c: MPI_Send/MPI_Recv, flushed MPI_Put and
// MPI_Get), in an order that turns each round: a round trip, bulk puts
// and gets of 64 KiB to 16 MiB. It reports the medians of the rounds,
// ours (authenticated, the default), Go's and MPI's, and the medians of
// the rounds' ratios: rt/go and rt/mpi (ours over their time; the goal at
// most 1.5 and 1), putN/go, getN/go (ours over Go's bandwidth; the goal at
// least 0.8), putN/mpi, getN/mpi (at least 1), and cpu/go-OP: the
// process's CPU time per operation (both ends), ours over Go's, which a
// loaded machine disturbs less than the wall time. Each round also times
// ours with the frames unprotected and private: auth/none-OP and
// private/none-OP are the medians of the rounds' ratios of the time per
// operation to unprotected's, the cost of authentication and of
// encryption; auth/none-cpu-OP and private/none-cpu-OP the same of the
// CPU time.
func BenchmarkVsGoTCP(b *testing.B) {
	const rounds, rts = 3, 2000
	sizes := []int{64 << 10, 1 << 20, 16 << 20}
	g, err := baseline.NewGoTCP(maxBulk, 20*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			b.Error(err)
		}
	}()
	mpi := newOpenMPI(b)
	mpiNames := map[string]string{"rt": "rt_us"} // mpi_tcp.c's name of each figure
	for _, size := range sizes {
		for _, op := range []string{"put", "get"} {
			mpiNames[fmt.Sprintf("%s%dK", op, size>>10)] = fmt.Sprintf("%s_MBps %d", op, size)
		}
	}
	block := make([]byte, maxBulk)
	// timed runs op count times and returns the time per op; cpu, the
	// process's CPU time per op.
	var cpu float64
	timed := func(count int, op func() error) (float64, error) {
		start, startCPU := time.Now(), cpuTime()
		for range count {
			if err := op(); err != nil {
				return 0, err
			}
		}
		cpu = (cpuTime() - startCPU).Seconds() / float64(count)
		return time.Since(start).Seconds() / float64(count), nil
	}
	type figure struct{ ours, gos, mpi, toMPI, cpuGo, auth, private, authCPU, privateCPU []float64 }
	figs := map[string]*figure{}
	fig := func(name string) *figure {
		f := figs[name]
		if f == nil {
			f = &figure{}
			figs[name] = f
		}
		return f
	}
	for b.Loop() {
		for round := range rounds {
			per := map[tcpnet.Mode]map[string]float64{}    // the round's time per operation
			perCPU := map[tcpnet.Mode]map[string]float64{} // and CPU time
			var theirs map[string]float64                  // MPI's figures this round
			for i := range len(modes) + 1 {
				at := (i + round) % (len(modes) + 1) // each round in another order
				if at == len(modes) {
					theirs = mpi.figures(b, 2, strconv.Itoa(rts))
					continue
				}
				mode := modes[at]
				per[mode], perCPU[mode] = map[string]float64{}, map[string]float64{}
				pairOf(b, mode, maxBulk, func(o *ops) error {
					// measure times op and, authenticated, Go's beside it.
					measure := func(name string, count int, op, goOp func() error, size int) error {
						ours, err := timed(count, op)
						perCPU[mode][name] = cpu
						per[mode][name] = ours
						if err != nil || mode != tcpnet.Authenticated {
							return err
						}
						ourCPU := cpu
						gos, err := timed(count, goOp)
						if err != nil {
							return err
						}
						f := fig(name)
						f.cpuGo = append(f.cpuGo, ourCPU/cpu)
						if size > 0 { // bandwidths: the ratio is Go's time over ours
							ours, gos = float64(size)/ours/1e6, float64(size)/gos/1e6
						}
						f.ours, f.gos = append(f.ours, ours), append(f.gos, gos)
						return nil
					}
					if err := measure("rt", rts, o.roundTrip, g.RoundTrip, 0); err != nil {
						return err
					}
					for _, size := range sizes {
						count := max(4, (64<<20)/size)
						if err := measure(fmt.Sprintf("put%dK", size>>10), count, func() error { return o.put(size) }, func() error { return g.Put(block[:size]) }, size); err != nil {
							return err
						}
						if err := measure(fmt.Sprintf("get%dK", size>>10), count, func() error { return o.get(size) }, func() error { return g.Get(block[:size]) }, size); err != nil {
							return err
						}
					}
					return nil
				})
			}
			for name, none := range per[tcpnet.Unprotected] {
				f := fig(name)
				f.auth = append(f.auth, per[tcpnet.Authenticated][name]/none)
				f.private = append(f.private, per[tcpnet.Private][name]/none)
				f.authCPU = append(f.authCPU, perCPU[tcpnet.Authenticated][name]/perCPU[tcpnet.Unprotected][name])
				f.privateCPU = append(f.privateCPU, perCPU[tcpnet.Private][name]/perCPU[tcpnet.Unprotected][name])
				ours := f.ours[len(f.ours)-1]
				if v := theirs[mpiNames[name]]; v > 0 {
					f.mpi = append(f.mpi, v)
					if name == "rt" {
						f.toMPI = append(f.toMPI, ours*1e6/v)
					} else {
						f.toMPI = append(f.toMPI, ours/v)
					}
				}
			}
		}
	}
	for name, f := range figs {
		b.ReportMetric(median(f.auth), "auth/none-"+name)
		b.ReportMetric(median(f.private), "private/none-"+name)
		b.ReportMetric(median(f.authCPU), "auth/none-cpu-"+name)
		b.ReportMetric(median(f.privateCPU), "private/none-cpu-"+name)
		b.ReportMetric(median(f.cpuGo), "cpu/go-"+name)
		ratios := make([]float64, len(f.ours))
		for i := range ratios {
			ratios[i] = f.ours[i] / f.gos[i]
		}
		unit := "-MB/s"
		if name == "rt" {
			unit = "-µs"
			for i := range f.ours {
				f.ours[i], f.gos[i] = f.ours[i]*1e6, f.gos[i]*1e6
			}
		}
		b.ReportMetric(median(f.ours), name+unit)
		b.ReportMetric(median(f.gos), "go-"+name+unit)
		b.ReportMetric(median(ratios), name+"/go")
		if len(f.mpi) > 0 {
			b.ReportMetric(median(f.mpi), "mpi-"+name+unit)
			b.ReportMetric(median(f.toMPI), name+"/mpi")
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkIdle: the CPU the process uses while PE 1 waits for a message
// and PE 0 sleeps without polling for a second, as a fraction of one CPU
// (idle-cpu; the goal at most 0.02).
func BenchmarkIdle(b *testing.B) {
	const idle = time.Second
	for b.Loop() {
		pair(b, func(o *ops) error {
			before := cpuTime()
			time.Sleep(idle)
			b.ReportMetric((cpuTime()-before).Seconds()/idle.Seconds(), "idle-cpu")
			return nil
		})
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAllToAll: every PE gets an 8-byte word from every other PE
// (split-phase gets, then Sync) over and over, at 2, 4 and 8 goroutine
// PEs, in each of 3 rounds; a2aN-µs is the median of PE 0's time per
// all-to-all at N PEs, and a2aN/a2a2 its ratio to 2 PEs' (the goal: at
// most 2 at 8 PEs), the frames authenticated. Each round also runs Open
// MPI's over TCP (N ranks, MPI_Get then MPI_Win_flush_all: mpi-a2aN-µs;
// a2aN/mpi, ours over its time, the goal at most 1). Each round also runs the
// frames unprotected and private: auth/none-a2aN and private/none-a2aN
// are the medians of the rounds' ratios of the time to unprotected's.
func BenchmarkAllToAll(b *testing.B) {
	const rounds, iters = 3, 300
	per := map[tcpnet.Mode]map[int][]float64{}
	for _, mode := range modes {
		per[mode] = map[int][]float64{}
	}
	mpi := newOpenMPI(b)
	theirs := map[int][]float64{}
	for b.Loop() {
		for round := range rounds {
			for _, n := range []int{2, 4, 8} {
				for i := range len(modes) + 1 {
					at := (i + round) % (len(modes) + 1) // each round in another order
					if at == len(modes) {
						if us := mpi.figures(b, n, strconv.Itoa(iters), "a2a")["a2a_us"]; us > 0 {
							theirs[n] = append(theirs[n], us)
						}
						continue
					}
					mode := modes[at]
					us, err := allToAll(b, n, mode, iters)
					if err != nil {
						b.Fatal(err)
					}
					per[mode][n] = append(per[mode][n], us)
				}
			}
		}
	}
	ratio := func(over, under []float64) float64 {
		r := make([]float64, len(over))
		for i := range r {
			r[i] = over[i] / under[i]
		}
		return median(r)
	}
	auth, none := per[tcpnet.Authenticated], per[tcpnet.Unprotected]
	for _, n := range []int{2, 4, 8} {
		b.ReportMetric(median(auth[n]), fmt.Sprintf("a2a%d-µs", n))
		if n > 2 {
			b.ReportMetric(ratio(auth[n], auth[2]), fmt.Sprintf("a2a%d/a2a2", n))
		}
		if len(theirs[n]) == len(auth[n]) {
			b.ReportMetric(median(theirs[n]), fmt.Sprintf("mpi-a2a%d-µs", n))
			b.ReportMetric(ratio(auth[n], theirs[n]), fmt.Sprintf("a2a%d/mpi", n))
		}
		b.ReportMetric(ratio(auth[n], none[n]), fmt.Sprintf("auth/none-a2a%d", n))
		b.ReportMetric(ratio(per[tcpnet.Private][n], none[n]), fmt.Sprintf("private/none-a2a%d", n))
	}
}

// allToAll runs BenchmarkAllToAll's loop on n PEs with mode: PE 0's
// time per all-to-all, in µs.
func allToAll(b *testing.B, n int, mode tcpnet.Mode, iters int) (us float64, err error) {
	err = runMode(b, n, "", mode, 20*time.Second, func(p *papers.PE) error {
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		s, err := splitc.AllSpreadMalloc[uint64](m, n)
		if err != nil {
			return err
		}
		if err := am.Barrier(p); err != nil {
			return err
		}
		words := make([]uint64, n)
		start := time.Now()
		for range iters {
			for k := range n {
				if k != p.Self() {
					if err := splitc.Get(m, &words[k], s.At(k)); err != nil {
						return err
					}
				}
			}
			if err := splitc.Sync(m); err != nil {
				return err
			}
		}
		if p.Self() == 0 {
			us = time.Since(start).Seconds() / float64(iters) * 1e6
		}
		return am.Barrier(p)
	})
	return us, err
}
