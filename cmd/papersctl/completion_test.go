package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// completeBash runs the bash completion for a command line whose last word
// is being typed and returns the candidates bash would offer.
func completeBash(t *testing.T, script string, words ...string) []string {
	t.Helper()
	words = append([]string{"papersctl"}, words...)
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := fmt.Sprintf("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_papersctl\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n",
		script, strings.Join(quoted, " "), len(words)-1)
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestBashCompletion: the bash script is valid bash and completes
// commands, subcommands, flags and flag values from the flag table.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	stdout, stderr, status := runCLI("completion", "bash")
	if status != 0 {
		t.Fatalf("completion bash: exit %d: %s", status, stderr)
	}
	script := filepath.Join(t.TempDir(), "papersctl.bash")
	if err := os.WriteFile(script, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	for _, c := range []struct {
		words []string
		want  []string // exactly these, in any order
	}{
		{[]string{"sel"}, []string{"selftest"}},
		{[]string{"--v"}, []string{"--version"}},
		{[]string{"emu", ""}, []string{"fault", "serve"}},
		{[]string{"emu", "serve", "--f"}, []string{"--fuse"}},
		{[]string{"selftest", "--mo"}, []string{"--mode"}},
		{[]string{"selftest", "--mode", ""}, []string{"cluster", "single", "multi-pc"}},
		{[]string{"selftest", "--pes", "4", "--mode", "m"}, []string{"multi-pc"}},
		{[]string{"selftest", "--pes", ""}, nil}, // a number: nothing to offer
		{[]string{"run", "-n"}, []string{"-n", "-np"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"help", "de"}, []string{"demo"}},
		{[]string{"hil", "-n", "2", "--", "se"}, []string{"selftest"}},
		{[]string{"hil", "--g"}, nil}, // --guest is internal
		{[]string{"bench", "--js"}, []string{"--json"}},
	} {
		got := completeBash(t, script, c.words...)
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("papersctl %s<TAB>: %q, want %q", strings.Join(c.words, " "), got, want)
		}
	}
	// Every flag of every command is offered.
	for _, cc := range base.CompletionModel() {
		if cc.Subs != nil {
			continue
		}
		got := completeBash(t, script, append(strings.Fields(cc.Path), "-")...)
		for _, f := range cc.Flags {
			if !slices.Contains(got, base.Dashed(f.Name)) {
				t.Errorf("papersctl %s -<TAB> lacks %s: %q", cc.Path, base.Dashed(f.Name), got)
			}
		}
	}
}

// TestZshFishCompletion checks the other scripts: every flag in them, and
// their syntax by the shell itself (CI installs zsh and fish).
func TestZshFishCompletion(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		stdout, _, status := runCLI("completion", shell)
		if status != 0 || !strings.Contains(stdout, "papersctl") {
			t.Fatalf("completion %s: exit %d", shell, status)
		}
		for _, cc := range base.CompletionModel() {
			for _, f := range cc.Flags {
				if !strings.Contains(stdout, f.Name) {
					t.Errorf("%s script lacks %s's --%s", shell, cc.Path, f.Name)
				}
			}
		}
		if _, err := exec.LookPath(shell); err != nil {
			testenv.Missing(t, "%s is not installed (apt-get install %[1]s): its script's syntax is not checked", shell)
		}
		script := filepath.Join(t.TempDir(), "papersctl."+shell)
		os.WriteFile(script, []byte(stdout), 0o644)
		if out, err := exec.Command(shell, "-n", script).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
		if shell == "fish" {
			checkFish(t, script)
		}
	}
}

// checkFish asks fish itself what it completes.
func checkFish(t *testing.T, script string) {
	for line, want := range map[string][]string{
		"papersctl sel":              {"selftest"},
		"papersctl selftest --mode ": {"cluster", "multi-pc", "single"},
		"papersctl emu ":             {"fault", "serve"},
		"papersctl run -n":           {"-n", "-np"},
		"papersctl completion ":      {"bash", "fish", "zsh"},
	} {
		out, err := exec.Command("fish", "--no-config", "-c", "source "+script+"; complete -C '"+line+"'").Output()
		if err != nil {
			t.Fatalf("fish: %v", err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			w, _, _ := strings.Cut(l, "\t")
			got = append(got, w)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("fish: %q<TAB>: %q, want %q", line, got, want)
		}
	}
}
