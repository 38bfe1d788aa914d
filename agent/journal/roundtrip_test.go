package journal_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/agent"
	"staage/agent/journal"
	"staage/agent/provider/script"
	"staage/approvals"
	"staage/tools"
)

// noteTool is a REQUIRED, reversible tool that reports a plan and a desk
// page with its result, so one call moves transcript, plan, desk and grants.
func noteTool(schemaExtra string) tools.Declaration {
	return tools.Declaration{
		Origin: tools.BuiltinOrigin, RawName: "note", Description: "write a note",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}` + schemaExtra + `},"required":["text"],"additionalProperties":false}`),
		Policy: tools.Required, Effect: tools.EffectReversible,
		Handler: tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
			var a struct{ Text string }
			if err := call.Decode(&a); err != nil {
				return tools.Refuse(tools.ArgsInvalid, err.Error())
			}
			return tools.Ok{Payload: map[string]string{"noted": a.Text}, Notices: []tools.Notice{
				tools.PlanNotice{Steps: []tools.PlanStep{{Title: "note " + a.Text, Status: "done"}, {Title: "next", Status: "pending"}}},
				tools.DeskNotice{Page: "# desk\n- " + a.Text},
			}}
		}),
	}
}

const roundTripScript = `{"responses":[
 {"text":"Noting one.","tool_calls":[{"id":"c1","name":"note","input":{"text":"one"}}]},
 {"text":"Noted one."},
 {"text":"Noting two.","tool_calls":[{"id":"c2","name":"note","input":{"text":"two"}}]},
 {"text":"Noted two."},
 {"text":"Resumed fine."}
]}`

type rig struct {
	sess *agent.Session
	gate *approvals.Gate
	prov *script.Provider
	ts   *tools.Toolset
}

func newRig(t *testing.T, sink agent.Sink, decl tools.Declaration, approver approvals.Approver) rig {
	t.Helper()
	ts, _ := tools.NewToolset([]tools.Declaration{decl})
	prov, err := script.New([]byte(roundTripScript))
	if err != nil {
		t.Fatal(err)
	}
	gate := approvals.NewGate(approvals.GateConfig{Approver: approver})
	sess := agent.NewSession(agent.SessionConfig{Provider: prov, Toolset: ts, Gate: gate, Sink: sink})
	return rig{sess: sess, gate: gate, prov: prov, ts: ts}
}

func digestsOf(d tools.Declaration) map[string]string {
	ts, _ := tools.NewToolset([]tools.Declaration{d})
	return digests(ts)
}

func digests(ts *tools.Toolset) map[string]string {
	m := map[string]string{}
	for _, tl := range ts.Tools() {
		m[tl.Name] = tl.Digest.String()
	}
	return m
}

// snapshot is what the operator sees and the model is sent: every lane's
// history, plan and desk, and the session grants.
type snapshot struct {
	Lanes  map[string]agent.LaneState
	Grants []approvals.Grant
}

func snap(r rig) snapshot {
	s := snapshot{Lanes: map[string]agent.LaneState{}, Grants: r.gate.SessionGrants()}
	for _, name := range r.sess.State().Lanes() {
		l, _ := r.sess.State().Lane(name)
		s.Lanes[name] = l
	}
	return s
}

func TestResumeRoundTripGolden(t *testing.T) {
	dir := t.TempDir()
	asked := 0
	approveSession := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		asked++
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession}, nil
	})
	// The first process: it asks once, grants for the session, and the
	// second call rides on the grant.
	w, err := journal.Create(dir, journal.Header{ID: "roundtrip", Workspace: "/w", Provider: "script", Sandbox: "off", Tools: digestsOf(noteTool(""))})
	if err != nil {
		t.Fatal(err)
	}
	first := newRig(t, w, noteTool(""), approveSession)
	ctx := context.Background()
	for _, p := range []string{"note one", "note two"} {
		if td, err := first.sess.Run(ctx, agent.MainLane, p); err != nil || td.Stop != agent.StopEndTurn {
			t.Fatalf("turn %q: %+v %v", p, td, err)
		}
	}
	if asked != 1 {
		t.Fatalf("asked %d times, want 1 (the second call is granted)", asked)
	}
	before := snap(first)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The second process: resume with the same toolset.
	w2, rep, err := journal.Open(filepath.Join(dir, "roundtrip.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if len(rep.Problems) != 0 {
		t.Fatalf("problems: %v", rep.Problems)
	}
	noAsk := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		t.Error("resumed session asked again despite the restored grant")
		return approvals.Decision{Verdict: approvals.Deny}, nil
	})
	second := newRig(t, w2, noteTool(""), noAsk)
	if changed := journal.ChangedTools(rep.Header.Tools, digests(second.ts)); len(changed) != 0 {
		t.Fatalf("changed tools %v", changed)
	}
	restored := second.sess.Restore(rep.Events)
	if restored.Grants != 1 || restored.Interrupted != 0 || len(restored.Notes) != 0 {
		t.Fatalf("restored %+v", restored)
	}
	after := snap(second)
	bj, _ := json.MarshalIndent(before, "", "  ")
	aj, _ := json.MarshalIndent(after, "", "  ")
	if string(bj) != string(aj) {
		t.Fatalf("state after resume differs:\n--- before\n%s\n--- after\n%s", bj, aj)
	}
	golden := filepath.Join("testdata", "roundtrip.golden.json")
	if flag.Lookup("update").Value.String() == "true" { // the flag is declared in export_test.go
		os.WriteFile(golden, append(aj, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(aj)+"\n" {
		t.Errorf("resumed state differs from %s (run -update after checking):\n%s", golden, aj)
	}

	// The conversation continues with the whole history sent to the model.
	second.prov.Skip(4)
	if td, err := second.sess.Run(ctx, agent.MainLane, "still there?"); err != nil || td.Stop != agent.StopEndTurn {
		t.Fatalf("resumed turn: %+v %v", td, err)
	}
	reqs := second.prov.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != len(before.Lanes[agent.MainLane].History)+1 {
		t.Fatalf("resumed request carried %d messages, want %d", len(reqs[0].Messages), len(before.Lanes[agent.MainLane].History)+1)
	}
}

func TestResumeDropsGrantsOfChangedTools(t *testing.T) {
	dir := t.TempDir()
	w, err := journal.Create(dir, journal.Header{ID: "changed", Workspace: "/w", Provider: "script", Sandbox: "off", Tools: digestsOf(noteTool(""))})
	if err != nil {
		t.Fatal(err)
	}
	approve := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession}, nil
	})
	first := newRig(t, w, noteTool(""), approve)
	if _, err := first.sess.Run(context.Background(), agent.MainLane, "note one"); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w2, rep, err := journal.Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	// The tool's schema changed (an MCP server updated): a new digest.
	second := newRig(t, w2, noteTool(`,"tag":{"type":"string"}`), approve)
	changed := journal.ChangedTools(rep.Header.Tools, digests(second.ts))
	if len(changed) != 1 || changed[0] != "note" {
		t.Fatalf("changed %v", changed)
	}
	restored := second.sess.Restore(rep.Events)
	if restored.Grants != 0 || len(second.gate.SessionGrants()) != 0 {
		t.Fatalf("grant of a changed tool carried over: %+v", restored)
	}
	if len(restored.Notes) != 1 || !strings.Contains(restored.Notes[0], "descriptor changed") {
		t.Fatalf("notes %v", restored.Notes)
	}
}
