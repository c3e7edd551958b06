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

// The README's program is examples/hello, whole: it compiles as written.
func TestReadmeProgramIsHello(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```\n").FindAllSubmatch(readme, -1)
	if len(blocks) != 1 {
		t.Fatalf("README has %d Go blocks, want the one program", len(blocks))
	}
	hello, err := os.ReadFile("../examples/hello/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(blocks[0][1]) != string(hello) {
		t.Error("the README's program differs from examples/hello/main.go: copy the file into the README")
	}
}

// The README's documentation map names every doc.
func TestReadmeNamesEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	for _, d := range docs {
		if link := "](docs/" + filepath.Base(d) + ")"; !strings.Contains(string(readme), link) {
			t.Errorf("README does not link docs/%s: add it to the documentation map", filepath.Base(d))
		}
	}
}

// The README's program prints what the README says, in-process and as
// papersctl run's processes (with a -papers.* flag, as the README shows).
func TestReadmeProgramRuns(t *testing.T) {
	hello := bin(t, "hello")
	for _, tc := range []struct {
		cmd    *exec.Cmd
		prefix string
	}{
		{exec.Command(hello), ""},
		{exec.Command(bin(t, "papersctl"), "run", "-n", "4", "-dir", shmDir(t), "--", hello, "-papers.timeout", "20s"), "[PE %d] "},
	} {
		tc.cmd.Env = unlaunched()
		out, err := tc.cmd.CombinedOutput()
		for k := range 4 {
			want := fmt.Sprintf(strings.ReplaceAll(tc.prefix, "%d", fmt.Sprint(k))+"PE %d of 4: even PEs 0101, sum of the ids 6\n", k)
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("%v: %v; want %q in\n%s", tc.cmd.Args, err, want, out)
			}
		}
	}
}

// The README's program lists its -papers.* flags with -h, and one given a
// PE id but no PE count or port says what is missing instead of running
// four PEs in-process.
func TestReadmeProgramSaysWhatIsMissing(t *testing.T) {
	hello := bin(t, "hello")
	help := exec.Command(hello, "-h")
	help.Env = unlaunched()
	out, _ := help.CombinedOutput()
	for _, flag := range []string{"-papers.pe", "-papers.pes", "-papers.port", "-papers.timeout", "-papers.checkin"} {
		if !strings.Contains(string(out), flag) {
			t.Errorf("hello -h does not list %s:\n%s", flag, out)
		}
	}
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{nil, []string{"PAPERS_PE=0"}, "PAPERS_PES"},
		{[]string{"-papers.pe", "0", "-papers.pes", "4"}, nil, "PAPERS_PORT"},
	} {
		cmd := exec.Command(hello, tc.args...)
		cmd.Env = append(unlaunched(), tc.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "sum of the ids") {
			t.Errorf("%v %v: %v; want a failure naming %s, and no PE run:\n%s", tc.env, cmd.Args, err, tc.want, out)
		}
	}
}
