package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/agent"
	"staage/agent/journal"
	"staage/agent/provider/script"
	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui/app"
	"staage/ui/status"
)

var updateGolden = flag.Bool("update-journal", false, "rewrite testdata/journal_roundtrip_frame.golden")

// recorder keeps the live stream, as the console receives it.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) Publish(e agent.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func noteDecl() tools.Declaration {
	return tools.Declaration{
		Origin: tools.BuiltinOrigin, RawName: "note", Description: "note something",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		Policy: tools.Required, Effect: tools.EffectReversible,
		Handler: tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
			var a struct{ Text string }
			_ = call.Decode(&a)
			return tools.Ok{Payload: map[string]string{"noted": a.Text}, Notices: []tools.Notice{
				tools.PlanNotice{Steps: []tools.PlanStep{{Title: "note " + a.Text, Status: "done"}, {Title: "review", Status: "in_progress"}}},
				tools.DeskNotice{Page: "# Desk\n- noted " + a.Text},
			}}
		}),
	}
}

// frame draws the console built from events, the way a resumed console
// starts (app.Config.History).
func frame(events []agent.Event) string {
	m := app.New(app.Config{
		History: events, Env: themes.Env{NoColor: "1"},
		Info: status.Info{Model: "script", Sandbox: "off", Workspace: "/w"},
		Now:  func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	})
	m.Update(tea.WindowSizeMsg{Width: 110, Height: 34})
	return ansi.Strip(m.View().Content)
}

// TestResumeRoundTripFrameGolden runs a session through the real loop with
// the journal as its first sink, then resumes it: the console's first frame
// (transcript, plan, desk, status), the agent's state and the session
// grants after resume equal those at exit.
func TestResumeRoundTripFrameGolden(t *testing.T) {
	dir := t.TempDir()
	ts, _ := tools.NewToolset([]tools.Declaration{noteDecl()})
	hdr := hdrFor("/w")
	hdr.Tools = map[string]string{}
	for _, d := range ts.Descriptors() {
		hdr.Tools[d.Name] = d.Digest.String()
	}
	w, err := journal.Create(dir, hdr)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := script.New([]byte(`{"responses":[
		{"thinking":"The operator wants a note.","text":"I will **note** it.","tool_calls":[{"id":"n1","name":"note","input":{"text":"alpha"}}]},
		{"text":"Noted alpha. Next:\n\n- review\n- ship"},
		{"text":"Again.","tool_calls":[{"id":"n2","name":"note","input":{"text":"beta"}}]},
		{"text":"Noted beta."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	approve := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession}, nil
	})
	gate := approvals.NewGate(approvals.GateConfig{Approver: approve})
	live := &recorder{}
	sess := agent.NewSession(agent.SessionConfig{Provider: prov, Toolset: ts, Gate: gate, Sink: agent.Fanout{w, live}})
	for _, p := range []string{"note alpha", "note beta"} {
		if td, err := sess.Run(context.Background(), agent.MainLane, p); err != nil || td.Stop != agent.StopEndTurn {
			t.Fatalf("%q: %+v %v", p, td, err)
		}
	}
	atExit := frame(live.events)
	lane, _ := sess.State().Lane(agent.MainLane)
	grants := gate.SessionGrants()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	w2, rep, err := journal.Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	gate2 := approvals.NewGate(approvals.GateConfig{})
	sess2 := agent.NewSession(agent.SessionConfig{Provider: prov, Toolset: ts, Gate: gate2, Sink: w2})
	restored := sess2.Restore(rep.Events)
	resumed := frame(rep.Events)

	if resumed != atExit {
		t.Fatalf("first frame after resume differs from the frame at exit:\n--- at exit\n%s\n--- resumed\n%s", atExit, resumed)
	}
	lane2, _ := sess2.State().Lane(agent.MainLane)
	a, _ := json.Marshal(lane)
	b, _ := json.Marshal(lane2)
	if string(a) != string(b) {
		t.Fatalf("state differs:\n%s\n%s", a, b)
	}
	g2 := gate2.SessionGrants()
	if restored.Grants != 1 || len(g2) != len(grants) || g2[0] != grants[0] {
		t.Fatalf("grants at exit %v, after resume %v (%+v)", grants, g2, restored)
	}

	golden := filepath.Join("testdata", "journal_roundtrip_frame.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(resumed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-journal)", err)
	}
	if string(want) != resumed {
		t.Errorf("resumed frame differs from %s:\n%s", golden, resumed)
	}
}
