package linuxlpt

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// FindPorts lists the parallel ports the kernel knows of: parport I/O
// ranges in /proc/ioports, /dev/parport* nodes and /sys/class/ppdev
// entries, one Found per mention. It opens no port.
func FindPorts() []Found {
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
