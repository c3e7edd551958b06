//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/launch"
)

// runSpmd runs examples/spmd under the launcher and returns the report,
// its output and the launcher's error.
func runSpmd(t *testing.T, cfg launch.Config) (*launch.Report, string, error) {
	t.Helper()
	var out bytes.Buffer
	cfg.Program, cfg.Stdout, cfg.Stderr = bin(t, "spmd"), &out, &out
	rep, err := launch.Run(context.Background(), cfg)
	return rep, out.String(), err
}

// TestRunBoardNames: -board takes plain names only.
func TestRunBoardNames(t *testing.T) {
	dir := shmDir(t)
	// The file name, "papers-" included, has at most 64 characters: a
	// name of 58 to 64 is refused before anything starts.
	for _, name := range []string{"../../x", "a/b", ".hidden", "a..b", "sp ace", strings.Repeat("x", 58), strings.Repeat("x", 64), strings.Repeat("x", 65)} {
		_, _, err := runSpmd(t, launch.Config{N: 1, Board: name, Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "board name") {
			t.Errorf("-board %q: %v, want a refusal of the name", name, err)
		}
		if len(name) > 57 && (err == nil || !strings.Contains(err.Error(), "use 1 to 57")) {
			t.Errorf("-board of %d characters: %v, want the limit (57) named", len(name), err)
		}
	}
	if rep, out, err := runSpmd(t, launch.Config{N: 1, Board: strings.Repeat("x", 57), Dir: dir}); err != nil || rep.Status != 0 {
		t.Errorf("-board of 57 characters: %v %+v\n%s", err, rep, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestRunUnwritableDir: a -dir the user cannot write to is refused naming
// the board and that directory as given, not a temporary file. (As root,
// papersctl runs as nobody: root may write anywhere.)
func TestRunUnwritableDir(t *testing.T) {
	ctl := bin(t, "papersctl")
	dir := shmDir(t)
	ro := filepath.Join(dir, "ro") + "/"
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ctl, "run", "-n", "1", "-board", "myjob", "-dir", ro, "--", bin(t, "spmd"))
	if os.Geteuid() == 0 {
		os.Chmod(dir, 0o755)
		os.Chmod(filepath.Dir(ctl), 0o755)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("cannot create board \"myjob\" in directory %s (permission denied): give -dir a directory you can write to", ro)
	if err == nil || !strings.Contains(string(out), want) || strings.Contains(string(out), ".tmp") {
		t.Errorf("papersctl run -dir %s: %v\n%s\nwant %q", ro, err, out, want)
	}
}

// TestRunNameCollision: a run that names a live run's board is refused,
// naming that run's processes, and the live run goes on untouched.
func TestRunNameCollision(t *testing.T) {
	dir := shmDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan *launch.Report, 1)
	var firstOut bytes.Buffer
	go func() {
		rep, _ := launch.Run(ctx, launch.Config{N: 2, Program: bin(t, "spmd"), Args: []string{"-rounds", "1000000000"}, Board: "b", Dir: dir, Stdout: &firstOut, Stderr: &firstOut})
		first <- rep
	}()
	waitOpened(dir, 2)
	_, _, err := runSpmd(t, launch.Config{N: 2, Board: "b", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "in use by job") || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second run on a live board: %v, want a refusal naming the job's processes", err)
	}
	// The live run computes on until it is stopped — stopped once past its
	// check-in, which a loaded machine can make last: a stop during
	// check-in ends it otherwise, and tells nothing of the second run.
	waitFor(t, time.Minute, "the live run to go on", func() bool {
		info, err := emu.InspectShared(filepath.Join(dir, launch.BoardPrefix+"b"))
		return err == nil && info.Live()
	})
	late := make(chan struct{})
	time.AfterFunc(time.Minute, func() { close(late) })
	if !waitComputing(late, dir, 2) {
		t.Error("the live run was not past its check-in within a minute")
	}
	cancel()
	rep := <-first
	// Stopped by its context, not by a failure the second run caused.
	if rep == nil || rep.Failed != -1 || rep.Reason != "stopped: context canceled" || rep.Status != 143 || strings.Contains(firstOut.String(), "aborted") {
		t.Errorf("the live run was disturbed: %+v\n%s", rep, firstOut.String())
	}
}

// TestRunMismatchedPEs: a run joining a shared board with another PE count
// is refused; with the same count it joins and both runs compute the sum
// over all four PEs.
func TestRunMismatchedPEs(t *testing.T) {
	dir := shmDir(t)
	first := make(chan string, 1)
	go func() {
		_, out, _ := runSpmd(t, launch.Config{N: 2, PEs: 4, Board: "b", Dir: dir, Timeout: 20 * time.Second})
		first <- out
	}()
	waitOpened(dir, 2)
	if _, _, err := runSpmd(t, launch.Config{N: 2, PEs: 6, First: 2, Board: "b", Dir: dir}); err == nil || !strings.Contains(err.Error(), "created for 4 PEs") {
		t.Errorf("joining a 4-PE board with -pes 6: %v, want a refusal", err)
	}
	if _, _, err := runSpmd(t, launch.Config{N: 2, PEs: 4, First: 0, Board: "b", Dir: dir}); err == nil || !strings.Contains(err.Error(), "already run by process") {
		t.Errorf("joining with PEs already running: %v, want a refusal", err)
	}
	rep, out, err := runSpmd(t, launch.Config{N: 2, PEs: 4, First: 2, Board: "b", Dir: dir})
	if err != nil || rep.Status != 0 || strings.Count(out, "sum=6") != 2 {
		t.Errorf("joining properly: %v %+v\n%s", err, rep, out)
	}
	if out := <-first; strings.Count(out, "sum=6") != 2 {
		t.Errorf("the first run:\n%s", out)
	}
}

// TestRunCorruptBoard: a file under the board's name that is not a board
// is refused with a clear error, and left alone.
func TestRunCorruptBoard(t *testing.T) {
	dir := shmDir(t)
	path := filepath.Join(dir, launch.BoardPrefix+"junk")
	junk := bytes.Repeat([]byte("junk"), 25)
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runSpmd(t, launch.Config{N: 2, Board: "junk", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "too short to be a board") {
		t.Errorf("run on a 100-byte file: %v, want a refusal saying it is not a board", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, junk) {
		t.Error("the file was changed")
	}
}

// TestRunForeignBoard: as root, a board another user (nobody) created is
// refused, whether its run is live or over, and left alone.
func TestRunForeignBoard(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test creates the board as user nobody")
	}
	dir := shmDir(t)
	os.Chmod(dir, 0o777)
	self := filepath.Join(dir, "tests.test")
	if data, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(self, data, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	path := filepath.Join(dir, launch.BoardPrefix+"theirs")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "TESTS_CREATE_BOARD="+path)
	// Only package syscall has os/exec's process attributes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "created\n" {
		t.Fatalf("creator running as nobody: %q %v", line, err)
	}
	before, _ := os.ReadFile(path)
	for _, live := range []bool{true, false} {
		if !live {
			stdin.Close()
			cmd.Wait()
		}
		_, _, err := runSpmd(t, launch.Config{N: 2, Board: "theirs", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "belongs to user nobody") {
			t.Errorf("run on nobody's board (its run live: %v): %v, want a refusal naming its owner", live, err)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("nobody's board was changed")
	}
}

// createBoard is the helper process of TestRunForeignBoard.
func createBoard(path string) int {
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("created\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
	b.Close()
	return 0
}
