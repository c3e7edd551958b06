package baseline

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The MPI programs, compiled on first use with the machine's mpicc.
//
//go:embed mpi/*.c
var sources embed.FS

// ErrAbsent reports that mpicc or mpirun is missing: the comparison is
// then left out, with a note saying why.
var ErrAbsent = errors.New("baseline: MPI is not installed (apt-get install openmpi-bin libopenmpi-dev)")

// runTimeout bounds one run of an MPI program.
const runTimeout = 3 * time.Minute

// Loop counts, small enough that 8 ranks on 2 CPUs take seconds.
const (
	collectiveIters = 20000
	dataIters       = 20000
)

var (
	mu      sync.Mutex
	tmp     string                // where the programs are built
	built   = map[string]string{} // program → binary
	outputs = map[string]map[string]float64{}
)

// Collectives are MPI's figures with n ranks, µs per operation.
type Collectives struct {
	Barrier, AllreduceInt, BcastByte float64
}

// MPI measures MPI_Barrier, a 4-byte MPI_Allreduce and a 1-byte MPI_Bcast
// with n ranks on this machine (mpirun --oversubscribe; with tcp over
// TCP, the path a cluster's network takes), once per process for each
// configuration.
func MPI(n int, tcp bool) (Collectives, error) {
	args := append([]string{"-np", strconv.Itoa(n)}, TCPArgs(tcp)...)
	figs, err := figures("collectives", args, strconv.Itoa(collectiveIters))
	if err != nil {
		return Collectives{}, err
	}
	c := Collectives{Barrier: figs["barrier_us"], AllreduceInt: figs["allreduce_int_us"], BcastByte: figs["bcast_byte_us"]}
	if c.Barrier == 0 || c.AllreduceInt == 0 || c.BcastByte == 0 {
		return c, fmt.Errorf("baseline: collectives printed %v: a figure is missing", figs)
	}
	return c, nil
}

// MPIData measures MPI's data transfers between 2 ranks (over TCP with
// tcp, one-sided operations too: without osc ^sm,ucx the ranks of one
// host get and put through osc sm, memory copies) and returns them by
// name: round_trip_us, send_us, get_us, put_us, and "put_bw_MBps size=N"
// and "get_bw_MBps size=N" for N from 64 to 1 MiB by fours.
func MPIData(tcp bool) (map[string]float64, error) {
	args := append([]string{"-np", "2"}, TCPArgs(tcp)...)
	iters := dataIters
	if tcp { // a round trip over loopback TCP took 6.7 ms at load 25: 20000 outran runTimeout
		args = append(args, "--mca", "osc", "^sm,ucx")
		iters /= 10
	}
	return figures("datanet", args, strconv.Itoa(iters))
}

// TCPArgs are mpirun's arguments for the TCP path (none without tcp).
func TCPArgs(tcp bool) []string {
	if tcp {
		return []string{"--mca", "btl", "tcp,self"}
	}
	return nil
}

// figures runs a program under mpirun, once per configuration, and reads
// its "NAME VALUE" lines.
func figures(prog string, mpirunArgs []string, progArgs ...string) (map[string]float64, error) {
	mu.Lock()
	defer mu.Unlock()
	key := prog + " " + strings.Join(mpirunArgs, " ")
	if figs, ok := outputs[key]; ok {
		return figs, nil
	}
	bin, err := build(prog)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAbsent, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	args := append(append([]string{"--oversubscribe"}, mpirunArgs...), append([]string{bin}, progArgs...)...)
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("baseline: mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	figs := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			figs[strings.Join(f[:len(f)-1], " ")] = v
		}
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("baseline: %s printed no figures:\n%s", prog, out)
	}
	outputs[key] = figs
	return figs, nil
}

// build compiles a program once per process; the caller holds mu.
func build(prog string) (string, error) {
	if bin, ok := built[prog]; ok {
		return bin, nil
	}
	if _, err := exec.LookPath("mpicc"); err != nil {
		return "", fmt.Errorf("%w: %v", ErrAbsent, err)
	}
	if tmp == "" {
		d, err := os.MkdirTemp("", "ttlpapers-baseline-")
		if err != nil {
			return "", err
		}
		tmp = d
	}
	src, err := sources.ReadFile("mpi/" + prog + ".c")
	if err != nil {
		return "", err
	}
	c, bin := filepath.Join(tmp, prog+".c"), filepath.Join(tmp, prog)
	if err := os.WriteFile(c, src, 0o644); err != nil {
		return "", err
	}
	if out, err := exec.Command("mpicc", "-O2", "-Wall", "-o", bin, c).CombinedOutput(); err != nil {
		return "", fmt.Errorf("baseline: mpicc %s.c: %v\n%s", prog, err, out)
	}
	built[prog] = bin
	return bin, nil
}

// Cleanup removes the built programs (their figures stay).
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if tmp != "" {
		os.RemoveAll(tmp)
		tmp, built = "", map[string]string{}
	}
}
