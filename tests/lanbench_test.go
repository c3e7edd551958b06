//go:build linux

package tests

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/hosts"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// lanCounts are the PE counts BenchmarkLAN runs the all-to-all at.
var lanCounts = []int{2, 4, 8}

// lanA2A is the all-to-alls timed per run: Open MPI's 8 ranks, which
// busy-poll, took minutes for 300 on 2 loaded CPUs.
const lanA2A = 100

// lanFig is one phase of one process of lanbench: the operations timed,
// their wall time and the process's CPU time, in seconds.
type lanFig struct{ ops, wall, cpu float64 }

// BenchmarkLAN measures the TCP data network as a cluster has it: every
// PE a process on an emulated host of its own (package internal/hosts:
// network namespaces, a veth each on one bridge), every PE on its port
// of one board served as ppdev files. In each of 3 rounds, in an order
// that turns each round, it runs
//
//   - ours (testdata/lanbench): with 2 PEs a round trip of active
//     messages and Split-C bulk puts and gets of 64 KiB, 1 MiB and 16
//     MiB, PE 0 on host 0 and PE 1 on host 1; then at 2, 4 and 8 PEs an
//     8-byte get from every other PE and a sync (an all-to-all), 100
//     times; the frames authenticated (the default);
//   - a plain Go TCP pair (baseline.GoTCP) across the same two hosts: the
//     same round trip, puts and gets;
//   - Open MPI over TCP (../am/tcpnet/testdata/mpi_tcp.c, mpirun across
//     the hosts with --mca btl tcp,self --mca osc ^sm,ucx): the same at
//     2 ranks and the all-to-all at 2, 4 and 8.
//
// It reports the medians of the rounds (rt-µs, go-rt-µs, mpi-rt-µs,
// putN-MB/s, getN-MB/s and Go's and MPI's, a2aN-µs, mpi-a2aN-µs) and the
// medians of the rounds' ratios: OP/go and OP/mpi (ours over theirs:
// time for the round trip and the all-to-all, bandwidth for the
// blocks), cpu/go-OP (the CPU time of both processes per operation, ours
// over Go's), a2aN/a2a2; and, per all-to-all, a2aN-cpu-µs/get (the median
// PE's CPU time per word got) and a2aN-bound-µs (every PE's CPU time per
// all-to-all over this machine's CPUs: the least wall time the CPUs
// allow). It skips, saying why, without root, namespaces, FUSE or mpirun
// (MPI's column only).
//
//	go test -run '^$' -bench LAN -benchtime 1x ./tests
func BenchmarkLAN(b *testing.B) {
	const rounds = 3
	boards := map[int]string{}
	var dirs []string
	for _, n := range lanCounts { // before the hosts, which keep them of the machine's FUSE mounts
		boards[n] = fuseBoard(b, n)
		dirs = append(dirs, boards[n])
	}
	c := hosts.New(b, slices.Max(lanCounts), 1, dirs...)
	prog := bin(b, "lanbench")
	mpi := lanMPI(b)
	// The rounds' figures and ratios, by name.
	figs := map[string][]float64{}
	add := func(name string, v float64) { figs[name] = append(figs[name], v) }
	for b.Loop() {
		for round := range rounds {
			ours, gos := map[string][]lanFig{}, map[string][]lanFig{}
			theirs := map[string]float64{}
			for i := range 3 {
				start := time.Now()
				switch at := (i + round) % 3; at {
				case 0:
					for _, n := range lanCounts {
						maps.Copy(ours, lanPEs(b, c, boards[n], prog, n))
					}
				case 1:
					gos = lanGoPair(b, c, prog)
				case 2:
					if mpi == "" {
						continue
					}
					maps.Copy(theirs, lanRunMPI(b, c, 2, mpi, "2000"))
					for _, n := range lanCounts {
						maps.Copy(theirs, lanRunMPI(b, c, n, mpi, strconv.Itoa(lanA2A), "a2a"))
					}
				}
				b.Logf("round %d: %s took %v (load %.0f)", round, []string{"ours", "Go's", "MPI's"}[(i+round)%3], time.Since(start).Round(time.Second), testenv.LoadAverage())
			}
			for name, pes := range ours {
				if strings.HasPrefix(name, "a2a") {
					continue
				}
				g := gos[name]
				per, goPer := pes[0].wall/pes[0].ops, g[0].wall/g[0].ops
				cpu, goCPU := (pes[0].cpu+pes[1].cpu)/pes[0].ops, (g[0].cpu+g[1].cpu)/g[0].ops
				add("cpu/go-"+name, cpu/goCPU)
				if name == "rt" {
					add("rt-µs", per*1e6)
					add("go-rt-µs", goPer*1e6)
					add("rt/go", per/goPer)
					if v := theirs["rt_us"]; v > 0 {
						add("mpi-rt-µs", v)
						add("rt/mpi", per*1e6/v)
					}
					continue
				}
				size, _ := strconv.Atoi(strings.TrimSuffix(name[3:], "K"))
				bw, goBW := float64(size<<10)/per/1e6, float64(size<<10)/goPer/1e6
				add(name+"-MB/s", bw)
				add("go-"+name+"-MB/s", goBW)
				add(name+"/go", bw/goBW)
				if v := theirs[fmt.Sprintf("%s_MBps %d", name[:3], size<<10)]; v > 0 {
					add("mpi-"+name+"-MB/s", v)
					add(name+"/mpi", bw/v)
				}
			}
			two := 0.0
			for _, n := range lanCounts {
				pes := ours[fmt.Sprintf("a2a%d", n)]
				us := pes[0].wall / pes[0].ops * 1e6
				if n == lanCounts[0] {
					two = us
				}
				perGet, all := make([]float64, len(pes)), 0.0
				for k, pe := range pes {
					perGet[k] = pe.cpu / pe.ops / float64(n-1) * 1e6
					all += pe.cpu / pe.ops * 1e6
				}
				add(fmt.Sprintf("a2a%d-µs", n), us)
				add(fmt.Sprintf("a2a%d/a2a2", n), us/two)
				add(fmt.Sprintf("a2a%d-cpu-µs/get", n), median(perGet))
				add(fmt.Sprintf("a2a%d-bound-µs", n), all/float64(runtime.NumCPU()))
				if v := theirs[fmt.Sprintf("a2a%d_us", n)]; v > 0 {
					add(fmt.Sprintf("mpi-a2a%d-µs", n), v)
					add(fmt.Sprintf("a2a%d/mpi", n), us/v)
				}
			}
		}
	}
	for name, v := range figs {
		b.ReportMetric(median(v), name)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// lanPEs runs lanbench as n PEs on the board at dir, PE k on host k, and
// returns its figures by phase, one per PE.
func lanPEs(b *testing.B, c *hosts.Cluster, dir, prog string, n int) map[string][]lanFig {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for k := range n {
		cmd := c.Command(ctx, k, prog, "-a2a", strconv.Itoa(lanA2A))
		cmd.Env = append(os.Environ(), spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+filepath.Join(dir, "parport"+strconv.Itoa(k)), spmd.EnvTimeout+"=20s", spmd.EnvCheckIn+"=20s")
		cmd.Stdout, cmd.Stderr = &outs[k], &outs[k]
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds[k] = cmd
	}
	var failed []string
	for k, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			failed = append(failed, fmt.Sprintf("PE %d: %v\n%s", k, err, outs[k].String()))
		}
	}
	if failed != nil {
		b.Fatalf("lanbench on %d PEs:\n%s", n, strings.Join(failed, "\n"))
	}
	figs := map[string][]lanFig{}
	for k := range cmds {
		for name, f := range lanFigures(b, outs[k].String()) {
			figs[name] = append(figs[name], f)
		}
	}
	return figs
}

// lanGoPair runs lanbench's Go pair, its client on host 0 and its server
// on host 1, and returns its figures by phase: the client's, the
// server's.
func lanGoPair(b *testing.B, c *hosts.Cluster, prog string) map[string][]lanFig {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const port = "7070"
	server := c.Command(ctx, 1, prog, "goserve", ":"+port)
	var out strings.Builder
	server.Stdout, server.Stderr = &out, &out
	if err := server.Start(); err != nil {
		b.Fatal(err)
	}
	client, err := c.Command(ctx, 0, prog, "goclient", c.Hosts[1].Addr.String()+":"+port).CombinedOutput()
	if err != nil {
		server.Process.Kill()
		server.Wait()
		b.Fatalf("lanbench goclient: %v\n%s", err, client)
	}
	if err := server.Wait(); err != nil {
		b.Fatalf("lanbench goserve: %v\n%s", err, out.String())
	}
	figs := map[string][]lanFig{}
	for _, o := range []string{string(client), out.String()} {
		for name, f := range lanFigures(b, o) {
			figs[name] = append(figs[name], f)
		}
	}
	return figs
}

// lanFigures reads lanbench's "PHASE ops=C wall=S cpu=S" lines.
func lanFigures(b *testing.B, out string) map[string]lanFig {
	b.Helper()
	figs := map[string]lanFig{}
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		var name string
		var f lanFig
		if _, err := fmt.Sscanf(sc.Text(), "%s ops=%g wall=%g cpu=%g", &name, &f.ops, &f.wall, &f.cpu); err == nil {
			figs[name] = f
		}
	}
	if len(figs) == 0 {
		b.Fatalf("lanbench printed no figures:\n%s", out)
	}
	return figs
}

// lanMPI builds the MPI program BenchmarkLAN runs beside ours: "" (said)
// when Open MPI is missing.
func lanMPI(b *testing.B) string {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Logf("no Open MPI figures: %s not found (apt-get install openmpi-bin libopenmpi-dev)", tool)
			return ""
		}
	}
	prog := filepath.Join(b.TempDir(), "mpi_tcp")
	if out, err := exec.Command("mpicc", "-O2", "-o", prog, filepath.Join("..", "am", "tcpnet", "testdata", "mpi_tcp.c")).CombinedOutput(); err != nil {
		b.Fatalf("mpicc: %v\n%s", err, out)
	}
	return prog
}

// lanRunMPI runs the MPI program on np ranks across the hosts, a rank
// each, and returns its "NAME VALUE" lines by name; an a2a_us figure is
// named a2aN_us.
func lanRunMPI(b *testing.B, c *hosts.Cluster, np int, prog string, args ...string) map[string]float64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := c.Mpirun(ctx, np, append([]string{"--mca", "btl", "tcp,self", "--mca", "osc", "^sm,ucx", prog}, args...)...).CombinedOutput()
	if err != nil {
		b.Fatalf("mpirun -np %d mpi_tcp: %v\n%s", np, err, out)
	}
	figs := map[string]float64{}
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			name := strings.Join(f[:len(f)-1], " ")
			if name == "a2a_us" {
				name = fmt.Sprintf("a2a%d_us", np)
			}
			figs[name] = v
		}
	}
	return figs
}
