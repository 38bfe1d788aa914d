package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/provider/script"
	"staage/approvals"
	"staage/tools"
)

// recorder is a Sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) Publish(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Event(nil), r.events...)
}

func (r *recorder) results() []agent.ToolResult {
	var out []agent.ToolResult
	for _, e := range r.all() {
		if tr, ok := e.(agent.ToolResult); ok {
			out = append(out, tr)
		}
	}
	return out
}

func (r *recorder) types() []string {
	var out []string
	for _, e := range r.all() {
		out = append(out, e.Type())
	}
	return out
}

const echoSchema = `{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"],"additionalProperties":false}`

func echoDecl(name string, policy tools.ApprovalPolicy, log *[]string, mu *sync.Mutex) tools.Declaration {
	return tools.Declaration{
		RawName: name, Description: "echo", Schema: json.RawMessage(echoSchema),
		Policy: policy, Effect: tools.EffectRead,
		Handler: tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result {
			var a struct{ Msg string }
			if err := c.Decode(&a); err != nil {
				return tools.Refuse(tools.ArgsInvalid, err.Error())
			}
			mu.Lock()
			*log = append(*log, name+":"+a.Msg)
			mu.Unlock()
			if a.Msg == "refuse" {
				return tools.Refuse(tools.FileMissing, "no such thing")
			}
			return tools.Ok{Payload: map[string]string{"echo": a.Msg}}
		}),
	}
}

type fixture struct {
	session *agent.Session
	prov    *script.Provider
	rec     *recorder
	ran     *[]string
}

func newFixture(t *testing.T, scriptJSON string, approver approvals.Approver, extra ...tools.Declaration) fixture {
	t.Helper()
	var mu sync.Mutex
	ran := &[]string{}
	decls := append([]tools.Declaration{
		echoDecl("echo", tools.Never, ran, &mu),
		echoDecl("guarded", tools.Required, ran, &mu),
	}, extra...)
	ts, rep := tools.NewToolset(decls)
	if len(rep.Notes) != 0 {
		t.Fatalf("unexpected boot notes: %+v", rep.Notes)
	}
	prov, err := script.New([]byte(scriptJSON))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s := agent.NewSession(agent.SessionConfig{
		Provider: prov, Toolset: ts, Sink: rec,
		Gate: approvals.NewGate(approvals.GateConfig{Approver: approver}),
	})
	return fixture{session: s, prov: prov, rec: rec, ran: ran}
}

func TestTwoCallsRunInOrderAndResultsGoBack(t *testing.T) {
	f := newFixture(t, `{"responses":[
		{"text":"Let me look.","tool_calls":[
			{"id":"a","name":"echo","input":{"msg":"one"}},
			{"id":"b","name":"echo","input":{"msg":"refuse"}}]},
		{"text":"Done."}]}`, nil)
	td, err := f.session.Run(context.Background(), agent.MainLane, "go")
	if err != nil {
		t.Fatal(err)
	}
	if td.Stop != agent.StopEndTurn {
		t.Fatalf("stop = %q", td.Stop)
	}
	if got := strings.Join(*f.ran, ","); got != "echo:one,echo:refuse" {
		t.Fatalf("ran %q", got)
	}
	reqs := f.prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != agent.RoleTool || len(last.ToolResults) != 2 {
		t.Fatalf("last message %+v", last)
	}
	if last.ToolResults[0].CallID != "a" || last.ToolResults[0].IsError {
		t.Fatalf("first result %+v", last.ToolResults[0])
	}
	if last.ToolResults[1].CallID != "b" || !last.ToolResults[1].IsError || !strings.Contains(last.ToolResults[1].Content, `"refusal":"file.missing"`) {
		t.Fatalf("refusal did not reach the model: %+v", last.ToolResults[1])
	}
	if msgs[1].Role != agent.RoleAssistant || msgs[1].Text != "Let me look." || len(msgs[1].ToolCalls) != 2 {
		t.Fatalf("assistant message %+v", msgs[1])
	}
	want := []string{"user", "text", "text", "text", "usage", "message",
		"tool_call", "approval", "tool_started", "tool_result",
		"tool_call", "approval", "tool_started", "tool_result",
		"text", "usage", "message", "turn_done"}
	if got := f.rec.types(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
}

func TestBadCallsAreTypedRefusalsAndTheLoopGoesOn(t *testing.T) {
	f := newFixture(t, `{"responses":[
		{"tool_calls":[
			{"id":"u","name":"nosuch","input":{}},
			{"id":"m","name":"echo","input_raw":"{\"msg\": \"x\""},
			{"id":"d","name":"echo","input_raw":"{\"msg\":\"a\",\"MSG\":\"b\"}"},
			{"id":"s","name":"echo","input":{"msg":3}},
			{"id":"x","name":"echo","input":{"msg":"ok","extra":1}}]},
		{"text":"I see."}]}`, nil)
	if _, err := f.session.Run(context.Background(), agent.MainLane, "go"); err != nil {
		t.Fatal(err)
	}
	want := map[string]tools.RefusalName{"u": tools.ToolUnknown, "m": tools.ArgsInvalid, "d": tools.ArgsInvalid, "s": tools.ArgsInvalid, "x": tools.ArgsInvalid}
	res := f.rec.results()
	if len(res) != len(want) {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.OK || r.Refusal != want[r.ID] {
			t.Errorf("%s: ok=%v refusal=%q want %q (%s)", r.ID, r.OK, r.Refusal, want[r.ID], r.Message)
		}
	}
	if len(*f.ran) != 0 {
		t.Fatalf("a handler ran on bad input: %v", *f.ran)
	}
	for _, e := range f.rec.all() {
		if tc, ok := e.(agent.ToolCall); ok && !json.Valid(tc.Input) {
			t.Fatalf("tool_call input is not JSON: %s", tc.Input)
		}
	}
	if n := len(f.prov.Requests()); n != 2 {
		t.Fatalf("the loop stopped after refusals: %d model calls", n)
	}
}

func TestCutStreamRunsNoCall(t *testing.T) {
	f := newFixture(t, `{"responses":[
		{"text":"partial","cut":true,"tool_calls":[{"id":"a","name":"echo","input":{"msg":"never"}}]}]}`, nil)
	td, _ := f.session.Run(context.Background(), agent.MainLane, "go")
	if td.Stop != agent.StopIncomplete {
		t.Fatalf("stop = %q", td.Stop)
	}
	if len(*f.ran) != 0 {
		t.Fatal("a call of a cut response ran")
	}
	var sawErr bool
	for _, e := range f.rec.all() {
		if er, ok := e.(agent.Error); ok && er.Kind == "stream" {
			sawErr = true
		}
	}
	if !sawErr {
		t.Fatal("no error event for the cut stream")
	}
	h := f.session.State().History(agent.MainLane)
	if last := h[len(h)-1]; last.Role != agent.RoleAssistant || len(last.ToolCalls) != 0 || last.Text != "partial" {
		t.Fatalf("history keeps %+v", last)
	}
}

func TestHeadlessDeniesRequired(t *testing.T) {
	f := newFixture(t, `{"responses":[{"tool_calls":[{"id":"g","name":"guarded","input":{"msg":"x"}}]},{"text":"ok"}]}`, nil)
	f.session.Run(context.Background(), agent.MainLane, "go")
	res := f.rec.results()
	if len(res) != 1 || res[0].Refusal != tools.ApprovalDenied {
		t.Fatalf("results %+v", res)
	}
	for _, e := range f.rec.all() {
		if d, ok := e.(agent.ApprovalDecided); ok && d.Asked {
			t.Fatalf("a headless denial says the operator was asked: %+v", d)
		}
	}
	if len(*f.ran) != 0 {
		t.Fatal("an unapproved call ran")
	}
}

func TestApproverDecidesAndNoteReachesModel(t *testing.T) {
	approver := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		if strings.Contains(string(req.Args), "deny") {
			return approvals.Decision{Verdict: approvals.Deny, Note: "not that one"}, nil
		}
		return approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeOnce}, nil
	})
	f := newFixture(t, `{"responses":[{"tool_calls":[
		{"id":"1","name":"guarded","input":{"msg":"deny"}},
		{"id":"2","name":"guarded","input":{"msg":"fine"}}]},{"text":"ok"}]}`, approver)
	f.session.Run(context.Background(), agent.MainLane, "go")
	res := f.rec.results()
	if res[0].Refusal != tools.ApprovalDenied || !strings.Contains(res[0].Message, "not that one") {
		t.Fatalf("deny: %+v", res[0])
	}
	if !res[1].OK || strings.Join(*f.ran, ",") != "guarded:fine" {
		t.Fatalf("approve: %+v ran %v", res[1], *f.ran)
	}
	var asked int
	for _, e := range f.rec.all() {
		if _, ok := e.(agent.ApprovalAsked); ok {
			asked++
		}
		if d, ok := e.(agent.ApprovalDecided); ok && !d.Asked {
			t.Fatalf("decision recorded as not asked: %+v", d)
		}
	}
	if asked != 2 {
		t.Fatalf("approval_asked %d times", asked)
	}
}

func TestInterruptKillsRunningToolAndCancelsTheRest(t *testing.T) {
	started := make(chan struct{})
	blocker := tools.Declaration{
		RawName: "block", Schema: json.RawMessage(`{"type":"object"}`), Policy: tools.Never, Effect: tools.EffectRead,
		Handler: tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result {
			close(started)
			<-ctx.Done()
			return tools.Refuse(tools.ToolCancelled, "killed")
		}),
	}
	f := newFixture(t, `{"responses":[{"tool_calls":[
		{"id":"1","name":"block","input":{}},
		{"id":"2","name":"echo","input":{"msg":"after"}}]},{"text":"never"}]}`, nil, blocker)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	done := make(chan agent.TurnDone)
	go func() { td, _ := f.session.Run(ctx, agent.MainLane, "go"); done <- td }()
	select {
	case td := <-done:
		if td.Stop != agent.StopInterrupted {
			t.Fatalf("stop %q", td.Stop)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("interrupt did not end the turn")
	}
	if len(*f.ran) != 0 {
		t.Fatalf("a call after the interrupt ran: %v", *f.ran)
	}
	res := f.rec.results()
	if len(res) != 2 || res[1].Refusal != tools.ToolCancelled {
		t.Fatalf("results %+v", res)
	}
	// Every call has a result, so the conversation stays well-formed.
	if pend := f.session.State().Unanswered(); len(pend) != 0 {
		t.Fatalf("unanswered %+v", pend)
	}
}

func TestMaxStepsEndsTheTurn(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"responses":[`)
	for i := 0; i < 5; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"tool_calls":[{"name":"echo","input":{"msg":"loop"}}]}`)
	}
	b.WriteString(`]}`)
	f := newFixture(t, b.String(), nil)
	s := agent.NewSession(agent.SessionConfig{Provider: f.prov, Toolset: f.session.Toolset(),
		Gate: approvals.NewGate(approvals.GateConfig{}), Sink: f.rec, MaxSteps: 3})
	td, _ := s.Run(context.Background(), agent.MainLane, "go")
	if td.Stop != agent.StopMaxSteps || len(*f.ran) != 3 {
		t.Fatalf("stop %q after %d calls", td.Stop, len(*f.ran))
	}
}

func TestNoticesBecomeEventsBeforeTheResult(t *testing.T) {
	plan := tools.Declaration{
		RawName: "plan", Schema: json.RawMessage(`{"type":"object"}`), Policy: tools.Never, Effect: tools.EffectIdempotentWrite,
		Handler: tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result {
			return tools.Ok{Payload: "ok", Notices: []tools.Notice{
				tools.PlanNotice{Steps: []tools.PlanStep{{Title: "read", Status: "done"}}},
				tools.DeskNotice{Page: "# notes"}}}
		}),
	}
	f := newFixture(t, `{"responses":[{"tool_calls":[{"id":"p","name":"plan","input":{}}]},{"text":"ok"}]}`, nil, plan)
	f.session.Run(context.Background(), agent.MainLane, "go")
	types := strings.Join(f.rec.types(), " ")
	if !strings.Contains(types, "tool_started plan desk tool_result") {
		t.Fatalf("order: %s", types)
	}
	ls, _ := f.session.State().Lane(agent.MainLane)
	if len(ls.Plan) != 1 || ls.Desk != "# notes" {
		t.Fatalf("state %+v", ls)
	}
}

func TestRestoreRebuildsHistoryAndAnswersCutCalls(t *testing.T) {
	f := newFixture(t, `{"responses":[{"text":"hi","tool_calls":[{"id":"a","name":"echo","input":{"msg":"x"}}]},{"text":"done"}]}`, nil)
	f.session.Run(context.Background(), agent.MainLane, "go")
	events := f.rec.all()
	// Encode/decode through the wire form, as the journal would.
	var replay []agent.Event
	for _, e := range events {
		b, err := agent.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		d, err := agent.DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		replay = append(replay, d)
	}
	g := newFixture(t, `{"responses":[]}`, nil)
	r := g.session.Restore(replay)
	if r.Interrupted != 0 {
		t.Fatalf("interrupted %d", r.Interrupted)
	}
	a, _ := json.Marshal(f.session.State().History(agent.MainLane))
	b, _ := json.Marshal(g.session.State().History(agent.MainLane))
	if string(a) != string(b) {
		t.Fatalf("history differs after restore:\n%s\n%s", a, b)
	}
	// Cut the journal right after the tool started: resume answers it.
	var cut []agent.Event
	for _, e := range replay {
		cut = append(cut, e)
		if _, ok := e.(agent.ToolStarted); ok {
			break
		}
	}
	h := newFixture(t, `{"responses":[]}`, nil)
	r = h.session.Restore(cut)
	if r.Interrupted != 1 {
		t.Fatalf("interrupted %d", r.Interrupted)
	}
	res := h.rec.results()
	if len(res) != 1 || res[0].Refusal != tools.ToolInterrupted || len(*h.ran) != 0 {
		t.Fatalf("results %+v ran %v", res, *h.ran)
	}
}

func TestEventWireRoundTrip(t *testing.T) {
	evs := []agent.Event{
		agent.UserMessage{Lane: "main", Text: "hi"},
		agent.ToolCall{Lane: "main", ID: "1", Tool: "x", Policy: tools.Required, Effect: tools.EffectRead, Input: json.RawMessage(`{"a":1}`)},
		agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "t", Status: "done"}}},
		agent.TurnDone{Lane: "main", Stop: "end_turn"},
	}
	for _, e := range evs {
		b, err := agent.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), `{"type":"`+e.Type()+`"`) {
			t.Fatalf("encoding %s", b)
		}
		d, err := agent.DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := agent.EncodeEvent(d)
		if string(b) != string(b2) {
			t.Fatalf("round trip %s != %s", b, b2)
		}
	}
	if _, err := agent.DecodeEvent([]byte(`{"type":"from_the_future"}`)); err == nil {
		t.Fatal("unknown type decoded")
	} else if _, ok := err.(agent.ErrUnknownEvent); !ok {
		t.Fatalf("want ErrUnknownEvent, got %T", err)
	}
}

func TestPointerOkKeepsItsNotices(t *testing.T) {
	desk := tools.Declaration{
		RawName: "desk", Schema: json.RawMessage(`{"type":"object"}`), Policy: tools.Never, Effect: tools.EffectIdempotentWrite,
		Handler: tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result {
			return &tools.Ok{Payload: "ok", Notices: []tools.Notice{tools.DeskNotice{Page: "p"}}}
		}),
	}
	f := newFixture(t, `{"responses":[{"tool_calls":[{"id":"d","name":"desk","input":{}}]},{"text":"ok"}]}`, nil, desk)
	f.session.Run(context.Background(), agent.MainLane, "go")
	if ls, _ := f.session.State().Lane(agent.MainLane); ls.Desk != "p" {
		t.Fatalf("desk %q", ls.Desk)
	}
	if r := f.rec.results(); len(r) != 1 || !r[0].OK {
		t.Fatalf("results %+v", r)
	}
}
