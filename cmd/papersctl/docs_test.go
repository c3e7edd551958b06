package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
)

// TestDocCommands: every papersctl command line the docs show names a
// command that exists and only flags it has, so a reader can type it as
// written. (hil's "-- COMMAND" part is checked as that command's.)
func TestDocCommands(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	// Code: fenced blocks, indented lines and inline spans.
	code := regexp.MustCompile("(?s:```.*?```)|(?m:^    [^\n]*$)|`[^`\n]+`")
	line := regexp.MustCompile(`(?:^|[\s$(])papersctl ([a-z][a-z-]*)([^|&;\n\x60]*)`)
	for _, doc := range docs {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range code.FindAllString(string(src), -1) {
			for _, m := range line.FindAllStringSubmatch(c, -1) {
				if msg := checkDocLine(m[1], strings.Fields(m[2])); msg != "" {
					t.Errorf("%s: %q: %s", filepath.Base(doc), m[0], msg)
				}
			}
		}
	}
}

// checkDocLine checks one command line (the command's name and the words
// after it) against the command's flags; "" when it is right.
func checkDocLine(name string, words []string) string {
	c := base.Lookup(base.Commands, name)
	if c == nil {
		return "no command " + name
	}
	for c.Subs != nil && len(words) > 0 {
		if c = base.Lookup(c.Subs, words[0]); c == nil {
			return "no subcommand " + words[0]
		}
		words = words[1:]
	}
	if c.New == nil {
		return ""
	}
	f := base.NewFlagSet("papersctl " + c.Name)
	c.New().Define(f)
	for i, w := range words {
		if w == "--" {
			if i+1 < len(words) && base.Lookup(base.Commands, words[i+1]) != nil && c.Name == "hil" {
				return checkDocLine(words[i+1], words[i+2:])
			}
			return ""
		}
		name, ok := strings.CutPrefix(strings.TrimPrefix(w, "-"), "-")
		if !ok && !strings.HasPrefix(w, "-") || name == "" || name == "h" {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if strings.Trim(name, "0123456789.") == "" || strings.ContainsAny(name, "[]…") {
			continue // a negative number, or a synopsis
		}
		if !f.Has(name) {
			return "papersctl " + c.Name + " has no flag -" + name
		}
	}
	return ""
}

// TestDocCommandsCatchDrift: the check refuses what the docs once said
// (selftest --gpio), a command that does not exist, and a wrong flag of
// hil's guest command, and takes correct lines.
func TestDocCommandsCatchDrift(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{"selftest --gpio", false},
		{"selftest --port gpio:pi", true},
		{"selftests --port 0x378", false},
		{"emu serve --fuse /tmp/board --pes 4", true},
		{"emu serve --pe 4", false},
		{"hil -n 4 -- selftest --port 0x378 --pe {pe} --pes {pes}", true},
		{"hil -n 4 -- selftest --gpio", false},
		{"hil -n 4 --exec ./matmul -- -block 32", true},
	} {
		w := strings.Fields(c.line)
		if msg := checkDocLine(w[0], w[1:]); (msg == "") != c.ok {
			t.Errorf("%q: %q, want ok=%v", c.line, msg, c.ok)
		}
	}
}
