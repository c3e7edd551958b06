package backend

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/ttlpapers/ttlpapers/lpt"
)

var (
	openDirect  = lpt.OpenDirect
	openDevPort = lpt.OpenDevPort
	openPPDev   = lpt.OpenPPDev
)

// findPorts reads the kernel's view: parport I/O ranges in /proc/ioports,
// /dev/parport* nodes and /sys/class/ppdev entries.
func findPorts() []Found {
	var fs []Found
	if f, err := os.Open("/proc/ioports"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			rng, name, ok := strings.Cut(sc.Text(), ":")
			name, rng = strings.TrimSpace(name), strings.TrimSpace(rng)
			if ok && strings.HasPrefix(name, "parport") {
				fs = append(fs, Found{Name: name, Where: rng, Source: "/proc/ioports"})
			}
		}
		f.Close()
	}
	devs, _ := filepath.Glob("/dev/parport[0-9]*")
	for _, d := range devs {
		fs = append(fs, Found{Name: filepath.Base(d), Where: d, Source: "/dev"})
	}
	sys, _ := filepath.Glob("/sys/class/ppdev/*")
	for _, s := range sys {
		fs = append(fs, Found{Name: filepath.Base(s), Where: "/dev/" + filepath.Base(s), Source: "/sys/class/ppdev"})
	}
	return fs
}

func gpioSummary() string {
	if err := hostInit(); err != nil {
		return err.Error()
	}
	pins := gpioreg.All()
	if len(pins) == 0 {
		return "no GPIO pins (periph loaded no GPIO driver on this host)"
	}
	names := make([]string, 0, 8)
	for i, p := range pins {
		if i == 8 {
			names = append(names, "…")
			break
		}
		names = append(names, p.Name())
	}
	return fmt.Sprintf("%d GPIO pins: %s", len(pins), strings.Join(names, ", "))
}
