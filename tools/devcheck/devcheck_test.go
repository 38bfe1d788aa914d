package devcheck

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/tools"
	"staage/tools/shell/sandbox"
)

func TestMain(m *testing.M) {
	if handled, code := sandbox.HelperMain(); handled {
		os.Exit(code)
	}
	code := m.Run()
	for _, r := range probed.m {
		r.sb.Close()
	}
	os.Exit(code)
}

var probed = struct {
	sync.Mutex
	m map[sandbox.Mode]probeResult
}{m: map[sandbox.Mode]probeResult{}}

type probeResult struct {
	sb  sandbox.Sandbox
	err error
}

func probe(t *testing.T, mode sandbox.Mode) sandbox.Sandbox {
	t.Helper()
	probed.Lock()
	r, ok := probed.m[mode]
	if !ok {
		r.sb, r.err = sandbox.Probe(context.Background(), string(mode))
		probed.m[mode] = r
	}
	probed.Unlock()
	if r.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("probe %s under CI: %v", mode, r.err)
		}
		t.Skipf("probe %s: %v", mode, r.err)
	}
	return r.sb
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// repo has gates that pass, fail, look at uncommitted work and write.
func repo(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	os.MkdirAll(filepath.Join(ws, "script"), 0o755)
	files := map[string]string{
		"script/check-ok.sh":     "echo gate ok; pwd\n",
		"script/check-fail.sh":   "echo broken >&2; exit 3\n",
		"script/check-sees.sh":   "cat tracked.txt untracked.txt\n",
		"script/check-writes.sh": "echo junk > written-by-gate.txt; rm tracked.txt\n",
		"tracked.txt":            "committed\n",
	}
	for p, c := range files {
		os.WriteFile(filepath.Join(ws, p), []byte(c), 0o755)
	}
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-qm", "init")
	os.WriteFile(filepath.Join(ws, "tracked.txt"), []byte("edited, not committed\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "untracked.txt"), []byte("new file\n"), 0o644)
	os.Symlink("/bin/true", filepath.Join(ws, "script", "check-link.sh"))
	return ws
}

func run(t *testing.T, sb sandbox.Sandbox, ws, args string) tools.Result {
	t.Helper()
	ts, _ := tools.NewToolset(Declarations(Deps{Workspace: ws, Sandbox: sb, Timeout: 2 * time.Minute,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}}))
	tl, ok := ts.Lookup("dev_check")
	if !ok || tl.Policy != tools.Required || tl.Effect != tools.EffectIrreversible {
		t.Fatal("dev_check declaration")
	}
	c, ref := tl.Bind("c", "main", json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tl.Handler().Run(context.Background(), c)
}

func TestGatesRunInADisposableCopy(t *testing.T) {
	for _, m := range []sandbox.Mode{sandbox.Product, sandbox.Bench, sandbox.Off} {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			ws := repo(t)
			before := git(t, ws, "status", "--porcelain")
			headBefore := git(t, ws, "rev-parse", "HEAD")

			out := payload(t, run(t, sb, ws, `{"gate":"ok"}`))
			if !out.Passed || !strings.Contains(out.Output, "gate ok") || strings.Contains(out.Output, ws+"\n") {
				t.Fatalf("ok gate: %+v", out)
			}
			out = payload(t, run(t, sb, ws, `{"gate":"fail"}`))
			if out.Passed || out.ExitCode != 3 || !strings.Contains(out.Output, "broken") {
				t.Fatalf("fail gate: %+v", out)
			}
			out = payload(t, run(t, sb, ws, `{"gate":"sees"}`))
			if !strings.Contains(out.Output, "edited, not committed") || !strings.Contains(out.Output, "new file") {
				t.Fatalf("the copy is not the working tree: %+v", out)
			}
			payload(t, run(t, sb, ws, `{"gate":"writes"}`))
			if _, err := os.Stat(filepath.Join(ws, "written-by-gate.txt")); err == nil {
				t.Fatal("the gate wrote into the workspace")
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "tracked.txt")); string(b) != "edited, not committed\n" {
				t.Fatal("the gate changed the workspace")
			}
			// Nothing of the operator's state moved: status, HEAD, worktrees.
			if after := git(t, ws, "status", "--porcelain"); after != before {
				t.Fatalf("status changed:\n%s\nvs\n%s", before, after)
			}
			if git(t, ws, "rev-parse", "HEAD") != headBefore {
				t.Fatal("HEAD moved")
			}
			if wl := git(t, ws, "worktree", "list"); strings.Count(wl, "\n") != 1 {
				t.Fatalf("worktree left behind:\n%s", wl)
			}
		})
	}
}

func payload(t *testing.T, r tools.Result) Output {
	t.Helper()
	ok, isOk := r.(tools.Ok)
	if !isOk {
		t.Fatalf("got %#v", r)
	}
	return ok.Payload.(Output)
}

func TestUnknownGates(t *testing.T) {
	sb := probe(t, sandbox.Off)
	ws := repo(t)
	for _, g := range []string{"missing", "link"} {
		r := run(t, sb, ws, `{"gate":"`+g+`"}`)
		ref, ok := r.(*tools.Refusal)
		if !ok || ref.Name != tools.CheckUnknown || !strings.Contains(ref.Message, "fail, ok, sees, writes") {
			t.Fatalf("%s: %#v", g, r)
		}
	}
	for _, bad := range []string{`{"gate":"../../bin/sh"}`, `{"gate":"ok; rm -rf /"}`, `{"gate":"OK"}`, `{}`} {
		if r, ok := run(t, sb, ws, bad).(*tools.Refusal); !ok || r.Name != tools.ArgsInvalid {
			t.Fatalf("%s: %#v", bad, r)
		}
	}
	if r, ok := run(t, sb, t.TempDir(), `{"gate":"ok"}`).(*tools.Refusal); !ok || r.Name != tools.CheckUnknown {
		t.Fatalf("no scripts: %#v", r)
	}
}
