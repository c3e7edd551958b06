package qemu

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

func TestResultsRoundTrip(t *testing.T) {
	console := "[    1.0] boot noise\n" +
		FormatResult("a", nil, "x=1") + "\r\n" +
		"garbage " + FormatResult("b", errors.New("broke\nbadly"), "") + "\n"
	rs := ParseResults([]byte(console))
	if len(rs) != 2 {
		t.Fatalf("got %d results %v, want 2", len(rs), rs)
	}
	if rs[0] != (Result{"a", true, "x=1"}) {
		t.Errorf("first result %+v", rs[0])
	}
	if rs[1] != (Result{"b", false, "broke | badly"}) {
		t.Errorf("second result %+v", rs[1])
	}
}

// TestInitramfsLayout checks the newc structure: every header starts on a
// 4-byte boundary with the magic, parents come before children, and the
// archive ends with the trailer.
func TestInitramfsLayout(t *testing.T) {
	var b bytes.Buffer
	if err := WriteInitramfs(&b, File{Path: "init", Data: []byte("abc")}, File{Path: "lib/modules/x.ko", Data: []byte("12345")}); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	var names []string
	modes := map[string]uint64{}
	for off := 0; off < len(data); {
		if off%4 != 0 || string(data[off:off+6]) != "070701" {
			t.Fatalf("no newc header at offset %d", off)
		}
		field := func(i int) int {
			v, err := strconv.ParseUint(string(data[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return int(v)
		}
		size, namesize := field(6), field(11)
		name := string(data[off+110 : off+110+namesize-1])
		names = append(names, name)
		modes[name] = uint64(field(1))
		off = align4(align4(off+110+namesize) + size)
	}
	want := []string{"dev", "lib", "lib/modules", "dev/console", "init", "lib/modules/x.ko", "TRAILER!!!"}
	if len(names) != len(want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("entries %q, want %q", names, want)
		}
	}
	if modes["init"] != 0o100755 || modes["lib/modules/x.ko"] != 0o100644 || modes["lib"] != 0o040755 {
		t.Errorf("modes %v", modes)
	}
	if err := WriteInitramfs(&b, File{Path: "/init"}); err == nil {
		t.Error("an absolute path was accepted")
	}
}

func align4(n int) int { return (n + 3) &^ 3 }
