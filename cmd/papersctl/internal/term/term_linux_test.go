package term

import (
	"bytes"
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

func TestIsTerminal(t *testing.T) {
	tty, _ := testenv.OpenPTY(t)
	if !IsTerminal(tty) {
		t.Error("a pseudo-terminal is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	// /dev/null is a character device, as a terminal is: the old
	// ModeCharDevice test took it for one.
	for name, v := range map[string]any{"pipe": w, os.DevNull: null, "buffer": &bytes.Buffer{}, "nil file": (*os.File)(nil)} {
		if IsTerminal(v) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
