package proc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	c := newCapture(Limits{Head: 20, Tail: 30})
	for i := range 100 {
		fmt.Fprintf(c, "line %03d\n", i)
	}
	text, clipped, truncated := c.result()
	if !truncated {
		t.Fatal("not truncated")
	}
	if !strings.HasPrefix(text, "line 000\nline 001\n") {
		t.Errorf("head lost: %q", text)
	}
	if !strings.HasSuffix(text, "line 098\nline 099\n") {
		t.Errorf("tail lost: %q", text)
	}
	kept := strings.Count(text, "line ")
	if kept+clipped != 100 {
		t.Errorf("kept %d + clipped %d != 100: %q", kept, clipped, text)
	}
	if !strings.Contains(text, fmt.Sprintf("[%d lines clipped]", clipped)) {
		t.Errorf("no marker: %q", text)
	}
}

func TestCaptureSmallOutputIntact(t *testing.T) {
	c := newCapture(Limits{Head: 20, Tail: 30})
	fmt.Fprint(c, "hello\nworld")
	text, clipped, truncated := c.result()
	if text != "hello\nworld" || clipped != 0 || truncated {
		t.Errorf("got %q %d %v", text, clipped, truncated)
	}
}

func TestCaptureHugeSingleWrite(t *testing.T) {
	c := newCapture(Limits{Head: 10, Tail: 10})
	c.Write([]byte(strings.Repeat("x", 1000) + "\nEND\n"))
	text, _, truncated := c.result()
	if !truncated || !strings.HasSuffix(text, "END\n") || len(text) > 100 {
		t.Errorf("got %q", text)
	}
}

func TestCaptureInvalidUTF8(t *testing.T) {
	c := newCapture(Limits{})
	c.Write([]byte{'a', 0xff, 'b'})
	text, _, _ := c.result()
	if text != "a\uFFFDb" {
		t.Errorf("got %q", text)
	}
}

func run(t *testing.T, ctx context.Context, script string, timeout time.Duration) Result {
	t.Helper()
	res, err := Run(ctx, Spec{Path: "/bin/bash", Args: []string{"bash", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: t.TempDir(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunExitCodeAndOutput(t *testing.T) {
	res := run(t, context.Background(), "echo out; echo err >&2; exit 3", time.Minute)
	if res.ExitCode != 3 || res.Output != "out\nerr\n" || res.TimedOut {
		t.Errorf("got %+v", res)
	}
}

func TestRunEnvironmentIsOnlyWhatWasGiven(t *testing.T) {
	t.Setenv("STAAGE_PROC_LEAK", "leaked")
	res := run(t, context.Background(), "echo \"[$STAAGE_PROC_LEAK]\"", time.Minute)
	if res.Output != "[]\n" {
		t.Errorf("environment leaked: %q", res.Output)
	}
}

// alive reports whether any process runs with exactly this argv.
func alive(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == want {
			return true
		}
	}
	return false
}

// waitGone polls until no process has argv; leftovers may need a moment to
// be reaped by init after SIGKILL.
func waitGone(t *testing.T, argv ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(argv...) {
		if time.Now().After(deadline) {
			t.Fatalf("%v still running", argv)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunTimeoutKillsBackgroundJobs(t *testing.T) {
	res := run(t, context.Background(), "sleep 31411 & sleep 31412 & sleep 31413", 300*time.Millisecond)
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	waitGone(t, "sleep", "31411")
	waitGone(t, "sleep", "31412")
	waitGone(t, "sleep", "31413")
}

func TestRunExitLeavesNoBackgroundJob(t *testing.T) {
	res := run(t, context.Background(), "sleep 31414 >/dev/null 2>&1 & echo started", time.Minute)
	if res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("got %+v", res)
	}
	waitGone(t, "sleep", "31414")
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	res := run(t, ctx, "sleep 31415", time.Minute)
	if !res.Cancelled || res.TimedOut {
		t.Fatalf("got %+v", res)
	}
	waitGone(t, "sleep", "31415")
}

func TestRunHasNoControllingTerminal(t *testing.T) {
	res := run(t, context.Background(), "exec 3</dev/tty && echo HAS-TTY || echo no-tty", time.Minute)
	if !strings.Contains(res.Output, "no-tty") {
		t.Errorf("child could open /dev/tty: %q", res.Output)
	}
}

func TestRunRejectsEmpty(t *testing.T) {
	if _, err := Run(context.Background(), Spec{}); err == nil {
		t.Fatal("empty spec ran")
	}
}

func TestRunReportsTheSignal(t *testing.T) {
	res := run(t, context.Background(), "kill -SEGV $$", time.Minute)
	if res.ExitCode != -1 || res.Signal != "segmentation fault" {
		t.Fatalf("got %+v", res)
	}
}
