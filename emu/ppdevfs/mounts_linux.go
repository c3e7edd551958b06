//go:build linux

package ppdevfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The FUSE source and type a board's mount shows in /proc/self/mountinfo
// (MountOptions' FsName and Name).
const (
	fsName = "ttlpapers-board"
	fsType = "fuse.ppdevfs"
)

// ErrMountPoint is the error Mount returns, wrapped, for a directory it
// will not mount over: one that holds files, or is a mount point already.
var ErrMountPoint = errors.New("not a directory to serve a board in")

// checkMountPoint refuses a directory whose files a mount would hide, or
// that is a mount point already: both hide what someone put there.
func checkMountPoint(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("ppdevfs: %w", err)
	}
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.dir == abs {
			return fmt.Errorf("ppdevfs: %s is a mount point already (%s %s): %w: unmount it (fusermount3 -u %s) or name a new or empty directory", dir, m.fsType, m.source, ErrMountPoint, dir)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("ppdevfs: the directory to serve the board in: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return fmt.Errorf("ppdevfs: the directory to serve the board in: %w", err)
	}
	if len(names) > 0 {
		return fmt.Errorf("ppdevfs: %s holds files (%s, ...) that the board would hide: %w: name a new or empty directory", dir, names[0], ErrMountPoint)
	}
	return nil
}

type mount struct{ dir, fsType, source string }

// readMounts lists this process's mounts.
func readMounts() ([]mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("ppdevfs: reading the mount table: %w", err)
	}
	return parseMountinfo(b), nil
}

// parseMountinfo reads mountinfo lines: the fifth field is the mount point,
// and after the " - " separator come the type and the source.
func parseMountinfo(b []byte) []mount {
	var mounts []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(fields) {
			continue
		}
		mounts = append(mounts, mount{dir: unescapeMount(fields[4]), fsType: fields[sep+1], source: fields[sep+2]})
	}
	return mounts
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SweepStale unmounts the boards whose server died without unmounting
// them (a killed papersctl emu serve, hil run or test): such a mount
// answers every access with "transport endpoint is not connected" and
// hides its directory. Mount sweeps before it mounts. It returns the
// directories it unmounted.
func SweepStale() ([]string, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	var swept []string
	var errs []error
	for _, m := range mounts {
		if m.fsType != fsType || m.source != fsName {
			continue
		}
		if _, err := os.Stat(m.dir); !errors.Is(err, unix.ENOTCONN) {
			continue // served: another board's, alive
		}
		if out, err := exec.Command(FusermountPath(), "-u", "-z", m.dir).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ppdevfs: unmounting the dead board at %s: %v: %s", m.dir, err, bytes.TrimSpace(out)))
			continue
		}
		swept = append(swept, m.dir)
	}
	return swept, errors.Join(errs...)
}
