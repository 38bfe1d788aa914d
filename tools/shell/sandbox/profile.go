package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A login shell (bash -lc) runs /etc/profile, which on Debian resets PATH;
// the operator's own rc files restore it, but a sandboxed command has a
// private HOME without them. The private HOME therefore gets a .bash_profile
// that restores the console's PATH, and nothing else.

// profileFile writes (once per distinct PATH) the profile for env and
// returns its path in the sandbox's state directory; "" when env has no PATH.
func (st *state) profileFile(env []string) (string, error) {
	path, ok := lookup(env, "PATH")
	if !ok || path == "" {
		return "", nil
	}
	content := "# Written by staage: the console's PATH, restored after /etc/profile.\nexport PATH=" + shellQuote(path) + "\n"
	sum := sha256.Sum256([]byte(content))
	p := filepath.Join(st.dir, "profile-"+hex.EncodeToString(sum[:6]))
	if b, err := os.ReadFile(p); err == nil && string(b) == content {
		return p, nil
	}
	if err := writeFileAtomic(p, content, 0o444); err != nil {
		return "", fmt.Errorf("write the sandbox profile: %w", err)
	}
	return p, nil
}

// installProfile puts the profile in bench's private HOME before each
// command: the home is writable by commands, so what one command changed
// there is not what the next one runs.
func (st *state) installProfile(env []string) error {
	p, err := st.profileFile(env)
	if err != nil || p == "" {
		return err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(st.home(), ".bash_profile"), string(b), 0o644)
}

func writeFileAtomic(p, content string, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
