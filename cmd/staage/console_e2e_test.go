package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"staage/demo"
)

// console is the real staage binary in a pseudo-terminal, its output
// drawn by a virtual terminal emulator that also answers its queries.
type console struct {
	t    *testing.T
	emu  *vt.SafeEmulator
	ptmx *os.File
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
}

const consoleW, consoleH = 120, 40

func startConsole(t *testing.T, dir string, env []string, args ...string) *console {
	t.Helper()
	cmd := exec.Command(staageBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(env, "TERM=xterm-256color", "COLORTERM=truecolor")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: consoleH, Cols: consoleW})
	if err != nil {
		t.Fatal(err)
	}
	c := &console{t: t, emu: vt.NewSafeEmulator(consoleW, consoleH), ptmx: ptmx, cmd: cmd, done: make(chan struct{})}
	go func() { io.Copy(c.emu, ptmx); close(c.done) }()
	go io.Copy(ptmx, c.emu) // the emulator's answers to terminal queries
	t.Cleanup(func() {
		cmd.Process.Kill()
		ptmx.Close()
		cmd.Wait()
		c.emu.Close()
	})
	return c
}

// repaint makes the program draw a full frame (a resize there and back):
// x/vt v0.1.0 drifts on some of the renderer's partial updates, a full
// frame it draws exactly.
func (c *console) repaint() {
	for _, w := range []int{consoleW - 1, consoleW} {
		c.emu.Resize(w, consoleH)
		pty.Setsize(c.ptmx, &pty.Winsize{Rows: consoleH, Cols: uint16(w)})
		time.Sleep(40 * time.Millisecond)
	}
}

func (c *console) screen() string {
	lines := strings.Split(ansi.Strip(c.emu.Render()), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

// waitFor polls the screen until ok or the deadline.
func (c *console) waitFor(what string, d time.Duration, ok func(string) bool) string {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		c.repaint()
		s := c.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *console) waitText(text string, d time.Duration) string {
	c.t.Helper()
	return c.waitFor(strconvQuote(text), d, func(s string) bool { return strings.Contains(s, text) })
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// press types keys as a terminal would send them.
func (c *console) press(keys string) {
	c.t.Helper()
	if _, err := c.ptmx.Write([]byte(keys)); err != nil {
		c.t.Fatal(err)
	}
}

// answer waits out the modal's grace period and types a key.
func (c *console) answer(key string) {
	time.Sleep(600 * time.Millisecond)
	c.press(key)
}

var modalTitle = regexp.MustCompile(`Approve (\S+)\?`)

// nextModal waits for an approval dialog and returns the tool it asks about.
func (c *console) nextModal(d time.Duration) (string, string) {
	c.t.Helper()
	s := c.waitFor("an approval dialog", d, func(s string) bool { return modalTitle.MatchString(s) })
	return modalTitle.FindStringSubmatch(s)[1], s
}

func demoWorkspace(t *testing.T, tmp string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(tmp, "staage-demo-*"))
	if len(m) != 1 {
		t.Fatalf("demo workspaces under %s: %v", tmp, m)
	}
	return m[0]
}

// TestConsoleDemoEndToEnd starts the offline demo, approves reads for the
// session, checks the edit dialog (digest, effect class, diff lines),
// approves it with y and finds the file changed in the demo workspace.
func TestConsoleDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real binary")
	}
	tmp := t.TempDir()
	env := append(testEnv(t), "TMPDIR="+tmp)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "mine.go"), []byte("package mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startConsole(t, cwd, env, "--demo")
	c.waitText("offline demo", 20*time.Second)
	// The demo never works in the operator's directory.
	defer func() {
		ents, _ := os.ReadDir(cwd)
		if len(ents) != 1 || ents[0].Name() != "mine.go" {
			t.Errorf("the demo touched the working directory: %v", ents)
		}
	}()

	tool, s := c.nextModal(20 * time.Second)
	if tool != "file_read" || !strings.Contains(s, "read") {
		t.Fatalf("first dialog is %s:\n%s", tool, s)
	}
	c.answer("s") // reads for the session
	ws := demoWorkspace(t, tmp)
	target := filepath.Join(ws, filepath.FromSlash(demo.EditedFile))

	sawEdit := false
	for i := 0; i < 8 && !sawEdit; i++ {
		tool, s = c.nextModal(20 * time.Second)
		switch tool {
		case "file_edit":
			b, _ := os.ReadFile(target)
			if strings.Contains(string(b), demo.FixedLoop) {
				t.Fatal("the file changed before the edit was approved")
			}
			for _, want := range []string{"reversible", "sha256:", "1 of 1"} {
				if !strings.Contains(s, want) {
					t.Fatalf("edit dialog lacks %q:\n%s", want, s)
				}
			}
			// The diff lines: a numbered deletion and addition.
			for _, re := range []string{`\d+\s+-\s+` + regexp.QuoteMeta(demo.BuggyLoop), `\d+\s+\+\s+` + regexp.QuoteMeta(demo.FixedLoop)} {
				if !regexp.MustCompile(re).MatchString(s) {
					t.Fatalf("edit dialog lacks the diff line %s:\n%s", re, s)
				}
			}
			if !regexp.MustCompile(`sha256:[0-9a-f]{12}`).MatchString(s) {
				t.Fatalf("no short digest in the dialog:\n%s", s)
			}
			c.answer("y")
			// The first edit cites a stale digest: the tool refuses it
			// and the file stays; the second one lands.
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				b, _ := os.ReadFile(target)
				if strings.Contains(string(b), demo.FixedLoop) {
					sawEdit = true
					break
				}
				if strings.Contains(c.screen(), "file.stale") && modalTitle.MatchString(c.screen()) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		case "file_read":
			c.answer("s")
		default:
			t.Fatalf("unexpected dialog for %s before the edit:\n%s", tool, s)
		}
	}
	if !sawEdit {
		t.Fatalf("the approved edit never reached %s; screen:\n%s", target, c.screen())
	}
	c.waitText("file.stale", 10*time.Second)

	// The network call: deny it with a note.
	tool, s = c.nextModal(20 * time.Second)
	if tool != "bash" || !strings.Contains(s, "curl") || !strings.Contains(s, "irreversible") {
		t.Fatalf("expected the curl dialog, got %s:\n%s", tool, s)
	}
	c.answer("d")
	c.press("no network")
	c.press("\r")
	c.waitText("note: no network", 10*time.Second)

	// ctrl+c twice quits.
	c.press("\x03")
	c.waitText("press ctrl+c again to quit", 5*time.Second)
	c.press("\x03")
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("ctrl+c twice did not quit")
	}
}

// TestConsoleTypedAheadKeysDoNotAnswer types y and s continuously while the
// demo starts and its first dialog opens: none of them may answer it.
func TestConsoleTypedAheadKeysDoNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real binary")
	}
	tmp := t.TempDir()
	c := startConsole(t, t.TempDir(), append(testEnv(t), "TMPDIR="+tmp), "--demo")
	c.waitText("offline demo", 20*time.Second)
	stop := make(chan struct{})
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			c.ptmx.Write([]byte("ys"))
			time.Sleep(40 * time.Millisecond)
		}
	}()
	c.nextModal(20 * time.Second)
	time.Sleep(300 * time.Millisecond) // keep typing into the open dialog
	close(stop)
	<-typed
	time.Sleep(700 * time.Millisecond)
	s := c.screen()
	if !strings.Contains(s, "Approve file_read?") || strings.Contains(s, "approved · ") {
		t.Fatalf("typed-ahead keys answered the dialog:\n%s", s)
	}
	c.answer("n")
	c.waitText("denied", 10*time.Second)
}

// TestConsoleEscInterruptsBash runs a scripted bash command that sleeps,
// approves it, and interrupts the turn with esc.
func TestConsoleEscInterruptsBash(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real binary")
	}
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	body := `{"responses":[{"text":"Sleeping.","tool_calls":[{"id":"b1","name":"bash","input":{"command":"sleep 97.25"}}]},{"text":"after"}]}`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startConsole(t, dir, testEnv(t), "--script", script)
	c.waitText("ask, or type a task", 20*time.Second)
	c.press("sleep please")
	c.press("\r")
	tool, s := c.nextModal(20 * time.Second)
	if tool != "bash" || !strings.Contains(s, "sleep 97.25") {
		t.Fatalf("expected the bash dialog:\n%s", s)
	}
	c.answer("y")
	c.waitText("running…", 10*time.Second)
	if !sleeping() {
		t.Fatal("the approved command is not running")
	}
	start := time.Now()
	c.press("\x1b")
	c.waitFor("the interrupted turn", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "turn ended: interrupted")
	})
	t.Logf("interrupt shown after %v", time.Since(start))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("interrupt took %v", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("the interrupted command is still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("command gone after %v", time.Since(start))
}

// sleeping reports whether the test's sleep command is running anywhere.
func sleeping() bool {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), "sleep\x0097.25") {
			return true
		}
	}
	return false
}
