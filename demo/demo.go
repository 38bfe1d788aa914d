// Package demo is the offline demo: an embedded sample workspace (a tiny Go
// project with a bug), copied to a fresh temporary directory so the demo
// never touches the operator's files, and the script the scripted provider
// plays in it. The script shows every part of the console: a plan, desk
// updates, reads, an edit with its diff, a stale-edit refusal, a call the
// operator is expected to deny with a note, a bash command, and reads that
// invite an approval for the session.
package demo

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed all:_workspace
var files embed.FS

const root = "_workspace"

// renamed maps embedded names to their names in the workspace: a go.mod
// cannot be embedded from inside this module.
var renamed = map[string]string{"go.mod.txt": "go.mod"}

// Materialize copies the sample workspace into a new temporary directory.
// cleanup removes it.
func Materialize(ctx context.Context) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "staage-demo-*")
	if err != nil {
		return "", nil, fmt.Errorf("demo workspace: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	err = fs.WalkDir(files, root, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if rel == "" {
			return nil
		}
		if n, ok := renamed[filepath.Base(rel)]; ok {
			rel = filepath.Join(filepath.Dir(rel), n)
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("demo workspace: %w", err)
	}
	return dir, cleanup, nil
}

// File returns the content of a sample file by its workspace path.
func File(path string) string {
	for emb, real := range renamed {
		if path == real {
			path = emb
		}
	}
	b, err := files.ReadFile(root + "/" + path)
	if err != nil {
		return ""
	}
	return string(b)
}
