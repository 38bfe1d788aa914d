package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"staage/tools/shell/sandbox"
)

// TestMain lets the test binary act as the sandbox helper when bash re-execs
// it, and removes the built staage binary afterwards.
func TestMain(m *testing.M) {
	if handled, code := sandbox.HelperMain(); handled {
		os.Exit(code)
	}
	if os.Getenv(mcpServerEnv) != "" {
		runMCPTestServer()
		os.Exit(0)
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// staageBinary builds the real staage binary once per test run and returns
// its path. Tests that drive staage the way a user does (a subprocess, a
// pty, a kill) share it.
func staageBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "staage-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "staage")
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = filepath.Dir(file)
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = &buildError{out: string(out), err: err}
		}
	})
	if binErr != nil {
		t.Fatalf("building staage: %v", binErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// testEnv is an environment for a staage subprocess: its own HOME and XDG
// dirs (no operator config, a fresh grant key, a private journal dir) and no
// provider keys.
func testEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"LANG=C.UTF-8",
	}
	if v := os.Getenv("CI"); v != "" {
		env = append(env, "CI="+v)
	}
	return env
}
