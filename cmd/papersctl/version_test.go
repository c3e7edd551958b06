package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionCommand builds papersctl from a clone of this checkout, with
// its VCS stamp, and checks that --version and version report the clone's
// revision. (A clone, because the go command stamps nothing in a git
// worktree, and the build environment may say -buildvcs=false.)
func TestVersionCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds papersctl; skipped with -short")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): no revision to report", err)
	}
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "papersctl")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/papersctl")
	build.Dir, build.Env = clone, append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rev := strings.TrimSpace(string(head))
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !strings.Contains(string(out), "revision "+rev) || !strings.Contains(string(out), "github.com/ttlpapers/ttlpapers") {
			t.Errorf("papersctl %s: %v, %q; want the module and revision %s", args[0], err, out, rev)
		}
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	var v struct {
		Revision string `json:"revision"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil || v.Revision != rev {
		t.Errorf("version --json: %v, %q", err, out)
	}
}
