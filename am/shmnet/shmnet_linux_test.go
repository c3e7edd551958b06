package shmnet_test

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/shmnet"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// The shared-memory transport between real processes: the test binary
// starts itself as PE 1 (TestSharedChild), which answers PE 0's requests.

const envShm, envShmMode = "AM_TEST_SHM", "AM_TEST_SHM_MODE"

func startChild(t *testing.T, path, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedChild$")
	cmd.Env = append(os.Environ(), envShm+"="+path, envShmMode+"="+mode)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestSharedChild is PE 1 of TestShared, run in its own process.
func TestSharedChild(t *testing.T) {
	path := os.Getenv(envShm)
	if path == "" {
		t.Skip("run by TestShared as PE 1's process")
	}
	s, err := shmnet.Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ep := am.NewEndpoint(s, am.Options{Timeout: 10 * time.Second})
	stop := false
	var hAck am.HandlerID
	ep.Register(func(m *am.Msg) { m.Reply(hAck, am.Args{m.Args[0] * 2}) })
	hAck = ep.Register(func(*am.Msg) {})
	ep.Register(func(*am.Msg) { stop = true })
	ep.Register(func(m *am.Msg) { // a staged payload: its number and length, and whether it is whole
		ok := uint64(1)
		if testenv.CheckPayload(int(m.Args[0]), m.Payload) != nil {
			ok = 0
		}
		m.Reply(hAck, am.Args{m.Args[0], uint64(len(m.Payload)), ok})
	})
	var mem []byte
	ep.Register(func(m *am.Msg) { // allocate a region the parent reaches one-sided
		var r int
		var err error
		if mem, r, err = ep.Direct().Allocate(4096); err != nil {
			t.Error(err)
		}
		for j := range mem {
			mem[j] = testenv.Pattern(9, j)
		}
		m.Reply(hAck, am.Args{uint64(r)})
	})
	ep.Register(func(m *am.Msg) { // the word the parent put
		m.Reply(hAck, am.Args{binary.LittleEndian.Uint64(mem[8:])})
	})
	if os.Getenv(envShmMode) == "hang" {
		// Attached: the parent kills it now (a PE that never attached has
		// no process the others could see die).
		if err := os.WriteFile(path+".up", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // killed by the parent
	}
	if err := ep.Wait("serve", 0, func() bool { return stop }); err != nil {
		t.Fatal(err)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestShared(t *testing.T) {
	for _, mode := range []string{"serve", "hang"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "datanet")
			if err := shmnet.Create(path, 2); err != nil {
				t.Fatal(err)
			}
			child := startChild(t, path, mode)
			defer child.Process.Kill() // a failed test leaves no process behind
			s, err := shmnet.Open(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ep := am.NewEndpoint(s, am.Options{Timeout: 10 * time.Second})
			got := uint64(0)
			var ack am.Args
			hReq := ep.Register(func(*am.Msg) {})
			ep.Register(func(m *am.Msg) { got, ack = m.Args[0], m.Args })
			hStop := ep.Register(func(*am.Msg) {})
			hStaged := ep.Register(func(*am.Msg) {})
			hAlloc := ep.Register(func(*am.Msg) {})
			hCheck := ep.Register(func(*am.Msg) {})
			if mode == "hang" {
				if err := ep.Request(1, hReq, am.Args{21}); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
					if _, err := os.Stat(path + ".up"); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("PE 1's process did not attach within a minute")
					}
				}
				time.Sleep(200 * time.Millisecond)
				child.Process.Kill() // not reaped yet: a zombie is dead too
				start := time.Now()
				err := ep.Wait("reply", 1, func() bool { return got != 0 })
				var g *am.GoneError
				if !errors.As(err, &g) || g.PE != 1 {
					t.Fatalf("wait on a killed PE: %v, want a *GoneError naming PE 1", err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("noticed the death after %v", d)
				}
				t.Log(err)
				child.Wait()
				return
			}
			start := time.Now()
			const n = 2000
			for i := 1; i <= n; i++ {
				if err := ep.Request(1, hReq, am.Args{uint64(i)}); err != nil {
					t.Fatal(err)
				}
				if err := ep.Wait("reply", 1, func() bool { return got == uint64(2*i) }); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("round trip between processes: %v", time.Since(start)/n)
			// Payloads staged in the file, more than its rings hold.
			buf := make([]byte, ep.MaxPayload())
			if len(buf) <= am.MaxMedium {
				t.Fatalf("MaxPayload %d: not staged", len(buf))
			}
			for i := 1; i <= 40; i++ {
				b := buf[:[]int{am.MaxMedium + 1, 5000, len(buf), 777777 % len(buf)}[i%4]]
				for j := range b {
					b[j] = testenv.Pattern(i, j)
				}
				if err := ep.RequestMedium(1, hStaged, am.Args{uint64(i)}, b); err != nil {
					t.Fatal(err)
				}
				if err := ep.Wait("staged", 1, func() bool { return got == uint64(i) }); err != nil {
					t.Fatal(err)
				}
				if ack[1] != uint64(len(b)) || ack[2] != 1 {
					t.Fatalf("staged payload %d of %d bytes arrived as %d bytes, whole: %v", i, len(b), ack[1], ack[2] == 1)
				}
			}
			// One-sided access to the other process's memory.
			if err := ep.Request(1, hAlloc, am.Args{}); err != nil {
				t.Fatal(err)
			}
			got = 1 << 40
			if err := ep.Wait("allocate", 1, func() bool { return got != 1<<40 }); err != nil {
				t.Fatal(err)
			}
			d, r := ep.Direct(), int(got)
			if d == nil {
				t.Fatal("no one-sided access between processes")
			}
			if err := d.Get(1, r, 0, buf[:4096]); err != nil {
				t.Fatal(err)
			}
			if err := testenv.CheckPayload(9, buf[:4096]); err != nil {
				t.Fatal("get of PE 1's region:", err)
			}
			if err := d.Put(1, r, 8, binary.LittleEndian.AppendUint64(nil, 0xfeedface)); err != nil {
				t.Fatal(err)
			}
			if err := ep.Request(1, hCheck, am.Args{}); err != nil {
				t.Fatal(err)
			}
			if err := ep.Wait("check", 1, func() bool { return got != uint64(r) }); err != nil {
				t.Fatal(err)
			}
			if got != 0xfeedface {
				t.Errorf("PE 1 reads %#x where PE 0 put 0xfeedface", got)
			}
			if err := d.Get(1, r, 4090, buf[:8]); err == nil {
				t.Error("a get beyond PE 1's region succeeded")
			}
			if err := ep.Request(1, hStop, am.Args{}); err != nil {
				t.Fatal(err)
			}
			if err := ep.Wait("PE 1 to leave", 1, func() bool { return false }); err == nil {
				t.Fatal("wait on a PE that left: no error")
			} else if g := (*am.GoneError)(nil); !errors.As(err, &g) || g.Cause != nil {
				t.Errorf("PE 1 left normally: %v", err)
			}
			if err := child.Wait(); err != nil {
				t.Errorf("PE 1's process: %v", err)
			}
		})
	}
}

// TestSharedBadFile: each wrong file is refused for what is wrong with it.
func TestSharedBadFile(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"short": 100, "zeroes": shmnet.Size(2)} {
		junk := filepath.Join(dir, name)
		if err := os.WriteFile(junk, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := shmnet.Open(junk, 0); !errors.Is(err, shmnet.ErrNotNetwork) {
			t.Errorf("%s file: %v, want shmnet.ErrNotNetwork", name, err)
		}
	}
	if _, err := shmnet.Open(filepath.Join(dir, "none"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no file: %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, "net")
	if err := shmnet.Create(path, 2); err != nil {
		t.Fatal(err)
	}
	if err := shmnet.Create(path, 2); !errors.Is(err, fs.ErrExist) {
		t.Errorf("created over an existing network: %v, want fs.ErrExist", err)
	}
	for _, pe := range []int{2, -1} {
		if _, err := shmnet.Open(path, pe); !errors.Is(err, shmnet.ErrNoPE) {
			t.Errorf("opened PE %d of 2: %v, want shmnet.ErrNoPE", pe, err)
		}
	}
}

// TestSharedOver: the network over memory the caller maps (as MPI's
// shared windows are), not a file: PE 0 and PE 1 in one process, over a
// mapping an earlier user left bytes in (Init must not rely on
// zeroes).
func TestSharedOver(t *testing.T) {
	size := shmnet.Size(2)
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if _, err := shmnet.Attach(mem, 0); !errors.Is(err, shmnet.ErrNotNetwork) {
		t.Errorf("attached to memory no Init made: %v, want shmnet.ErrNotNetwork", err)
	}
	if err := shmnet.Init(mem[:size-1], 2); err == nil {
		t.Error("made a network in too little memory")
	}
	for i := range mem[:1<<20] { // what an earlier user left
		mem[i] = 0xa5
	}
	if err := shmnet.Init(mem, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := shmnet.Attach(mem, 2); !errors.Is(err, shmnet.ErrNoPE) {
		t.Errorf("attached PE 2 of 2: %v, want shmnet.ErrNoPE", err)
	}
	var s [2]*shmnet.Net
	for pe := range s {
		if s[pe], err = shmnet.Attach(mem, pe); err != nil {
			t.Fatal(err)
		}
	}
	p := &am.Packet{Handler: 3, Net: am.Right, Len: 5, Args: am.Args{7}}
	copy(p.Data[:], "hello")
	if ok, err := s[0].Send(1, p); !ok || err != nil {
		t.Fatalf("send: %v, %v", ok, err)
	}
	var q am.Packet
	if s[1].Recv(am.Left, &q) {
		t.Error("a packet on the left network, sent on the right")
	}
	if !s[1].Recv(am.Right, &q) || q.Src != 0 || q.Handler != 3 || q.Args[0] != 7 || string(q.Payload()) != "hello" {
		t.Errorf("received %+v", q.Args)
	}
	s[1].Leave(nil, nil)
	if ok, err := s[0].Send(1, p); ok || !errors.As(err, new(*am.GoneError)) {
		t.Errorf("send to a PE that left: %v, %v", ok, err)
	}
	for _, x := range s {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	}
	mem[0] = 0 // still mapped: Close left the caller's memory alone
}

// TestSharedLeftWhileLooked: a PE that returns leaves and then exits; a
// look at it that sees it attached and then its process ended must not
// call it dead — under load that interleaving happened, and a finished
// run failed with a healthy PE named as having died.
func TestSharedLeftWhileLooked(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, shmnet.Size(2), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := shmnet.Init(mem, 2); err != nil {
		t.Fatal(err)
	}
	var s [2]*shmnet.Net
	for pe := range s {
		if s[pe], err = shmnet.Attach(mem, pe); err != nil {
			t.Fatal(err)
		}
	}
	// PE 1 dies attached: it is named with its death.
	restore := shmnet.SetProcessEnded(func(int32) bool { return true })
	var g *am.GoneError
	if err := s[0].Gone(1); !errors.As(err, &g) || g.PE != 1 || g.Cause == nil {
		t.Errorf("PE 1 died attached: Gone = %v, want a *GoneError with its death as the cause", err)
	}
	restore()
	// PE 1 leaves, then its process ends, both during PE 0's look.
	defer shmnet.SetProcessEnded(func(int32) bool {
		s[1].Leave(nil, nil)
		return true
	})()
	if err := s[0].Gone(1); !errors.As(err, &g) || g.PE != 1 || g.Cause != nil {
		t.Errorf("PE 1 left and exited during the look: Gone = %v, want a *GoneError without a cause (it left)", err)
	}
}
