package spmd_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/faulttrial"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
	"github.com/ttlpapers/ttlpapers/spmd"
	"github.com/ttlpapers/ttlpapers/spmd/shm"
)

func TestEnvAndFlags(t *testing.T) {
	t.Setenv(spmd.EnvPE, "2")
	t.Setenv(spmd.EnvPEs, "4")
	t.Setenv(spmd.EnvPort, "shm:/dev/shm/papers-x")
	t.Setenv(spmd.EnvTimeout, "3s")
	t.Setenv(spmd.EnvCheckIn, "2m")
	t.Setenv(spmd.EnvVerify, "true")
	o, err := spmd.Env()
	if err != nil || o != (spmd.Options{PE: 2, PEs: 4, Port: "shm:/dev/shm/papers-x", Timeout: 3 * time.Second, CheckIn: 2 * time.Minute, Verify: true}) {
		t.Fatalf("Env() = %+v, %v", o, err)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	opts := spmd.RegisterFlags(fs)
	if err := fs.Parse([]string{"-papers.pe", "1", "-papers.board", "port:0x378", "-papers.checkin", "90s", "-papers.verify=false"}); err != nil {
		t.Fatal(err)
	}
	if *opts != (spmd.Options{PE: 1, PEs: 4, Port: "port:0x378", Timeout: 3 * time.Second, CheckIn: 90 * time.Second}) {
		t.Errorf("flags over env: %+v", *opts)
	}
	t.Setenv(spmd.EnvPort, "")
	t.Setenv(spmd.EnvBoard, "shm:/dev/shm/papers-old")
	if o, err := spmd.Env(); err != nil || o.Port != "shm:/dev/shm/papers-old" {
		t.Errorf("the old name %s: Env() = %+v, %v", spmd.EnvBoard, o, err)
	}
	t.Setenv(spmd.EnvPort, "shm:/dev/shm/papers-new")
	if _, err := spmd.Env(); err == nil || !strings.Contains(err.Error(), spmd.EnvBoard) {
		t.Errorf("%s and %s disagreeing: %v", spmd.EnvPort, spmd.EnvBoard, err)
	}
	t.Setenv(spmd.EnvBoard, "")
	t.Setenv(spmd.EnvVerify, "always")
	if _, err := spmd.Env(); err == nil || !strings.Contains(err.Error(), spmd.EnvVerify) {
		t.Errorf("bad %s: %v", spmd.EnvVerify, err)
	}
	t.Setenv(spmd.EnvVerify, "")
	t.Setenv(spmd.EnvCheckIn, "soon")
	if _, err := spmd.Env(); err == nil || !strings.Contains(err.Error(), spmd.EnvCheckIn) {
		t.Errorf("bad %s: %v", spmd.EnvCheckIn, err)
	}
	t.Setenv(spmd.EnvPE, "two")
	if _, err := spmd.Env(); err == nil || !strings.Contains(err.Error(), spmd.EnvPE) {
		t.Errorf("bad %s: %v", spmd.EnvPE, err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		o    spmd.Options
		want string
	}{
		{spmd.Options{PE: 0}, spmd.EnvPEs},
		{spmd.Options{PE: -1, PEs: 2, Port: "shm:/x"}, spmd.EnvPE},
		{spmd.Options{PE: 0, PEs: 2}, spmd.EnvPort},
		{spmd.Options{PE: 0, PEs: 2, Port: "shm:/nonexistent/board"}, "/nonexistent/board"},
		{spmd.Options{PE: 0, PEs: 2, Port: "bogus:1"}, "bogus"},
		{spmd.Options{PE: 0, PEs: 2, Port: "ppdev:/dev/parport0", Listen: "no-such-interface9"}, tcpnet.EnvListen},
		{spmd.Options{PE: 0, PEs: 2, Port: "ppdev:/dev/parport0", LAN: "secret"}, "PAPERS_LAN=\"secret\": want authenticated"},
	} {
		if _, err := tc.o.Open(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v) = %v, want an error mentioning %q", tc.o, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// A PE count that is not the board's: the error says the board's.
	for _, o := range []spmd.Options{{PE: 5, PEs: 6, Port: "shm:" + path}, {PE: 0, PEs: 1, Port: "shm:" + path}} {
		if _, err := o.Open(); err == nil || !strings.Contains(err.Error(), "give it 2, the board's count") {
			t.Errorf("PE %d of %d on a 2-PE board: %v", o.PE, o.PEs, err)
		}
	}
}

// Two PEs in one process through the shared-board path of Open.
func TestOpenShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	errs := make(chan error, 2)
	for k := 0; k < 2; k++ {
		go func() {
			p, err := spmd.Options{PE: k, PEs: 2, Port: shm.Prefix + path, Timeout: 5 * time.Second}.Open()
			if err != nil {
				errs <- err
				return
			}
			mask, err := p.Vote(k == 1)
			if err == nil && mask != 2 {
				err = fmt.Errorf("PE %d: vote mask %02b, want 10", k, mask)
			}
			if cerr := spmd.Close(p); err == nil {
				err = cerr
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for k := 0; k < 2; k++ {
		if info := b.PortInfo(k); !info.Opened || info.Holder != 0 {
			t.Errorf("PE %d after Close: %+v", k, info)
		}
	}
}

// TestMain also runs the other processes of the tests and benchmarks, by
// their environment.
func TestMain(m *testing.M) {
	switch os.Getenv("SPMD_TEST_ROLE") {
	case "barriers":
		spmd.Main(barriersForever)
	case "faults":
		spmd.Main(faulttrial.Program)
	case "absent":
		spmd.Main(failAbsent)
	case "panic":
		spmd.Main(func(*papers.PE) error { panic("on purpose") })
	}
	if op := os.Getenv("SPMD_BENCH_OP"); op != "" {
		n, _ := strconv.Atoi(os.Getenv("SPMD_BENCH_N"))
		if err := benchPE(op, n); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(leakcheck.Run(m))
}

// barriersForever is TestSignalNamesDyingPE's PE program.
func barriersForever(p *papers.PE) error {
	fmt.Println("ready")
	for {
		if err := p.Barrier(); err != nil {
			return err
		}
	}
}

func benchPE(op string, n int) error {
	p, err := spmd.Open()
	if err != nil {
		return err
	}
	defer spmd.Close(p)
	return ops(p, op, n)
}

func ops(p *papers.PE, op string, n int) error {
	var err error
	for i := 0; i < n; i++ {
		if op == "barrier" {
			err = p.Barrier()
		} else {
			_, err = p.NAND(uint8(i) & 0xf)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkShared: a barrier, and a 4-bit NAND, between N processes on
// the shared-memory board (this test binary runs the other N-1 PEs); ns/op
// is per operation. Beside it, Open MPI's MPI_Barrier with as many ranks on
// this machine (package baseline, same invocation) and the ratio
// ("x-mpi"), when mpicc and mpirun are installed.
func BenchmarkShared(b *testing.B) {
	for _, op := range []string{"barrier", "nand"} {
		for _, n := range []int{2, 4, 8} {
			b.Run(fmt.Sprintf("op=%s/procs=%d", op, n), func(b *testing.B) { benchShared(b, op, n) })
		}
	}
}

func benchShared(b *testing.B, op string, n int) {
	mpi, aerr := baseline.MPI(n, false)
	dir := "/dev/shm"
	if _, err := os.Stat(dir); err != nil {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, "papers-bench-"+strconv.Itoa(os.Getpid()))
	board, err := emu.CreateShared(path, n)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(path)
	defer board.Close()
	env := []string{spmd.EnvPEs + "=" + strconv.Itoa(n), spmd.EnvPort + "=" + shm.Prefix + path}
	var helpers []*exec.Cmd
	for pe := 1; pe < n; pe++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), append(env, spmd.EnvPE+"="+strconv.Itoa(pe), "SPMD_BENCH_OP="+op, "SPMD_BENCH_N="+strconv.Itoa(b.N+1))...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		helpers = append(helpers, cmd)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	b.Setenv(spmd.EnvPE, "0")
	p, err := spmd.Open()
	if err == nil {
		// One warm-up operation pairs with the helpers' first; then time b.N.
		err = ops(p, op, 1)
		b.ReportAllocs()
		b.ResetTimer()
		if err == nil {
			err = ops(p, op, b.N)
		}
		b.StopTimer()
		spmd.Close(p)
	}
	for _, cmd := range helpers {
		if werr := cmd.Wait(); err == nil {
			err = werr
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	if aerr != nil {
		b.Logf("no MPI anchor: %v", aerr)
		return
	}
	b.ReportMetric(mpi.Barrier*1e3, "mpi-ns")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(mpi.Barrier*1e3), "x-mpi")
}

// On a real port (here an in-process board, which Fail treats the same way)
// a failing PE announces its departure: every other PE's current operation
// returns the abort code and names it, and the others go on without it.
func TestFailNamesTheFailedPE(t *testing.T) {
	const n, bad = 3, 1
	err := emulate.Run(n, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
		if p.Self() == bad {
			for i := 0; i < 50; i++ {
				if err := p.Barrier(); err != nil {
					return err
				}
			}
			spmd.Fail(p, errors.New("PE 1 gives up"))
			if d, c := p.Port().ReadData(), p.Port().ReadControl(); d != 0xcf || c != 0 {
				return fmt.Errorf("port after Fail: data %#02x control %#02x, want transparent (0xcf, 0)", d, c)
			}
			return nil
		}
		var ie *papers.InterruptError
		for err := p.Barrier(); !errors.As(err, &ie); err = p.Barrier() {
			if err != nil {
				return err
			}
		}
		if ie.Code != spmd.AbortCode || ie.Left != 1<<bad || !strings.Contains(ie.Error(), "PE 1 left the group") {
			return fmt.Errorf("the failure reached PE %d as %v, want code %#x naming PE %d", p.Self(), ie, spmd.AbortCode, bad)
		}
		if err := p.Barrier(); err != nil || p.Participants() != 0b101 {
			return fmt.Errorf("barrier after the failure: %v, participants %b; want it to complete without PE 1", err, p.Participants())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Example opens two PEs of a shared-memory board, as two processes started
// by papersctl run would (here two goroutines), and votes.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	board, err := emu.CreateShared(filepath.Join(dir, "board"), 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer board.Close()
	masks := make([]peset.Set, 2)
	var wg sync.WaitGroup
	for k := 0; k < 2; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A program would call spmd.Main or spmd.Open, which read
			// PAPERS_PE, PAPERS_PES and PAPERS_BOARD.
			p, err := spmd.Options{PE: k, PEs: 2, Port: shm.Prefix + filepath.Join(dir, "board")}.Open()
			if err != nil {
				fmt.Println(err)
				return
			}
			defer spmd.Close(p)
			masks[k], _ = p.Vote(k == 0)
		}()
	}
	wg.Wait()
	fmt.Printf("PE 0 sees %02b, PE 1 sees %02b\n", masks[0], masks[1])
	// Output: PE 0 sees 01, PE 1 sees 01
}
