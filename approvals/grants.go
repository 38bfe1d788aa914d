package approvals

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"staage/tools"
)

// Grant is a standing approval bound to a descriptor digest, optionally
// narrowed to a prefix the tool understands.
type Grant struct {
	Tool   string       `json:"tool"`
	Digest tools.Digest `json:"digest"`
	Prefix string       `json:"prefix,omitempty"`
}

// GrantFile is the "always in this workspace" store: .staage/grants.json.
//
// The file lives in the workspace, so a repository could ship one. Each entry
// therefore carries an HMAC under a key that lives in the operator's own
// config directory: grants written by someone else's staage (or by hand, or
// by a sandboxed command) do not verify and are ignored, and Problems says so.
type GrantFile struct {
	path      string
	workspace string
	key       []byte

	mu       sync.Mutex
	grants   []Grant
	problems []string
}

type grantFileJSON struct {
	Version int              `json:"version"`
	Grants  []grantEntryJSON `json:"grants"`
}

type grantEntryJSON struct {
	Grant
	MAC string `json:"mac"`
}

// GrantFileVersion is the on-disk format version.
const GrantFileVersion = 1

// OpenGrantFile loads (or prepares) the grants file of a workspace. keyPath
// is the operator's private key file; it is created (0600) when missing.
func OpenGrantFile(workspace, keyPath string) (*GrantFile, error) {
	key, err := loadOrCreateKey(keyPath)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	// Bind grants to the real directory, so the same workspace opened
	// through a symlinked path keeps them.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	gf := &GrantFile{path: filepath.Join(abs, ".staage", "grants.json"), workspace: abs, key: key}
	if err := gf.load(); err != nil {
		return nil, err
	}
	return gf, nil
}

func loadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("grant key %s is readable by others (mode %v): anyone who can read it can forge always-grants; run chmod 600 %s", path, fi.Mode().Perm(), path)
		}
		k, derr := hex.DecodeString(string(trimSpace(b)))
		if derr != nil || len(k) < 32 {
			return nil, fmt.Errorf("grant key %s is malformed; delete it to make a new one (existing always-grants will then be ignored)", path)
		}
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadOrCreateKey(path) // another process won the race
	}
	if err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(k) + "\n"); err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	return k, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func (gf *GrantFile) mac(g Grant) string {
	m := hmac.New(sha256.New, gf.key)
	enc, _ := json.Marshal([]string{gf.workspace, g.Tool, g.Digest.String(), g.Prefix})
	m.Write(enc)
	return hex.EncodeToString(m.Sum(nil))
}

// maxGrantFileBytes bounds what is read from the workspace's grants file.
const maxGrantFileBytes = 1 << 20

// readGrantFile reads the grants file only if it is a regular file of a sane
// size. The file sits in the workspace, so a repository decides what is
// there: a symlink to /dev/zero or a FIFO must not hang or exhaust the boot,
// and a .staage that is not a directory must not stop it.
func readGrantFile(path string) ([]byte, error) {
	if err := notLinkedDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxGrantFileBytes {
		return nil, fmt.Errorf("%d bytes is over the %d byte limit", fi.Size(), maxGrantFileBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		return nil, errors.New("changed while it was opened")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxGrantFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxGrantFileBytes {
		return nil, fmt.Errorf("over the %d byte limit", maxGrantFileBytes)
	}
	return b, nil
}

func (gf *GrantFile) load() error {
	gf.grants, gf.problems = gf.readVerified()
	return nil
}

// readVerified reads the file and keeps the grants whose MAC verifies; the
// rest, and any reason the file could not be used, are problems.
func (gf *GrantFile) readVerified() ([]Grant, []string) {
	b, err := readGrantFile(gf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s cannot be read: %v; no always-grants loaded", gf.path, err)}
	}
	var doc grantFileJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, []string{fmt.Sprintf("%s is not valid JSON (%v); no always-grants loaded", gf.path, err)}
	}
	if doc.Version != GrantFileVersion {
		return nil, []string{fmt.Sprintf("%s has version %d, want %d; no always-grants loaded", gf.path, doc.Version, GrantFileVersion)}
	}
	var grants []Grant
	var problems []string
	for _, e := range doc.Grants {
		if !hmac.Equal([]byte(e.MAC), []byte(gf.mac(e.Grant))) {
			problems = append(problems, fmt.Sprintf("always-grant for %q (%s) was not written by this operator's staage; ignored", e.Tool, e.Digest.Short()))
			continue
		}
		grants = append(grants, e.Grant)
	}
	return grants, problems
}

// Grants returns the verified grants.
func (gf *GrantFile) Grants() []Grant {
	gf.mu.Lock()
	defer gf.mu.Unlock()
	return slices.Clone(gf.grants)
}

// Problems lists entries that were ignored and why.
func (gf *GrantFile) Problems() []string {
	gf.mu.Lock()
	defer gf.mu.Unlock()
	return slices.Clone(gf.problems)
}

// Add persists a grant (atomically: temp file, fsync, rename, fsync dir).
func (gf *GrantFile) Add(g Grant) error {
	gf.mu.Lock()
	defer gf.mu.Unlock()
	if slices.Contains(gf.grants, g) {
		return nil
	}
	// Another staage on the same workspace may have added grants since
	// this one read the file: read, merge and write under a lock, so
	// neither loses the other's.
	unlock, err := gf.lock()
	if err != nil {
		return err
	}
	defer unlock()
	onDisk, _ := gf.readVerified()
	next := slices.Clone(gf.grants)
	for _, d := range onDisk {
		if !slices.Contains(next, d) {
			next = append(next, d)
		}
	}
	next = append(next, g)
	doc := grantFileJSON{Version: GrantFileVersion}
	for _, x := range next {
		doc.Grants = append(doc.Grants, grantEntryJSON{Grant: x, MAC: gf.mac(x)})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	if err := writeAtomic(gf.path, append(b, '\n')); err != nil {
		return err
	}
	gf.grants = next
	return nil
}

// notLinkedDir refuses a .staage that is a symbolic link: it may point out
// of the workspace (planted by a repository or a sandboxed command), and the
// console's own writer must not write through it. A missing dir is fine.
func notLinkedDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link", dir)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	if err := notLinkedDir(dir); err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	f, err := os.CreateTemp(dir, ".staage-tmp-grants-*")
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	tmp := f.Name()
	cleanup := func() { _ = os.Remove(tmp) }
	if _, err := f.Write(data); err != nil {
		f.Close()
		cleanup()
		return fmt.Errorf("grants: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		cleanup()
		return fmt.Errorf("grants: %w", err)
	}
	if err := f.Close(); err != nil {
		cleanup()
		return fmt.Errorf("grants: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		cleanup()
		return fmt.Errorf("grants: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	return nil
}

// lock takes an exclusive flock on .staage/.grants.lock for a
// read-merge-write of the grants file.
func (gf *GrantFile) lock() (func(), error) {
	dir := filepath.Dir(gf.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	if err := notLinkedDir(dir); err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".grants.lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("grants lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("grants lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
