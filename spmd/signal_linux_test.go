package spmd_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// TestSignalNamesDyingPE: on a port without a launcher — a ppdev port
// served by FUSE, as a real board — three PE processes run barriers and PE
// 1 is ended by SIGTERM. Its signal handler announces the departure, so the
// survivors fail at once with an interrupt naming PE 1 (not, after their
// full timeout, with an acknowledge that never completes). Under go test
// -race the PE processes are race-built, and none may report a race
// between the handler's port writes and the PE goroutine's reads.
func TestSignalNamesDyingPE(t *testing.T) {
	const n, dying = 3, 1
	_, srv := serveBoard(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmds, stderrs := startPEs(ctx, t, srv, n)
	if err := cmds[dying].Process.Signal(unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for k, cmd := range cmds {
		err := cmd.Wait()
		var ee *exec.ExitError
		code := -1
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		msg := stderrs[k].String()
		switch {
		case strings.Contains(msg, "DATA RACE"): // go test -race: the handler's writes against the PE's reads
			t.Errorf("PE %d: the race detector reported:\n%s", k, msg)
		case k == dying && !strings.Contains(msg, "stopped by terminated"):
			t.Errorf("PE %d (SIGTERM): exit %d, stderr %q", k, code, msg)
		case k != dying && (code != 1 || !strings.Contains(msg, fmt.Sprintf("code %#x; PE %d left the group", spmd.AbortCode, dying))):
			t.Errorf("survivor PE %d: exit %d, stderr %q; want an interrupt naming PE %d", k, code, msg, dying)
		}
	}
}

// startPEs starts n PE processes running barriersForever, one on each of
// srv's ports, and returns once every one has checked in.
func startPEs(ctx context.Context, t *testing.T, srv *ppdevfs.Server, n int) ([]*exec.Cmd, []strings.Builder) {
	t.Helper()
	cmds, stderrs := make([]*exec.Cmd, n), make([]strings.Builder, n)
	ready := make(chan int, n)
	for k := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SPMD_TEST_ROLE=barriers", spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+srv.Path(k), spmd.EnvTimeout+"=30s")
		cmd.Stderr = &stderrs[k]
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[k] = cmd
		go func() { // "ready" once checked in
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line == "ready\n" {
				ready <- k
			}
			io.Copy(io.Discard, out)
		}()
	}
	for range n {
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatal("the PE processes did not all check in")
		}
	}
	return cmds, stderrs
}

// serveBoard serves a new n-PE board as ppdev files through FUSE until the
// test ends, skipping when FUSE is unavailable.
func serveBoard(t *testing.T, n int) (*emu.Board, *ppdevfs.Server) {
	t.Helper()
	testenv.FUSE(t)
	board, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ppdevfs.Mount(t.TempDir(), board, ppdevfs.Options{PEs: n, ClaimWait: time.Second, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })
	return board, srv
}

// TestSignalDuringCheckIn: a PE stopped by SIGINT while it checks in (one
// PE of three has not come; an earlier run left its port transparent)
// says so with its id and announces that it leaves, so the other PE fails
// at once naming it, not after its check-in's 5 minutes (the test's bound
// is 2).
func TestSignalDuringCheckIn(t *testing.T) {
	const n, stopped = 3, 1
	board, srv := serveBoard(t, n)
	late, err := board.Port(n - 1)
	if err != nil {
		t.Fatal(err)
	}
	late.WriteData(lpt.Transparent)
	late.WriteControl(0)
	late.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmds, stderrs := make([]*exec.Cmd, n-1), make([]strings.Builder, n-1)
	for k := range n - 1 {
		cmds[k] = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmds[k].Env = append(os.Environ(), "SPMD_TEST_ROLE=barriers", spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+srv.Path(k), spmd.EnvTimeout+"=30s", spmd.EnvCheckIn+"=20s")
		cmds[k].Stderr = &stderrs[k]
		if err := cmds[k].Start(); err != nil {
			t.Fatal(err)
		}
	}
	// A lit LED is check-in's first write, after the signal handler.
	for k := range n - 1 {
		for board.LED(k) == lpt.Dark {
			if ctx.Err() != nil {
				t.Fatalf("PE %d never began its check-in", k)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := cmds[stopped].Process.Signal(unix.SIGINT); err != nil {
		t.Fatal(err)
	}
	for k, cmd := range cmds {
		cmd.Wait()
		code, msg := cmd.ProcessState.ExitCode(), stderrs[k].String()
		switch {
		case k == stopped && !strings.Contains(msg, fmt.Sprintf("PE %d: stopped by interrupt", stopped)):
			t.Errorf("PE %d (SIGINT): exit %d, stderr %q; want it to name itself", k, code, msg)
		case k != stopped && (code != 1 || !strings.Contains(msg, fmt.Sprintf("check-in interrupted by a parallel interrupt with code 0x5; PE %d left the group", stopped))):
			t.Errorf("PE %d: exit %d, stderr %q; want its check-in to name PE %d as left (PE %d said %q)", k, code, msg, stopped, stopped, stderrs[stopped].String())
		}
	}
}
