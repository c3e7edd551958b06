package qemu

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// File is one regular file of an initramfs.
type File struct {
	Path string      // path in the guest without the leading slash: "init", "lib/modules/ppdev.ko"
	Mode fs.FileMode // permission bits; 0 means 0755 for "init", 0644 otherwise
	Data []byte
}

// WriteInitramfs writes files as a newc-format cpio archive, the format the
// kernel unpacks into its root file system at boot; the directories the
// files need are created, and /dev with a console node, so that the guest's
// /init has a console before it mounts devtmpfs.
func WriteInitramfs(w io.Writer, files ...File) error {
	cw := &cpioWriter{w: w, ino: 1}
	dirs := map[string]bool{"dev": true}
	for _, f := range files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || path.Clean(f.Path) != f.Path {
			return fmt.Errorf("qemu: initramfs path %q must be relative and clean, like \"lib/modules/ppdev.ko\"", f.Path)
		}
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names) // parents before children
	for _, d := range names {
		cw.entry(d, 0o040755, 0, nil)
	}
	cw.entry("dev/console", 0o020600, 5<<8|1, nil) // char 5:1
	for _, f := range files {
		perm := uint32(f.Mode.Perm())
		if perm == 0 {
			perm = 0o644
			if f.Path == "init" {
				perm = 0o755
			}
		}
		cw.entry(f.Path, 0o100000|perm, 0, f.Data)
	}
	cw.entry("TRAILER!!!", 0, 0, nil)
	return cw.err
}

type cpioWriter struct {
	w   io.Writer
	n   int64
	ino uint32
	err error
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	var n int
	n, c.err = c.w.Write(b)
	c.n += int64(n)
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// entry writes one newc header, name and data. rdev packs major<<8|minor.
func (c *cpioWriter) entry(name string, mode, rdev uint32, data []byte) {
	ino := c.ino
	c.ino++
	nlink := uint32(1)
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev>>8, rdev&0xff, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}
