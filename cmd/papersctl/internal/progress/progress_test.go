package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

func TestSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, w := range []io.Writer{&buf, null} {
		if l := New(w); l != nil {
			t.Errorf("New(%T) = %v, want nil off a terminal", w, l)
		}
	}
	var l *Line
	l.Show("step %d", 1) // a nil Line shows nothing and does not panic
	l.Clear()
	if l.Above(&buf) != io.Writer(&buf) {
		t.Error("a nil Line's Above is not the writer itself")
	}
}

func TestRewritesInPlaceOnTerminal(t *testing.T) {
	tty, master := testenv.OpenPTY(t)
	l := New(tty)
	if l == nil {
		t.Fatal("New on a pseudo-terminal returned nil")
	}
	l.Show("op %d of %d", 1, 3)
	l.Show("%s", strings.Repeat("x", 200))
	io.WriteString(l.Above(tty), "result\n") // erases the line first
	l.Clear()                                // nothing shown: writes nothing
	tty.Close()
	got, _ := io.ReadAll(master) // ends with EIO once the terminal side is closed
	want := "\r\x1b[Kop 1 of 3" + "\r\x1b[K" + strings.Repeat("x", Width-1) + "…" + "\r\x1b[K" + "result\r\n"
	if string(got) != want {
		t.Errorf("terminal received %q,\nwant %q", got, want)
	}
}
