package demo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/provider/script"
	"staage/approvals"
	"staage/tools"
	"staage/tools/notes"
	"staage/tools/shell/sandbox"
	"staage/tools/toolset"
	"staage/tools/workspace"
)

func TestMaterializeCopiesTheSampleFresh(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a, cleanA, err := Materialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, cleanB, err := Materialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanB()
	if a == b {
		t.Fatal("two demos share a workspace")
	}
	for _, f := range []string{"go.mod", "main.go", "README.md", "AGENTS.md", EditedFile, "tally/tally_test.go"} {
		got, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if string(got) != File(f) {
			t.Fatalf("%s differs from the embedded copy", f)
		}
	}
	if _, err := os.Stat(filepath.Join(a, "go.mod.txt")); err == nil {
		t.Fatal("go.mod.txt was not renamed")
	}
	cleanA()
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("cleanup left %s", a)
	}
}

func TestMaterializeHonoursCancellation(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Materialize(ctx); err == nil {
		t.Fatal("a cancelled context still materialized")
	}
	if m, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "staage-demo-*")); len(m) != 0 {
		t.Fatalf("left behind: %v", m)
	}
}

// TestScriptDigestsMatchTheEmbeddedFile keeps the script honest: the good
// edit cites the digest of the embedded file, the stale one does not.
func TestScriptDigestsMatchTheEmbeddedFile(t *testing.T) {
	var s struct {
		Responses []struct {
			ToolCalls []struct {
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"tool_calls"`
		} `json:"responses"`
	}
	if err := json.Unmarshal(Script(), &s); err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, r := range s.Responses {
		for _, c := range r.ToolCalls {
			if c.Name != "file_edit" {
				continue
			}
			var in struct{ Digest, Old string }
			json.Unmarshal(c.Input, &in)
			digests = append(digests, in.Digest)
			if !strings.Contains(File(EditedFile), in.Old) {
				t.Fatalf("edit old text %q is not in the file", in.Old)
			}
		}
	}
	want := digestOf(File(EditedFile))
	if len(digests) != 2 || digests[0] == want || digests[1] != want {
		t.Fatalf("edit digests %v; the file's is %s", digests, want)
	}
}

// operator approves everything once, except a command that reaches the
// network, which it denies with a note.
type operator struct {
	mu    sync.Mutex
	asked []string
}

func (o *operator) Approve(_ context.Context, req approvals.Request) (approvals.Decision, error) {
	o.mu.Lock()
	o.asked = append(o.asked, req.Descriptor.Name)
	o.mu.Unlock()
	if strings.Contains(string(req.Args), "curl") {
		return approvals.Decision{Verdict: approvals.Deny, Note: "no network"}, nil
	}
	scope := approvals.ScopeOnce
	if req.Descriptor.Effect == tools.EffectRead {
		scope = approvals.ScopeSession
	}
	return approvals.Decision{Verdict: approvals.Approve, Scope: scope}, nil
}

// TestDemoReplaysThroughTheRealToolset runs the demo script through the
// scripted provider, the shipped toolset and the gate, in a materialized
// workspace, and checks that every part the console must show happens.
func TestDemoReplaysThroughTheRealToolset(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, cleanup, err := Materialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Probe(ctx, "off")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	home := t.TempDir()
	ts, _, err := toolset.Compose(toolset.Options{Workspace: ws, Sandbox: sb, Notes: notes.NewStore(),
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := script.New(Script())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var evs []agent.Event
	op := &operator{}
	s := agent.NewSession(agent.SessionConfig{
		Provider: p, Toolset: ts, Gate: approvals.NewGate(approvals.GateConfig{Approver: op}),
		Sink: agent.SinkFunc(func(e agent.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }),
	})
	td, err := s.Run(ctx, agent.MainLane, Prompt())
	if err != nil {
		t.Fatal(err)
	}
	if td.Stop != agent.StopEndTurn {
		t.Fatalf("turn stopped with %q", td.Stop)
	}

	calls := map[string]string{} // id → tool
	var results []agent.ToolResult
	var plans, desks int
	for _, e := range evs {
		switch ev := e.(type) {
		case agent.ToolCall:
			calls[ev.ID] = ev.Tool
		case agent.ToolResult:
			results = append(results, ev)
			if ev.Refusal == tools.ArgsInvalid || ev.Refusal == tools.ToolUnknown {
				t.Fatalf("%s (%s) does not fit the real tool: %s", ev.ID, calls[ev.ID], ev.Message)
			}
		case agent.PlanChanged:
			plans++
		case agent.DeskChanged:
			desks++
		}
	}
	find := func(tool string, ok bool, refusal tools.RefusalName) bool {
		for _, r := range results {
			if calls[r.ID] == tool && r.OK == ok && r.Refusal == refusal {
				return true
			}
		}
		return false
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"a plan", plans >= 2},
		{"desk writes", desks >= 2},
		{"a read", find("file_read", true, "")},
		{"a stale edit refused", find("file_edit", false, tools.FileStale)},
		{"an edit that lands", find("file_edit", true, "")},
		{"a denied call", find("bash", false, tools.ApprovalDenied)},
		{"a bash command that runs", find("bash", true, "")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("the demo does not show %s", c.what)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, EditedFile))
	if !strings.Contains(string(got), FixedLoop) || strings.Contains(string(got), BuggyLoop) {
		t.Fatalf("the fix did not land:\n%s", got)
	}
	// Reads were granted for the session: the operator was asked once
	// for them although the script reads three times.
	reads := 0
	for _, n := range op.asked {
		if n == "file_read" {
			reads++
		}
	}
	if reads != 1 {
		t.Fatalf("asked %d times about file_read; a session grant should cover the rest", reads)
	}
}
