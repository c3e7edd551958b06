package emu_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// The test binary doubles as the second process of the cross-process
// tests: helperMain runs it as one and exits, when the environment says so.
func helperMain() {
	if path := os.Getenv("EMU_TEST_HOLD"); path != "" {
		// Claim PE 1's port, say so, and wait to be killed.
		b, err := emu.OpenShared(path)
		if err == nil {
			_, err = b.Port(1)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("holding")
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	if path := os.Getenv("EMU_TEST_SHARED"); path != "" {
		pe, _ := strconv.Atoi(os.Getenv("EMU_TEST_PE"))
		if err := votePE(path, pe, voteRounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if path := os.Getenv("EMU_TEST_CREATE"); path != "" {
		// Create a board, say so, and keep it live until stdin closes.
		b, err := emu.CreateShared(path, 2)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("created")
		io.Copy(io.Discard, os.Stdin)
		b.Close()
		os.Exit(0)
	}
}

const voteRounds = 300

// votePE runs PE pe of a 3-PE program on the shared board: every round each
// PE votes a different pattern, and every PE checks the mask it gets.
func votePE(path string, pe, rounds int) error {
	b, err := emu.OpenShared(path)
	if err != nil {
		return err
	}
	defer b.Close()
	port, err := b.Port(pe)
	if err != nil {
		return err
	}
	p, err := papers.Open(port, papers.Config{PE: pe, PEs: 3})
	if err != nil {
		return err
	}
	defer p.Close()
	for r := 0; r < rounds; r++ {
		got, err := p.Vote((r>>pe)&1 == 1)
		if err != nil {
			return err
		}
		var want peset.Set
		for k := 0; k < 3; k++ {
			want |= peset.Set((r>>k)&1) << k
		}
		if got != want {
			return fmt.Errorf("PE %d round %d: vote mask %03b, want %03b", pe, r, got, want)
		}
	}
	return nil
}

func helper(t *testing.T, path string, pe int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EMU_TEST_SHARED="+path, "EMU_TEST_PE="+strconv.Itoa(pe))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestSharedBoardAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c1, c2 := helper(t, path, 1), helper(t, path, 2)
	if err := votePE(path, 0, voteRounds); err != nil {
		t.Error(err)
	}
	for _, c := range []*exec.Cmd{c1, c2} {
		if err := c.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}
	for k := 0; k < 3; k++ {
		if info := b.PortInfo(k); !info.Opened || info.Holder != 0 {
			t.Errorf("PE %d after a clean run: %+v, want opened and released", k, info)
		}
	}
}

func TestSharedBoardStaleAndBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.CreateShared(path, 2); err == nil {
		t.Fatal("a second CreateShared on a live board succeeded")
	}
	b.Close()
	// Make the board look as if a process that has exited created it.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	emu.SetOwner(t, path, dead.Process.Pid, 0)
	b2, err := emu.CreateShared(path, 4)
	if err != nil {
		t.Fatalf("stale board not replaced: %v", err)
	}
	defer b2.Close()
	if b2.Owner() != os.Getpid() {
		t.Errorf("owner %d, want %d", b2.Owner(), os.Getpid())
	}
	b3, err := emu.OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	if b3.PEs() != 4 {
		t.Errorf("attached board has %d connectors, want 4", b3.PEs())
	}
}

// TestSharedBoardReusedPID: a board whose creator has gone is stale even
// when the creator's pid now belongs to another, unrelated process (a
// launcher killed by SIGKILL, its pid given to a later process): the
// owner is a pid and a start time. The same pid with its own start time
// is that process, alive.
func TestSharedBoardReusedPID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	pid, start := other.Process.Pid, emu.StartTime(other.Process.Pid)
	if start == 0 {
		t.Fatalf("no start time for process %d", pid)
	}
	emu.SetOwner(t, path, pid, start)
	if info, err := emu.InspectShared(path); err != nil || !info.Live() || info.Creator != pid {
		t.Fatalf("a board created by the live process %d: %+v %v, want it live", pid, info, err)
	}
	emu.SetOwner(t, path, pid, start-1) // its creator started before: not this process
	info, err := emu.InspectShared(path)
	if err != nil || info.Live() || info.Creator != pid {
		t.Fatalf("a board whose creator's pid was reused: %+v %v, want it stale", info, err)
	}
	if !emu.RemoveStale(path) {
		t.Errorf("the stale board of a reused pid was not removed")
	}
}

func TestAbortFailsWaitingPEs(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	err = emulate.RunOn(b, 2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 1 {
			b.Abort(1, "PE 1 died")
			return nil
		}
		for {
			if err := p.Barrier(); err != nil {
				return err
			}
		}
	})
	var ae *emu.AbortError
	if !errors.As(err, &ae) || ae.Reason != "PE 1 died" {
		t.Fatalf("got %v, want an AbortError saying PE 1 died", err)
	}
	if pe, r, ok := b.Aborted(); !ok || pe != 1 || r != "PE 1 died" || ae.PE != 1 {
		t.Errorf("Aborted() = %d, %q, %v; error blames PE %d", pe, r, ok, ae.PE)
	}
}

// A PE whose process is killed while it holds its port (no launcher to tell
// anyone) is found by the others' ports, which abort the board.
func TestDeadPartnerAbortsBoard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EMU_TEST_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 8)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "holding\n" {
		t.Fatalf("helper: %q %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	port, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = papers.Open(port, papers.Config{PE: 0, PEs: 2, Timeout: 5 * time.Second})
	var ae *emu.AbortError
	if !errors.As(err, &ae) || ae.PE != 1 || !strings.Contains(ae.Reason, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Fatalf("check-in with a dead partner: %v, want an AbortError naming pid %d", err, cmd.Process.Pid)
	}
	if info := b.PortInfo(0); info.Noticed.IsZero() {
		t.Errorf("PE 0's port did not record when it reported the abort")
	}
}

// A PE that is computing when the board is aborted fails at its next
// operation, before touching the board; the run, which cannot be proven
// at its end on an aborted board, fails blaming PE 1.
func TestAbortFailsComputingPE(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	passed, aborted := make(chan struct{}), make(chan struct{})
	var checked error
	err = emulate.RunOn(b, 2, papers.Config{}, func(p *papers.PE) error {
		if err := p.Barrier(); err != nil {
			return err
		}
		if p.Self() == 1 {
			<-passed // PE 0 is out of its barrier, computing
			b.Abort(1, "PE 1 died")
			close(aborted)
			return nil
		}
		close(passed)
		<-aborted // computing meanwhile
		ops := p.Port().(*emu.Port).Ops()
		_, err := p.NAND(3)
		var ae *emu.AbortError
		if !errors.As(err, &ae) || ae.PE != 1 {
			checked = fmt.Errorf("NAND after the abort: %v, want an AbortError blaming PE 1", err)
		} else if n := p.Port().(*emu.Port).Ops() - ops; n != 0 {
			checked = fmt.Errorf("NAND after the abort made %d port operations", n)
		}
		return nil
	})
	if checked != nil {
		t.Fatal(checked)
	}
	var ae *emu.AbortError
	if !errors.As(err, &ae) || ae.PE != 1 {
		t.Fatalf("run on an aborted board: %v, want its end to fail with an AbortError blaming PE 1", err)
	}
}
