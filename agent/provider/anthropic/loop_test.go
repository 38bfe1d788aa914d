package anthropic

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
// goes back as a tool_result block on the next request.
func TestLoopGatesRunsAndReturnsTheResult(t *testing.T) {
	cases := []struct {
		verdict  approvals.Verdict
		ran      int
		isError  bool
		contains string
	}{
		{approvals.Approve, 1, false, `"echo":"hi"`},
		{approvals.Deny, 0, true, `approval.denied`},
	}
	for _, c := range cases {
		t.Run(string(c.verdict), func(t *testing.T) {
			srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "loop_call.sse")), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
			l := wiretest.NewLoop(t, newProvider(t, srv, nil), c.verdict)
			td, err := l.Session.Run(context.Background(), agent.MainLane, "say hi through the guarded tool")
			if err != nil || td.Stop != agent.StopEndTurn {
				t.Fatalf("turn = %+v, %v; errors %+v", td, err, l.Errors())
			}
			if a := l.Asked(); len(a) != 1 || a[0] != `guarded:{"msg":"hi"}` {
				t.Errorf("asked = %q", a)
			}
			if len(l.Ran()) != c.ran {
				t.Errorf("ran = %q", l.Ran())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			var body struct {
				Tools    []struct{ Name string } `json:"tools"`
				Messages []struct {
					Role    string           `json:"role"`
					Content []map[string]any `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(reqs[1], &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Tools) != 2 || body.Tools[0].Name != "echo" || body.Tools[1].Name != "guarded" {
				t.Errorf("tools = %+v", body.Tools)
			}
			if len(body.Messages) != 3 {
				t.Fatalf("messages = %s", reqs[1])
			}
			use := body.Messages[1].Content[len(body.Messages[1].Content)-1]
			if body.Messages[1].Role != "assistant" || use["type"] != "tool_use" || use["id"] != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || use["name"] != "guarded" {
				t.Errorf("assistant = %+v", body.Messages[1])
			}
			res := body.Messages[2].Content[0]
			text, _ := json.Marshal(res["content"])
			if body.Messages[2].Role != "user" || res["type"] != "tool_result" || res["tool_use_id"] != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" ||
				(res["is_error"] == true) != c.isError || !strings.Contains(string(text), strings.ReplaceAll(c.contains, `"`, `\"`)) {
				t.Errorf("tool result = %+v", res)
			}
		})
	}
}

// Faults reach the operator as events, never as a crash.
func TestLoopFaultsAreEvents(t *testing.T) {
	t.Run("cut stream", func(t *testing.T) {
		srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "cut.sse")))
		l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
		td, err := l.Session.Run(context.Background(), agent.MainLane, "edit")
		if err != nil || td.Stop != agent.StopIncomplete {
			t.Fatalf("turn = %+v, %v", td, err)
		}
		if len(l.Ran()) != 0 || len(l.Asked()) != 0 {
			t.Errorf("a partial call went on: ran %q asked %q", l.Ran(), l.Asked())
		}
		if e := l.Errors(); len(e) != 1 || !strings.Contains(e[0].Message, "stream cut before its end") {
			t.Errorf("errors = %+v", e)
		}
	})
	t.Run("max_tokens inside a call", func(t *testing.T) {
		srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "max_tokens_in_call.sse")))
		l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
		td, err := l.Session.Run(context.Background(), agent.MainLane, "read")
		if err != nil || td.Stop != agent.StopIncomplete {
			t.Fatalf("turn = %+v, %v", td, err)
		}
		if len(l.Ran()) != 0 || len(l.Asked()) != 0 {
			t.Errorf("a cut call went on: ran %q asked %q", l.Ran(), l.Asked())
		}
		if e := l.Errors(); len(e) != 1 || !strings.Contains(e[0].Message, "inside a tool call") {
			t.Errorf("errors = %+v", e)
		}
	})
	t.Run("429 then success", func(t *testing.T) {
		srv := wiretest.NewServer(t,
			wiretest.JSONError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", "2"),
			wiretest.SSE(wiretest.Fixture(t, "text.sse")))
		l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
		td, err := l.Session.Run(context.Background(), agent.MainLane, "hi")
		if err != nil || td.Stop != agent.StopEndTurn {
			t.Fatalf("turn = %+v, %v", td, err)
		}
		if w := l.Warnings(); len(w) != 1 || !strings.Contains(w[0].Message, "rate limited (429 rate_limit_error); retrying in 2s") {
			t.Errorf("warnings = %+v", w)
		}
	})
	t.Run("mid-stream error", func(t *testing.T) {
		srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "error_mid.sse")))
		l := wiretest.NewLoop(t, newProvider(t, srv, nil), approvals.Approve)
		td, _ := l.Session.Run(context.Background(), agent.MainLane, "hi")
		if td.Stop != agent.StopIncomplete {
			t.Errorf("stop = %s", td.Stop)
		}
		if e := l.Errors(); len(e) != 1 || !strings.Contains(e[0].Message, "overloaded (overloaded_error): Overloaded") {
			t.Errorf("errors = %+v", e)
		}
	})
}
