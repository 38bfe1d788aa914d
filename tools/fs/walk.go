package fs

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// maxIgnoreBytes bounds one .gitignore; a bigger one is not read.
const maxIgnoreBytes = 1 << 20

// dirHandle is one open directory of a walk. Files are opened relative to
// its descriptor with openat and a single-component name, so nothing the
// walk opens can leave the workspace: the first directory comes from the
// workspace's os.Root, every other one from openat(parent, name,
// O_NOFOLLOW|O_DIRECTORY), and names come from getdents ("." and ".."
// dropped). Symlinks are never followed.
type dirHandle struct {
	fd   int
	rel  string // "" for the root
	ign  *ignorer
	refs atomic.Int32
	root *os.File // the root's os.File, kept open while the walk runs
}

func (d *dirHandle) retain() { d.refs.Add(1) }

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		if d.root != nil {
			d.root.Close()
		} else {
			syscall.Close(d.fd)
		}
	}
}

func (d *dirHandle) join(name string) string {
	if d.rel == "" {
		return name
	}
	return d.rel + "/" + name
}

// openat opens name in d with flags; O_NOFOLLOW and O_CLOEXEC always.
func (d *dirHandle) openat(name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(d.fd, name, flags|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// entry is one directory entry with its type from getdents.
type entry struct {
	name string
	typ  uint8 // syscall.DT_*
}

// walkFile is one file the walk found.
type walkFile struct {
	dir  *dirHandle
	name string
	rel  string
}

type walkOptions struct {
	// prefix limits the walk to one literal directory path (from a
	// pattern such as "cmd/tool/**/*.go").
	prefix []string
	// after skips every file that sorts before after.Path; the file
	// at after.Path itself is visited (a search resumes inside it).
	after cursor
	// symlinks reports symlinks as files.
	symlinks bool
	// maxEntries caps how many directory entries the walk looks at.
	maxEntries int
}

// walker visits the workspace's files in path order (pathLess): each
// directory's entries sorted by name, depth first. It skips .git, what
// .gitignore files (and .git/info/exclude) ignore, and whatever is not a
// regular file or directory (or symlink, when asked).
type walker struct {
	ctx     context.Context
	opt     walkOptions
	visit   func(walkFile) bool
	entries int
	capped  bool
	buf     []byte // getdents buffer, reused
}

// walk runs visit on every file in order until visit returns false, the
// context ends or the entry cap is reached (capped). A handle passed to
// visit stays open while visit holds a reference (retain/release).
func walk(ctx context.Context, root *os.Root, opt walkOptions, visit func(walkFile) bool) (capped bool, err error) {
	f, err := root.Open(".")
	if err != nil {
		return false, err
	}
	d := &dirHandle{fd: int(f.Fd()), root: f}
	d.refs.Store(1)
	defer d.release()
	if ex, err := readSmall(d, ".git/info/exclude"); err == nil {
		d.ign = parseIgnore(nil, "", ex)
	}
	w := &walker{ctx: ctx, opt: opt, visit: visit, buf: make([]byte, 32<<10)}
	w.dir(d, 0)
	return w.capped, ctx.Err()
}

// list reads a directory's entries, sorted by name.
func (w *walker) list(fd int) []entry {
	var out []entry
	for {
		n, err := syscall.ReadDirent(fd, w.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		b := w.buf[:n]
		for len(b) >= 19 {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, name NUL-terminated.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			out = append(out, entry{name: string(name), typ: typ})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out
}

// typeOf fills in a type getdents left unknown (some file systems do): an
// O_NOFOLLOW open fails with ELOOP on a symlink, and fstat names the rest.
// O_NONBLOCK keeps a FIFO from blocking the open.
func typeOf(d *dirHandle, e entry) uint8 {
	if e.typ != syscall.DT_UNKNOWN {
		return e.typ
	}
	fd, err := d.openat(e.name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err == syscall.ELOOP {
		return syscall.DT_LNK
	}
	if err != nil {
		return syscall.DT_UNKNOWN
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return syscall.DT_UNKNOWN
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return syscall.DT_DIR
	case syscall.S_IFREG:
		return syscall.DT_REG
	}
	return syscall.DT_UNKNOWN
}

// dir walks one directory; false means stop.
func (w *walker) dir(d *dirHandle, depth int) bool {
	ents := w.list(d.fd)
	if i, ok := slices.BinarySearchFunc(ents, ".gitignore", func(e entry, n string) int { return strings.Compare(e.name, n) }); ok && typeOf(d, ents[i]) == syscall.DT_REG {
		if data, err := readSmall(d, ".gitignore"); err == nil {
			d.ign = parseIgnore(d.ign, d.rel, data)
		}
	}
	inPrefix := depth < len(w.opt.prefix)
	for _, e := range ents {
		if w.ctx.Err() != nil {
			return false
		}
		w.entries++
		if w.opt.maxEntries > 0 && w.entries > w.opt.maxEntries {
			w.capped = true
			return false
		}
		if e.name == ".git" {
			continue
		}
		typ := typeOf(d, e)
		isDir := typ == syscall.DT_DIR
		if inPrefix && (!isDir || e.name != w.opt.prefix[depth]) {
			continue
		}
		rel := d.join(e.name)
		if d.ign != nil && d.ign.ignored(rel, e.name, isDir) {
			continue
		}
		switch {
		case isDir:
			if w.opt.after.skipsDir(rel) {
				continue
			}
			fd, err := d.openat(e.name, syscall.O_RDONLY|syscall.O_DIRECTORY)
			if err != nil {
				continue // unreadable: skipped, the walk goes on
			}
			child := &dirHandle{fd: fd, rel: rel, ign: d.ign}
			child.refs.Store(1)
			ok := w.dir(child, depth+1)
			child.release()
			if !ok {
				return false
			}
		case typ == syscall.DT_REG || (typ == syscall.DT_LNK && w.opt.symlinks):
			if w.opt.after.Path != "" && pathLess(rel, w.opt.after.Path) {
				continue
			}
			if !w.visit(walkFile{dir: d, name: e.name, rel: rel}) {
				return false
			}
		}
	}
	return true
}

// readSmall reads a small regular file below d (a .gitignore, or
// .git/info/exclude), refusing anything else, without following symlinks.
func readSmall(d *dirHandle, name string) ([]byte, error) {
	fd := d.fd
	parts := strings.Split(name, "/")
	for i, p := range parts {
		flags := syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
		if i < len(parts)-1 {
			flags |= syscall.O_DIRECTORY
		} else {
			flags |= syscall.O_NONBLOCK
		}
		nfd, err := syscall.Openat(fd, p, flags, 0)
		if fd != d.fd {
			syscall.Close(fd)
		}
		if err != nil {
			return nil, err
		}
		fd = nfd
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, syscall.EINVAL
	}
	if st.Size > maxIgnoreBytes {
		return nil, syscall.EFBIG
	}
	buf := make([]byte, st.Size+1)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:min(n, maxIgnoreBytes)], nil
}
