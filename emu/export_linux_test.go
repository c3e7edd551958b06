package emu

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// SetOwner rewrites a shared board's creator pid, to fake a crashed run.
func SetOwner(t *testing.T, path string, pid int) {
	b, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.st[hOwner] = uint32(pid)
}

func deadPID(t *testing.T) int {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// A process killed while holding the lock (mid-settle) must not wedge the
// board: the next locker takes over and re-settles.
func TestLockTakeoverFromDeadHolder(t *testing.T) {
	b, err := CreateShared(t.TempDir()+"/board", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p0, _ := b.Port(0)
	b.st[hLock] = uint32(deadPID(t)) | lockWaiters
	// Corrupt a net as a half-finished settle would.
	b.bits[b.lay.nets] ^= 1
	p0.WriteData(0x5f)
	if b.st.load(hLock) != 0 {
		t.Errorf("lock word %#x after unlock", b.st.load(hLock))
	}
	if p0.ReadData() != 0x5f {
		t.Errorf("data %#x", p0.ReadData())
	}
	fresh, _ := New(2)
	fp, _ := fresh.Port(0)
	fp.WriteData(0x5f)
	for i := range b.nets {
		if b.level(int32(i)) != fresh.level(int32(i)) {
			t.Errorf("net %s: %v after takeover, %v on a fresh board", b.nets[i].name, b.level(int32(i)), fresh.level(int32(i)))
		}
	}
}

// The shared board is the same simulator on other memory: a random script of
// register writes leaves every net, status register and the contention count
// as on an in-process board.
func TestSharedMatchesInProcess(t *testing.T) {
	mem, _ := New(5)
	shm, err := CreateShared(t.TempDir()+"/board", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 5000; step++ {
		k, v, ctl := rng.IntN(5), uint8(rng.Uint32()), rng.IntN(4) == 0
		for _, b := range []*Board{mem, shm} {
			if ctl {
				b.ports[k].WriteControl(v & 0x0f)
			} else {
				b.ports[k].WriteData(v)
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
		for k := range mem.ports {
			if a, b := mem.ports[k].ReadStatus(), shm.ports[k].ReadStatus(); a != b {
				t.Fatalf("step %d: PE %d status %#x in-process, %#x shared", step, k, a, b)
			}
		}
		// Status registers are recomputed only for ports whose inputs
		// changed: a full recomputation must find nothing stale.
		for k, p := range mem.ports {
			before := p.ReadStatus()
			mem.lock()
			p.updateStatusLocked()
			mem.unlock()
			if after := p.ReadStatus(); after != before {
				t.Fatalf("step %d: PE %d status %#x was stale (now %#x)", step, k, before, after)
			}
		}
	}
	for i := range mem.nets {
		if mem.level(int32(i)) != shm.level(int32(i)) {
			t.Errorf("net %s differs", mem.nets[i].name)
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
	for i := 0; i < 1000 && alive(c.Process.Pid); i++ {
		time.Sleep(time.Millisecond)
	}
	if alive(c.Process.Pid) {
		t.Errorf("an exited, unreaped process counts as alive")
	}
	if !alive(os.Getpid()) {
		t.Errorf("this process counts as dead")
	}
}
