package linuxlpt_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

func TestSystemPorts(t *testing.T) {
	found := []linuxlpt.Found{
		{Name: "parport0", Where: "0378-037a", Source: "/proc/ioports"},
		{Name: "parport0", Where: "0778-077a", Source: "/proc/ioports"}, // its ECP range
		{Name: "parport1", Where: "/dev/parport1", Source: "/sys/class/ppdev"},
		{Name: "parport1", Where: "/dev/parport1", Source: "/dev"},
		{Name: "parport0", Where: "/dev/parport0", Source: "/dev"},
		{Name: "parport2", Where: "d010-d012", Source: "/proc/ioports"},
	}
	want := []linuxlpt.SystemPort{
		{Name: "parport0", Base: 0x378, Dev: "/dev/parport0"},
		{Name: "parport1", Dev: "/dev/parport1"},
		{Name: "parport2", Base: 0xd010},
	}
	got := linuxlpt.SystemPorts(found)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SystemPorts = %+v\nwant %+v", got, want)
	}
	for i, sp := range got {
		if sp.Number() != i {
			t.Errorf("%s: Number() = %d", sp.Name, sp.Number())
		}
	}
	if n := (linuxlpt.SystemPort{Name: "lp0"}).Number(); n != -1 {
		t.Errorf("lp0: Number() = %d, want -1", n)
	}
	if _, err := (linuxlpt.SystemPort{Name: "parport7"}).Open(); err == nil || !strings.Contains(err.Error(), "parport7") {
		t.Errorf("opening a port with no node and no range: %v", err)
	}
}
