//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/tutorial.md's program, in a module of its own that uses this one
// through a replace line as the tutorial says, builds and prints what the
// tutorial says, in-process and as papersctl run's processes.
func TestTutorialProgramRuns(t *testing.T) {
	doc, err := os.ReadFile("../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	prog := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(doc)
	if prog == nil {
		t.Fatal("docs/tutorial.md has no Go program")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example.com/ring\n\ngo 1.26\n\nrequire github.com/ttlpapers/ttlpapers v0.0.0\n\nreplace github.com/ttlpapers/ttlpapers => " + root + "\n"
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": prog[1]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ring := filepath.Join(dir, "ring")
	build := exec.Command("go", "build", "-mod=mod", "-o", ring, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the tutorial's program: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		cmd    *exec.Cmd
		prefix string
	}{
		{exec.Command(ring), ""},
		{exec.Command(bin(t, "papersctl"), "run", "-n", "4", "-dir", shmDir(t), "--", ring), "[PE %d] "},
	} {
		tc.cmd.Env = unlaunched()
		out, err := tc.cmd.CombinedOutput()
		for k := range 4 {
			want := fmt.Sprintf(strings.ReplaceAll(tc.prefix, "%d", fmt.Sprint(k))+"PE %d got %d from its left; sum 6\n", k, (k+3)%4)
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("%v: %v; want %q in\n%s", tc.cmd.Args, err, want, out)
			}
		}
	}
}
