package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"staage/tools"
)

// TempPrefix starts the name of every temporary file a write makes, so a
// crash leaves files SweepTemps recognizes.
const TempPrefix = ".staage-tmp-"

// NewFileMode is the mode of a file a write creates.
const NewFileMode fs.FileMode = 0o644

// File is a regular file read whole.
type File struct {
	Rel  string // workspace-relative, resolved
	Data []byte
	Info fs.FileInfo
}

// Digest is "sha256:<hex>" of data, the form file_read reports and
// file_edit cites.
func Digest(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

func missing(p string) *tools.Refusal {
	return tools.Refuse(tools.FileMissing, fmt.Sprintf("%s does not exist", p)).With("path", p)
}

// NotRegular is the file.not_regular refusal for p, naming its kind.
func NotRegular(p string, m fs.FileMode) *tools.Refusal {
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSymlink != 0:
		kind = "a symlink that changed while it was being resolved"
	}
	return tools.Refuse(tools.FileNotRegular, fmt.Sprintf("%s is %s", p, kind)).With("path", p)
}

func tooLarge(p string, size, max int64) *tools.Refusal {
	return tools.Refuse(tools.FileTooLarge, fmt.Sprintf("%s is %d bytes, over the %d byte limit", p, size, max)).
		With("path", p).With("size", size).With("limit", max)
}

// Stat resolves p and reports the file it names without following a final
// symlink (Resolve already evaluated the links that stay inside). A missing
// file is file.missing.
func (r *Root) Stat(p string) (rel string, fi fs.FileInfo, err error) {
	rel, err = r.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	fi, err = r.root.Lstat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return rel, nil, missing(p)
		}
		return rel, nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	return rel, fi, nil
}

// ReadFile resolves p and reads the regular file it names, at most max
// bytes. It refuses directories, FIFOs, sockets and devices with
// file.not_regular without opening them (and opens with O_NONBLOCK, so a
// FIFO swapped in after the check cannot block), and files over max with
// file.too_large.
func (r *Root) ReadFile(p string, max int64) (File, error) {
	rel, fi, err := r.Stat(p)
	if err != nil {
		return File{}, err
	}
	if !fi.Mode().IsRegular() {
		return File{}, NotRegular(p, fi.Mode())
	}
	if fi.Size() > max {
		return File{}, tooLarge(p, fi.Size(), max)
	}
	f, err := r.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, missing(p)
		}
		return File{}, fmt.Errorf("open %s: %w", rel, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("stat %s: %w", rel, err)
	}
	if !ofi.Mode().IsRegular() {
		return File{}, NotRegular(p, ofi.Mode())
	}
	// Read one byte past the cap to notice a file that grew.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(len(data)) > max {
		return File{}, tooLarge(p, int64(len(data)), max)
	}
	return File{Rel: rel, Data: data, Info: ofi}, nil
}

// WriteOptions shape an atomic write.
type WriteOptions struct {
	// Overwrite allows replacing an existing file. Without it an existing
	// file is file.exists, checked atomically (the new file is linked in,
	// which fails if the name appeared meanwhile).
	Overwrite bool
	// ExpectDigest, when set, is the digest the existing file must still
	// have right before it is replaced; otherwise the write is file.stale.
	ExpectDigest string
	// MakeDirs creates missing parent directories inside the root.
	MakeDirs bool
}

// WriteFile replaces (or creates) the file p names with data, atomically:
// a temp file named TempPrefix… in the same directory, created O_EXCL,
// written, given the old file's mode (NewFileMode for a new file) and owner,
// fsynced, renamed over the target, then the directory is fsynced. A path
// that resolves outside the root is path.escape before anything is written;
// the rename replaces a symlink planted after that check rather than writing
// through it. It returns the resolved relative path.
func (r *Root) WriteFile(p string, data []byte, opt WriteOptions) (string, error) {
	rel, fi, err := r.Stat(p)
	var ref *tools.Refusal
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return "", NotRegular(p, fi.Mode())
		}
		if !opt.Overwrite {
			return "", tools.Refuse(tools.FileExists, fmt.Sprintf("%s exists; pass overwrite:true to replace it", p)).With("path", p)
		}
	case errors.As(err, &ref) && ref.Name == tools.FileMissing:
		fi = nil
		if opt.ExpectDigest != "" {
			return "", err
		}
	default:
		return "", err
	}
	if rel == "." {
		return "", NotRegular(p, fs.ModeDir)
	}
	dir, base := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	if opt.MakeDirs && dir != "." {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				return "", tools.Refuse(tools.FileNotRegular, fmt.Sprintf("a parent of %s is not a directory", p)).With("path", p)
			}
			return "", fmt.Errorf("create directories for %s: %w", rel, err)
		}
	}
	mode := NewFileMode
	if fi != nil {
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	tmp, err := r.writeTemp(dir, base, data, mode, fi)
	if errors.Is(err, syscall.ENOTDIR) {
		return "", tools.Refuse(tools.FileNotRegular, fmt.Sprintf("a parent of %s is not a directory", p)).With("path", p)
	}
	if err != nil {
		return "", err
	}
	defer r.root.Remove(tmp) // a no-op once renamed
	if opt.ExpectDigest != "" {
		cur, err := r.root.ReadFile(rel)
		if err != nil {
			return "", fmt.Errorf("re-read %s: %w", rel, err)
		}
		if Digest(cur) != opt.ExpectDigest {
			return "", tools.Refuse(tools.FileStale, fmt.Sprintf("%s changed while it was being written; read it again", p)).
				With("path", p).With("digest", Digest(cur))
		}
	}
	if fi == nil && !opt.Overwrite {
		// Link fails with EEXIST if the name appeared meanwhile: a
		// create that cannot clobber.
		if err := r.root.Link(tmp, rel); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", tools.Refuse(tools.FileExists, fmt.Sprintf("%s exists; pass overwrite:true to replace it", p)).With("path", p)
			}
			if err := r.root.Rename(tmp, rel); err != nil {
				return "", fmt.Errorf("rename into %s: %w", rel, err)
			}
		}
	} else if err := r.root.Rename(tmp, rel); err != nil {
		return "", fmt.Errorf("rename into %s: %w", rel, err)
	}
	if err := r.syncDir(dir); err != nil {
		return "", err
	}
	return rel, nil
}

func (r *Root) writeTemp(dir, base string, data []byte, mode fs.FileMode, old fs.FileInfo) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("temp name: %w", err)
	}
	// The writer's pid is in the name, so a sweep at another staage's boot
	// can tell a crashed writer's leftover from a live writer's temp.
	name := TempPrefix + "p" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:]) + "-" + base
	if len(name) > 255 {
		name = name[:255]
	}
	tmp := path.Join(dir, name)
	f, err := r.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create temp for %s: %w", path.Join(dir, base), err)
	}
	fail := func(err error) (string, error) {
		f.Close()
		r.root.Remove(tmp)
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", tmp, err))
	}
	if old != nil {
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			// Keep the owner when we may (running as root over a
			// user's file); not being allowed to is not an error.
			_ = f.Chown(int(st.Uid), int(st.Gid))
		}
	}
	// Chmod after Chown: chown clears setuid/setgid bits.
	if err := f.Chmod(mode); err != nil {
		return fail(fmt.Errorf("chmod %s: %w", tmp, err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("fsync %s: %w", tmp, err))
	}
	if err := f.Close(); err != nil {
		r.root.Remove(tmp)
		return "", fmt.Errorf("close %s: %w", tmp, err)
	}
	return tmp, nil
}

func (r *Root) syncDir(dir string) error {
	d, err := r.root.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// SweepTemps removes leftover TempPrefix files (a crash between creating a
// temp file and renaming it) anywhere in the root except .git, and returns
// how many it removed. It runs at every start, so it walks directory
// descriptors directly: each directory is opened with openat(O_NOFOLLOW)
// relative to its parent (confined like the rest of the package: single
// names from the directory listing, links never followed) and each temp
// file is removed with unlinkat in the directory it was listed in.
func (r *Root) SweepTemps(ctx context.Context) (int, error) {
	f, err := r.root.Open(".")
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	defer f.Close()
	n := 0
	err = sweepDir(ctx, f, ".", &n)
	return n, err
}

func sweepDir(ctx context.Context, dir *os.File, rel string, n *int) error {
	ents, err := dir.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil // unreadable: not a reason to stop sweeping
	}
	fd := int(dir.Fd())
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		switch {
		case e.IsDir():
			if name == ".git" {
				continue
			}
			sub, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			f := os.NewFile(uintptr(sub), path.Join(rel, name))
			err = sweepDir(ctx, f, path.Join(rel, name), n)
			f.Close()
			if err != nil {
				return err
			}
		case e.Type().IsRegular() && strings.HasPrefix(name, TempPrefix) && !writerAlive(name):
			if err := syscall.Unlinkat(fd, name); err != nil && !errors.Is(err, syscall.ENOENT) {
				return fmt.Errorf("remove %s: %w", path.Join(rel, name), err)
			}
			*n++
		}
	}
	return nil
}

// IsBinary reports whether data looks binary: a NUL byte in its first 8 KiB
// (the test git and ripgrep use).
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0
}

// writerAlive reports whether a temp file's name says it belongs to a
// process that is still running (another staage writing in this workspace
// right now). This process's own pid counts as dead: at boot it has written
// nothing yet, so a temp with its pid is a leftover of an earlier process
// that had the same pid.
func writerAlive(name string) bool {
	rest, ok := strings.CutPrefix(name, TempPrefix+"p")
	if !ok {
		return false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
