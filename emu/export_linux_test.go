package emu

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// SetOwner rewrites a shared board's creator (pid and start time, 0 if
// unknown), to fake a crashed run.
func SetOwner(t *testing.T, path string, pid int, start uint64) {
	b, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.m.store(hCreator, procWord(pid, start))
}

// StartTime is process pid's start time.
func StartTime(pid int) uint64 { return startTime(pid) }

func deadPID(t *testing.T) int {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// The shared board is the same simulator on other memory: a random script of
// register writes and faults leaves every net, status register and the
// contention count as on an in-process board.
func TestSharedMatchesInProcess(t *testing.T) {
	up := PowerUp{Seed: 7}
	mem, _ := New(5, up)
	shm, err := CreateShared(t.TempDir()+"/board", 5, up)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	ps := [2][]*Port{claimAll(t, mem), claimAll(t, shm)}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 5000; step++ {
		k, v, ctl := rng.IntN(5), uint8(rng.Uint32()), rng.IntN(4) == 0
		for i := range ps {
			if ctl {
				ps[i][k].WriteControl(v & 0x0f)
			} else {
				ps[i][k].WriteData(v)
			}
		}
		if step%50 == 0 {
			f := Fault{PE: rng.IntN(8), Line: lpt.Lines[rng.IntN(len(lpt.Lines))], Kind: FaultKind(rng.IntN(3))}
			for _, b := range []*Board{mem, shm} {
				b.Inject(f)
				if step%200 == 0 {
					b.Repair(f.PE)
					b.Plug(f.PE)
				}
			}
		}
		for k := range ps[0] {
			if a, b := ps[0][k].ReadStatus(), ps[1][k].ReadStatus(); a != b {
				t.Fatalf("step %d: PE %d status %#x in-process, %#x shared", step, k, a, b)
			}
		}
		// Status registers are recomputed only for ports whose inputs
		// changed: a full recomputation must find nothing stale.
		mem.look(func(s *sim) {
			for k := range ps[0] {
				if want := s.portStatus(k); s.status[k] != want {
					t.Fatalf("step %d: PE %d status %#x was stale (now %#x)", step, k, s.status[k], want)
				}
			}
		})
	}
	a, b := mem.Levels(nil), shm.Levels(nil)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("net %s differs", mem.nets[i].Name)
		}
	}
	if mem.Contention() != shm.Contention() {
		t.Errorf("contention %d in-process, %d shared", mem.Contention(), shm.Contention())
	}
}

func TestZombieIsDead(t *testing.T) {
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	// Not reaped yet: a zombie once it exits.
	waitFor(t, 10*time.Second, "the child to exit", func() bool { return !alive(procWord(c.Process.Pid, 0)) })
	if !alive(self) {
		t.Errorf("this process counts as dead")
	}
}

// TestAliveAllocatesNothing: waiting PEs check their partners' processes
// every millisecond or so; the check must not allocate.
func TestAliveAllocatesNothing(t *testing.T) {
	me := os.Getpid()
	// The race detector's instrumentation moves the buffers to the heap.
	if a := testing.AllocsPerRun(100, func() { processAlive(self) }); a != 0 && !raceEnabled {
		t.Errorf("processAlive allocates %v times", a)
	}
	if !processAlive(self) || processAlive(procWord(deadPID(t), 0)) || Stopped(me) {
		t.Error("processAlive or Stopped is wrong about this process or a dead one")
	}
}

// TestSharedZeroAllocs: on a shared board too, port operations — and the
// liveness checks Err makes every millisecond, here of a partner process
// (our parent holds PE 1's port) — allocate nothing.
func TestSharedZeroAllocs(t *testing.T) {
	b, err := CreateShared(t.TempDir()+"/board", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, _ := b.Port(0)
	b.m.store(b.lay.per(1, pClaim), uint64(os.Getppid()))
	v := uint8(lpt.S1 | lpt.LG | 0xf)
	checks := 0
	allocs := testing.AllocsPerRun(2000, func() {
		v ^= lpt.Strobes
		p.WriteData(v)
		p.ReadStatus()
		p.Wait(^p.ReadStatus(), 0xff, time.Millisecond, nil)
		last := p.lastCheck
		for range 8 {
			_ = p.Err()
		}
		if p.lastCheck != last {
			checks++
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round of port operations on a shared board", allocs)
	}
	if checks == 0 {
		t.Error("no liveness check ran")
	}
}
