package gpiomap_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
)

func TestParseMapping(t *testing.T) {
	var full []string
	for i, l := range lpt.Lines {
		full = append(full, fmt.Sprintf("%s=GPIO%d", l.Name, i+2))
	}
	m, err := gpiomap.ParseMapping(strings.Join(full, ", "))
	if err != nil {
		t.Fatal(err)
	}
	if m.String() != strings.Join(full, ",") {
		t.Errorf("String() = %q", m)
	}
	withoutSelectIn := strings.Join(full[:16], ",") // nSelectIn is last: optional
	if _, err := gpiomap.ParseMapping(withoutSelectIn); err != nil {
		t.Errorf("nSelectIn should be optional: %v", err)
	}
	for _, c := range []struct{ in, want string }{
		{strings.Join(full[1:], ","), "lacks lines nStrobe"},
		{strings.Join(full, ",") + ",D0=GPIO40", "line D0 is mapped twice"},
		{strings.Replace(strings.Join(full, ","), "GPIO3", "GPIO2", 1), "pin GPIO2 is mapped to both nStrobe and D0"},
		{"D0", "want LINE=PIN"},
		{"D9=GPIO4", "no port line named \"D9\""},
		{"S0=GPIO4", "lacks lines nStrobe, D0"},
	} {
		if _, err := gpiomap.ParseMapping(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseMapping(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func ExampleParseMapping() {
	m, err := gpiomap.ParseMapping("nStrobe=GPIO4, D0=GPIO17, D1=GPIO18, D2=GPIO27, D3=GPIO22, D4=GPIO23, D5=GPIO24, " +
		"D6=GPIO25, D7=GPIO5, nAck=GPIO6, Busy=GPIO12, PaperOut=GPIO13, Select=GPIO19, nAutoFd=GPIO16, nError=GPIO26, nInit=GPIO20")
	fmt.Println(m, err)
	// Output: nStrobe=GPIO4,D0=GPIO17,D1=GPIO18,D2=GPIO27,D3=GPIO22,D4=GPIO23,D5=GPIO24,D6=GPIO25,D7=GPIO5,nAck=GPIO6,Busy=GPIO12,PaperOut=GPIO13,Select=GPIO19,nAutoFd=GPIO16,nError=GPIO26,nInit=GPIO20 <nil>
}
