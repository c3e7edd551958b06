package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
)

// leaves lists every runnable command with its path ("emu serve").
func leaves() (cs []*base.Command, paths []string) {
	for _, c := range base.Commands {
		if c.Subs == nil {
			cs, paths = append(cs, c), append(paths, "papersctl "+c.Name)
		}
		for _, s := range c.Subs {
			cs, paths = append(cs, s), append(paths, "papersctl "+c.Name+" "+s.Name)
		}
	}
	return cs, paths
}

// FuzzCommandLine parses and checks command lines of every command — every
// flag parser, range and combination check — without running them:
// nothing panics, and every refusal is -h or a usage error of non-empty
// one-line problems. Words are separated by NUL, so empty words occur.
func FuzzCommandLine(f *testing.F) {
	cs, paths := leaves()
	for i, p := range paths {
		name := strings.Fields(p)[1]
		for _, bc := range badInputs[name] {
			args := bc.args
			if len(p) > len("papersctl ")+len(name) && len(args) > 0 { // emu serve: drop "serve"
				args = args[1:]
			}
			f.Add(uint8(i), strings.Join(args, "\x00"))
		}
		f.Add(uint8(i), "")
		f.Add(uint8(i), "-h")
	}
	for _, good := range []string{"--pes\x008\x00--inject\x00PE2.D6=stuck0\x00--inject\x00PE5=unplugged", "--port\x000x378\x00--pe\x002\x00--pes\x004", "--json"} {
		f.Add(uint8(0), good)
	}
	f.Fuzz(func(t *testing.T, which uint8, line string) {
		i := int(which) % len(cs)
		var args []string
		if line != "" {
			args = strings.Split(line, "\x00")
		}
		_, _, _, err := base.Prepare(cs[i], paths[i], args)
		var u *base.UsageError
		var fe *base.FlagError
		switch {
		case err == nil, errors.Is(err, base.ErrHelp):
		case errors.As(err, &u), errors.As(err, &fe):
			for _, p := range base.UsageLines(err) {
				if p == "" || strings.Contains(p, "\n") {
					t.Fatalf("%s %q: problem %q is not one line", paths[i], args, p)
				}
			}
		default:
			t.Fatalf("%s %q: %T %v is not a usage error", paths[i], args, err, err)
		}
	})
}
