package journal

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelperOpen is not a test: it is the second process of
// TestSecondProcessIsRefused, re-executed from the test binary.
func TestHelperOpen(t *testing.T) {
	path := os.Getenv("JOURNAL_HELPER_OPEN")
	if path == "" {
		t.Skip("helper process only")
	}
	w, _, err := Open(path)
	if err != nil {
		fmt.Print("REFUSED: " + err.Error())
		os.Exit(3)
	}
	w.Close()
	fmt.Print("OPENED")
	os.Exit(0)
}

func helperOpen(t *testing.T, path string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOpen$")
	cmd.Env = append(os.Environ(), "JOURNAL_HELPER_OPEN="+path)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestSecondProcessIsRefused(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "shared")
	out, code := helperOpen(t, w.Path())
	if code != 3 || !strings.Contains(out, "REFUSED") || !strings.Contains(out, "open in another staage process") {
		t.Fatalf("second process while held: exit %d, %q", code, out)
	}
	w.Close()
	// The lock goes with the holder: now the other process may resume.
	if out, code := helperOpen(t, w.Path()); code != 0 || out != "OPENED" {
		t.Fatalf("after Close: exit %d, %q", code, out)
	}
}
