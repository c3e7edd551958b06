package substrate_test

import (
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/substrate"
)

type fake struct{ name string }

func (fake) Check(string) error                                        { return nil }
func (fake) Open(string, substrate.Options) (substrate.Session, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	if _, err := substrate.Lookup("x:1"); err == nil || !strings.Contains(err.Error(), "no driver") {
		t.Errorf("Lookup with nothing registered: %v", err)
	}
	substrate.Register("faketest", fake{"faketest"})
	substrate.Register(substrate.Default, fake{substrate.Default})
	for spec, want := range map[string]string{"faketest:a:b": "faketest", "faketest": "faketest", "0x378": substrate.Default, "nope:1": substrate.Default} {
		d, err := substrate.Lookup(spec)
		if err != nil || d.(fake).name != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", spec, d, err, want)
		}
	}
	if got := strings.Join(substrate.Drivers(), ","); got != "faketest,port" {
		t.Errorf("Drivers() = %s", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "twice") {
			t.Errorf("registering a name twice: panic %v", r)
		}
	}()
	substrate.Register("faketest", fake{})
}
