package gpiomap_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
)

// TestRaspberryPiMatchesTheDocs checks the wiring table of
// docs/hardware.md against RaspberryPi and PiHeader: its mapping string,
// and each row's line, GPIO and header pin.
func TestRaspberryPiMatchesTheDocs(t *testing.T) {
	src, err := os.ReadFile("../../docs/hardware.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	if !strings.Contains(doc, "\n"+gpiomap.RaspberryPi.String()+"\n") {
		t.Errorf("docs/hardware.md does not quote the mapping %s", gpiomap.RaspberryPi)
	}
	pins, err := gpiomap.RaspberryPi.HeaderPins()
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (\w+) \| .* \| (GPIO\d+) \| (\d+) \|$`)
	rows := row.FindAllStringSubmatch(doc, -1)
	if len(rows) != len(lpt.Lines) {
		t.Fatalf("docs/hardware.md's wiring table has %d GPIO rows, want %d", len(rows), len(lpt.Lines))
	}
	for _, r := range rows {
		l, err := lpt.LineByName(r[2])
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for i = range lpt.Lines {
			if lpt.Lines[i] == l {
				break
			}
		}
		if strconv.Itoa(l.Pin) != r[1] || gpiomap.RaspberryPi[i] != r[3] || strconv.Itoa(pins[i]) != r[4] {
			t.Errorf("docs row %q: RaspberryPi maps %s (DB-25 pin %d) to %s, header pin %d", r[0], l.Name, l.Pin, gpiomap.RaspberryPi[i], pins[i])
		}
	}
}

// TestHeaderPinsRejectsOtherPins asks for a pin the header does not have.
func TestHeaderPinsRejectsOtherPins(t *testing.T) {
	m := gpiomap.RaspberryPi
	m[0] = "GPIO40"
	if _, err := m.HeaderPins(); err == nil || !strings.Contains(err.Error(), "GPIO40") {
		t.Errorf("got %v, want an error naming GPIO40", err)
	}
}

// TestPiByName reads the Pi's mapping by its name, as the gpio:pi port
// spec gives it, in any case.
func TestPiByName(t *testing.T) {
	for _, s := range []string{"pi", "Pi", " PI "} {
		m, err := gpiomap.ParseMapping(s)
		if err != nil || m != gpiomap.RaspberryPi {
			t.Errorf("ParseMapping(%q) = %v, %v; want the RaspberryPi mapping", s, m, err)
		}
	}
}
