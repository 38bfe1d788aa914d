package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"staage/agent"
	"staage/agent/provider/wire/wiretest"
	"staage/approvals"
)

// The loop over the real client: the call is gated, run, and its result
// goes back as a tool message on the next request.
func TestLoopGatesRunsAndReturnsTheResult(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "loop_call.sse")), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
	td, err := l.Session.Run(context.Background(), agent.MainLane, "say hi through the guarded tool")
	if err != nil || td.Stop != agent.StopEndTurn {
		t.Fatalf("turn = %+v, %v; errors %+v", td, err, l.Errors())
	}
	if a := l.Asked(); len(a) != 1 || a[0] != `guarded:{"msg":"hi"}` {
		t.Errorf("asked = %q", a)
	}
	if r := l.Ran(); len(r) != 1 || r[0] != "guarded:hi" {
		t.Errorf("ran = %q", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1], &body); err != nil {
		t.Fatal(err)
	}
	// system, user, assistant with the call, the tool's answer.
	if len(body.Messages) != 4 {
		t.Fatalf("messages = %s", reqs[1])
	}
	calls, _ := body.Messages[2]["tool_calls"].([]any)
	if body.Messages[2]["role"] != "assistant" || len(calls) != 1 || calls[0].(map[string]any)["id"] != "call_DdmO9pD3xa9XTPNJ32zg2hcA" {
		t.Errorf("assistant = %v", body.Messages[2])
	}
	tm := body.Messages[3]
	content, _ := tm["content"].(string)
	if tm["role"] != "tool" || tm["tool_call_id"] != "call_DdmO9pD3xa9XTPNJ32zg2hcA" || !strings.Contains(content, `"echo":"hi"`) {
		t.Errorf("tool message = %v", tm)
	}
}

func TestLoopCutStreamRunsNothing(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "cut_before_done.sse")))
	l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
	td, err := l.Session.Run(context.Background(), agent.MainLane, "read")
	if err != nil || td.Stop != agent.StopIncomplete {
		t.Fatalf("turn = %+v, %v", td, err)
	}
	if len(l.Ran()) != 0 || len(l.Asked()) != 0 {
		t.Errorf("ran %q asked %q", l.Ran(), l.Asked())
	}
	if e := l.Errors(); len(e) != 1 || !strings.Contains(e[0].Message, "ended without [DONE]") {
		t.Errorf("errors = %+v", e)
	}
}
