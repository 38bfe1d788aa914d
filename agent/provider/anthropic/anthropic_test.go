package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"staage/agent"
	"staage/agent/provider/wire"
	"staage/agent/provider/wire/wiretest"
	"staage/tools"
)

const testKey = "sk-ant-test-0123456789"

func newProvider(t *testing.T, srv *wiretest.Server, delays *[]time.Duration) *Provider {
	t.Helper()
	if delays == nil {
		delays = new([]time.Duration)
	}
	p, err := New(Options{APIKey: testKey, BaseURL: srv.URL, Model: "claude-sonnet-4-5", MaxTokens: 4096, Retry: wiretest.Policy(delays)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userReq(text string) agent.Request {
	return agent.Request{System: "You are staage.", Messages: []agent.Message{{Role: agent.RoleUser, Text: text}}}
}

func run(t *testing.T, p *Provider, req agent.Request) ([]agent.StreamEvent, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return wiretest.Drain(t, s)
}

func fault(t *testing.T, err error) *wire.Fault {
	t.Helper()
	var f *wire.Fault
	if !errors.As(err, &f) {
		t.Fatalf("error %v (%T) is not a *wire.Fault", err, err)
	}
	return f
}

func TestTextOnly(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := wiretest.Text(evs); got != "Hello, I read the workspace." {
		t.Errorf("text = %q", got)
	}
	u := wiretest.Find(evs, agent.StreamUsage)
	if len(u) != 1 || u[0].Usage != (agent.Usage{InputTokens: 472, OutputTokens: 15, CacheReadTokens: 10240, CacheWriteTokens: 1854}) {
		t.Errorf("usage = %+v", u)
	}
	last := evs[len(evs)-1]
	if last.Kind != agent.StreamStop || last.StopReason != "end_turn" {
		t.Errorf("last event = %+v", last)
	}
	h := srv.Headers()[0]
	if h.Get("X-Api-Key") != testKey || h.Get("Authorization") != "" {
		t.Errorf("auth headers: x-api-key=%q authorization=%q", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
	if h.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	if p := srv.Paths()[0]; p != "/v1/messages" {
		t.Errorf("path = %s", p)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.Requests()[0], &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["model"] != "claude-sonnet-4-5" || body["max_tokens"] != float64(4096) {
		t.Errorf("body = %s", srv.Requests()[0])
	}
	sys := body["system"].([]any)[0].(map[string]any)
	if sys["text"] != "You are staage." || sys["cache_control"] == nil {
		t.Errorf("system block = %v (want the prompt with cache_control)", sys)
	}
}

func TestCRLFLineEndings(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text_crlf.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := wiretest.Text(evs); got != "Hello, I read the workspace." {
		t.Errorf("text = %q", got)
	}
}

func TestDataLineOver64KiB(t *testing.T) {
	big := strings.Repeat("x", 70<<10)
	body := strings.Replace(wiretest.Fixture(t, "text.sse"), `"text":"Hello"`, `"text":"`+big+`"`, 1)
	srv := wiretest.NewServer(t, wiretest.SSE(body))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := wiretest.Text(evs); got != big+", I read the workspace." {
		t.Errorf("text length = %d, want %d", len(got), len(big)+23)
	}
}

func TestOneToolCall(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "tool.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("read the readme"))
	if err != nil {
		t.Fatal(err)
	}
	calls := wiretest.Calls(evs)
	if len(calls) != 1 {
		t.Fatalf("calls = %v", calls)
	}
	c := calls[0]
	if c.ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || c.Name != "file_read" || c.Args != `{"path": "README.md"}` || !c.Ended {
		t.Errorf("call = %+v", c)
	}
	if got := wiretest.Text(evs); got != "Let me read the file." {
		t.Errorf("text = %q", got)
	}
	if last := evs[len(evs)-1]; last.StopReason != "tool_use" {
		t.Errorf("stop = %+v", last)
	}
}

func TestParallelToolCalls(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "parallel.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("look around"))
	if err != nil {
		t.Fatal(err)
	}
	calls := wiretest.Calls(evs)
	want := []struct{ id, name, args string }{
		{"toolu_01A", "file_find", `{"pattern": "**/*.go"}`},
		{"toolu_01B", "file_search", `{"pattern": "func main", "literal": true}`},
		{"toolu_01C", "skill_list", `{}`}, // no input_json_delta: empty object
	}
	if len(calls) != len(want) {
		t.Fatalf("calls = %d, want %d", len(calls), len(want))
	}
	for i, w := range want {
		c := calls[i]
		if c.ID != w.id || c.Name != w.name || c.Args != w.args || !c.Ended {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
	}
}

func TestArgumentsInManyChunks(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "many_chunks.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("write notes"))
	if err != nil {
		t.Fatal(err)
	}
	calls := wiretest.Calls(evs)
	if len(calls) != 1 || calls[0].Args != wiretest.Fixture(t, "many_chunks.args.json") {
		t.Fatalf("calls = %+v", calls)
	}
	if n := len(wiretest.Find(evs, agent.StreamToolDelta)); n < 50 {
		t.Errorf("only %d deltas: the fixture should split the arguments finely", n)
	}
}

func TestThinkingShownAndHandedBack(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "thinking.sse")), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	p := newProvider(t, srv, nil)
	evs, err := run(t, p, userReq("run the tests"))
	if err != nil {
		t.Fatal(err)
	}
	var thinking string
	var sigs []string
	for _, e := range wiretest.Find(evs, agent.StreamThinking) {
		thinking += e.Text
		if e.Signature != "" {
			sigs = append(sigs, e.Signature)
		}
	}
	if thinking != "The user wants the tests run. I should check the Makefile first." {
		t.Errorf("thinking = %q", thinking)
	}
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "EqQB") || sigs[1] != redactedPrefix+"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" {
		t.Errorf("signatures = %q", sigs)
	}
	// The next request hands both blocks back verbatim, before the text.
	req := userReq("run the tests")
	req.Messages = append(req.Messages,
		agent.Message{Role: agent.RoleAssistant, Text: "I will look at the Makefile.", Thinking: []agent.ThinkingBlock{
			{Text: "The user wants the tests run. I should check the Makefile first.", Signature: sigs[0]},
			{Signature: sigs[1]},
			{Text: "unsigned, cut"}, // cannot be handed back: dropped
		}},
		agent.Message{Role: agent.RoleUser, Text: "go on"})
	if _, err := run(t, p, req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[1], &body); err != nil {
		t.Fatal(err)
	}
	a := body.Messages[1]
	if a.Role != "assistant" || len(a.Content) != 3 {
		t.Fatalf("assistant message = %+v", a)
	}
	if a.Content[0]["type"] != "thinking" || a.Content[0]["signature"] != sigs[0] || a.Content[0]["thinking"] != thinking {
		t.Errorf("thinking block = %v", a.Content[0])
	}
	if a.Content[1]["type"] != "redacted_thinking" || a.Content[1]["data"] != strings.TrimPrefix(sigs[1], redactedPrefix) {
		t.Errorf("redacted block = %v", a.Content[1])
	}
	if a.Content[2]["type"] != "text" {
		t.Errorf("text block = %v", a.Content[2])
	}
}

func TestThinkingConfig(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	p, err := New(Options{BaseURL: srv.URL, Model: "claude-sonnet-4-5", MaxTokens: 16000, ThinkingBudget: 4000, Retry: wiretest.Policy(new([]time.Duration))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, p, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(srv.Requests()[0]), `"thinking":{"budget_tokens":4000,"type":"enabled"}`) {
		t.Errorf("body = %s", srv.Requests()[0])
	}
	if _, err := New(Options{Model: "m", MaxTokens: 1000, ThinkingBudget: 1000}); err == nil {
		t.Error("a budget not below max tokens was accepted")
	}
}

func TestRequestMapsConversationAndCatalog(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	req := agent.Request{
		System: "sys",
		Tools: []tools.CatalogEntry{
			{Name: "file_read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "mcp__search-docs", Description: "Search.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		},
		Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "read two files"},
			{Role: agent.RoleAssistant, Text: "Reading.", ToolCalls: []agent.ToolCallPart{
				{ID: "toolu_1", Name: "file_read", Input: json.RawMessage(`{"path":"a.go"}`)},
				{ID: "toolu_2", Name: "file_read", Input: json.RawMessage(`{"path":"b.go"}`)},
			}},
			{Role: agent.RoleTool, ToolResults: []agent.ToolResultPart{
				{CallID: "toolu_1", Name: "file_read", Content: `{"ok":true}`},
				{CallID: "toolu_2", Name: "file_read", Content: `{"refusal":"file.missing"}`, IsError: true},
			}},
		},
	}
	if _, err := run(t, newProvider(t, srv, nil), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools []struct {
			Name         string         `json:"name"`
			Description  string         `json:"description"`
			InputSchema  map[string]any `json:"input_schema"`
			CacheControl map[string]any `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0], &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 || body.Tools[0].Name != "file_read" || body.Tools[1].Name != "mcp__search-docs" {
		t.Fatalf("tools = %+v", body.Tools)
	}
	if s := body.Tools[0].InputSchema; s["type"] != "object" || s["additionalProperties"] != false || s["required"].([]any)[0] != "path" {
		t.Errorf("schema = %v", s)
	}
	if body.Tools[0].CacheControl != nil || body.Tools[1].CacheControl["type"] != "ephemeral" {
		t.Errorf("cache_control must mark the last tool only: %+v", body.Tools)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("messages = %+v", body.Messages)
	}
	as := body.Messages[1]
	if as.Role != "assistant" || as.Content[1]["type"] != "tool_use" || as.Content[1]["id"] != "toolu_1" || as.Content[2]["input"].(map[string]any)["path"] != "b.go" {
		t.Errorf("assistant = %+v", as)
	}
	tr := body.Messages[2]
	if tr.Role != "user" || len(tr.Content) != 2 || tr.Content[0]["type"] != "tool_result" || tr.Content[0]["tool_use_id"] != "toolu_1" ||
		tr.Content[1]["tool_use_id"] != "toolu_2" || tr.Content[1]["is_error"] != true {
		t.Errorf("tool results = %+v", tr)
	}
}

func TestToolNamesFailClosed(t *testing.T) {
	srv := wiretest.NewServer(t)
	p := newProvider(t, srv, nil)
	for _, name := range []string{"search a", "", "a.b", strings.Repeat("x", 65)} {
		req := userReq("x")
		req.Tools = []tools.CatalogEntry{{Name: name}}
		if _, err := p.Stream(context.Background(), req); err == nil {
			t.Errorf("name %q was accepted", name)
		}
	}
	req := userReq("x")
	req.Tools = []tools.CatalogEntry{{Name: "a"}, {Name: "a"}}
	if _, err := p.Stream(context.Background(), req); err == nil {
		t.Error("a duplicate name was accepted")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests went out with a bad catalog", n)
	}
}

// The registry's normalization is where search-a and search_a meet: both
// fail closed there, and neither reaches the wire.
func TestCollidingNamesNeverReachTheWire(t *testing.T) {
	h := tools.HandlerFunc(func(context.Context, tools.Call) tools.Result { return tools.Ok{} })
	ts, rep := tools.NewToolset([]tools.Declaration{
		{Origin: "alpha", RawName: "search-a", Policy: tools.Never, Effect: tools.EffectRead, Handler: h},
		{Origin: "alpha", RawName: "search_a", Policy: tools.Never, Effect: tools.EffectRead, Handler: h},
		{RawName: "file_read", Policy: tools.Required, Effect: tools.EffectRead, Handler: h},
	})
	if !rep.Has(tools.NoteCollision) {
		t.Fatalf("no collision reported: %+v", rep)
	}
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	req := userReq("x")
	req.Tools = ts.Catalog()
	if _, err := run(t, newProvider(t, srv, nil), req); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0])
	if strings.Contains(body, "search") || !strings.Contains(body, `"name":"file_read"`) {
		t.Errorf("body = %s", body)
	}
}

func TestCutStreamRunsNoPartialCall(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "cut.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("edit"))
	f := fault(t, err)
	if f.Kind != wire.FaultCut || !strings.Contains(err.Error(), "stream cut before its end") {
		t.Errorf("fault = %v", err)
	}
	calls := wiretest.Calls(evs)
	if len(calls) != 1 || calls[0].Ended {
		t.Errorf("the cut call must be left open (never ended): %+v", calls)
	}
	if len(srv.Requests()) != 1 {
		t.Error("a stream that emitted output was retried")
	}
	// The input was billed although the answer was cut: its usage is told.
	if u := wiretest.Find(evs, agent.StreamUsage); len(u) != 1 || u[0].Usage.InputTokens != 300 {
		t.Errorf("usage = %+v", u)
	}
}

func TestBlankTextIsNotSent(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	req := userReq("go")
	req.Messages = append(req.Messages,
		agent.Message{Role: agent.RoleAssistant, Text: "\n\n", ToolCalls: []agent.ToolCallPart{{ID: "toolu_1", Name: "plan", Input: nil}}},
		agent.Message{Role: agent.RoleTool, ToolResults: []agent.ToolResultPart{{CallID: "toolu_1", Name: "plan", Content: ""}}},
		agent.Message{Role: agent.RoleUser, Text: "  "})
	if _, err := run(t, newProvider(t, srv, nil), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0], &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || len(body.Messages[1].Content) != 1 || body.Messages[1].Content[0]["type"] != "tool_use" {
		t.Fatalf("messages = %s", srv.Requests()[0])
	}
	if in := body.Messages[1].Content[0]["input"]; fmt.Sprint(in) != "map[]" {
		t.Errorf("a call without input must send {}: %v", in)
	}
	res := body.Messages[2].Content
	if len(res) != 1 || res[0]["type"] != "tool_result" || !strings.Contains(fmt.Sprint(res[0]["content"]), "(no output)") {
		t.Errorf("tool result = %v", res)
	}
}

func TestRateLimitRetryAfterSeconds(t *testing.T) {
	var delays []time.Duration
	srv := wiretest.NewServer(t,
		wiretest.JSONError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, "Retry-After", "2"),
		wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	w := wiretest.Find(evs, agent.StreamWarning)
	if len(w) != 1 || w[0].Message != "anthropic: rate limited (429 rate_limit_error); retrying in 2s (attempt 2 of 4)" {
		t.Errorf("warnings = %+v", w)
	}
	if len(delays) != 1 || delays[0] != 2*time.Second {
		t.Errorf("delays = %v", delays)
	}
	if wiretest.Text(evs) != "Hello, I read the workspace." {
		t.Error("no text after the retry")
	}
}

func TestRateLimitRetryAfterHTTPDate(t *testing.T) {
	var delays []time.Duration
	date := wiretest.Now().Add(7 * time.Second).Format(http.TimeFormat)
	srv := wiretest.NewServer(t,
		wiretest.JSONError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", date),
		wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	if _, err := run(t, newProvider(t, srv, &delays), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if len(delays) != 1 || delays[0] != 7*time.Second {
		t.Errorf("delays = %v", delays)
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	var delays []time.Duration
	srv := wiretest.NewServer(t,
		wiretest.JSONError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", "3600"),
		wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(delays) != 1 || delays[0] != time.Minute {
		t.Errorf("delays = %v", delays)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.Contains(w[0].Message, "asked to wait 1h0m0s, capped") {
		t.Errorf("warnings = %+v", w)
	}
}

func TestOverloaded529(t *testing.T) {
	var delays []time.Duration
	srv := wiretest.NewServer(t,
		wiretest.JSONError(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || w[0].Message != "anthropic: overloaded (529 overloaded_error); retrying in 1s (attempt 2 of 4)" {
		t.Errorf("warnings = %+v", w)
	}
	if len(delays) != 1 || delays[0] != time.Second {
		t.Errorf("delays = %v (want the backoff base)", delays)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	var delays []time.Duration
	srv := wiretest.NewServer(t,
		wiretest.JSONError(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
		wiretest.SSE(wiretest.Fixture(t, "tool.sse")))
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wiretest.Calls(evs)) != 1 || len(srv.Requests()) != 2 {
		t.Errorf("calls=%d requests=%d", len(wiretest.Calls(evs)), len(srv.Requests()))
	}
}

func TestRetriesExhausted(t *testing.T) {
	var delays []time.Duration
	e := wiretest.JSONError(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
	srv := wiretest.NewServer(t, e, e, e, e)
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	f := fault(t, err)
	if f.Kind != wire.FaultServer || err.Error() != "anthropic: server error (500 api_error): Internal server error" {
		t.Errorf("err = %v", err)
	}
	if len(wiretest.Find(evs, agent.StreamWarning)) != 3 || len(srv.Requests()) != 4 {
		t.Errorf("warnings=%d requests=%d", len(evs), len(srv.Requests()))
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; len(delays) != 3 || delays[0] != want[0] || delays[1] != want[1] || delays[2] != want[2] {
		t.Errorf("delays = %v, want %v", delays, want)
	}
}

func TestAuthErrorIsNotRetriedAndHidesTheKey(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.JSONError(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
	_, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	f := fault(t, err)
	if f.Kind != wire.FaultAuth || err.Error() != "anthropic: authentication failed (401 authentication_error): invalid x-api-key" {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), testKey) || len(srv.Requests()) != 1 {
		t.Errorf("err = %v, requests = %d", err, len(srv.Requests()))
	}
}

func TestMidStreamErrorAfterOutput(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "error_mid.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if wiretest.Text(evs) != "Working on" {
		t.Errorf("text = %q", wiretest.Text(evs))
	}
	f := fault(t, err)
	if f.Kind != wire.FaultOverloaded || err.Error() != "anthropic: overloaded (overloaded_error): Overloaded" {
		t.Errorf("err = %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Error("retried after output")
	}
}

func TestMidStreamErrorBeforeOutputIsRetried(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "error_early.sse")), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.Contains(w[0].Message, "overloaded (overloaded_error); retrying") {
		t.Errorf("warnings = %+v", w)
	}
}

func TestHeadersThenSilence(t *testing.T) {
	silent := wiretest.SSE("")
	silent.Hang = true
	srv := wiretest.NewServer(t, silent, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.HasPrefix(w[0].Message, "anthropic: stream idle timeout; retrying in 1s") {
		t.Errorf("warnings = %+v", w)
	}
}

func TestNoHeadersTimesOut(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{NoHeaders: true}, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.Contains(w[0].Message, "idle timeout") {
		t.Errorf("warnings = %+v", w)
	}
}

func TestSilenceAfterOutputCutsTheTurn(t *testing.T) {
	part := wiretest.SSE(wiretest.Fixture(t, "cut.sse"))
	part.Hang = true
	srv := wiretest.NewServer(t, part)
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultIdle {
		t.Errorf("err = %v", err)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Ended {
		t.Errorf("calls = %+v", c)
	}
}

func TestPingsHoldASlowStreamOpen(t *testing.T) {
	// Pings every 100ms for 1.2s: more than twice the idle timeout in all,
	// never silent for longer than a fifth of it.
	pings := strings.Repeat("event: ping\ndata: {\"type\": \"ping\"}\n\n", 1)
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: "", Hang: false})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range 12 {
			_, _ = w.Write([]byte(pings))
			f.Flush()
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = w.Write([]byte(wiretest.Fixture(t, "text.sse")))
	})
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wiretest.Find(evs, agent.StreamWarning)) != 0 || wiretest.Text(evs) == "" {
		t.Errorf("events = %+v", evs)
	}
}

func TestCancelClosesTheBodyWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	part := wiretest.SSE(wiretest.Fixture(t, "cut.sse"))
	part.Hang = true
	srv := wiretest.NewServer(t, part)
	tr := &http.Transport{}
	p, err := New(Options{BaseURL: srv.URL, Model: "m", HTTPClient: &http.Client{Transport: tr}, Retry: wire.Policy{IdleTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Next(); err != nil || ev.Kind != agent.StreamText {
		t.Fatalf("first event = %+v, %v", ev, err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := s.Next(); err != nil {
				done <- err
				return
			}
		}
	}()
	cancel()
	select {
	case err := <-done:
		if f := fault(t, err); f.Kind != wire.FaultCanceled {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not return after cancel")
	}
	_ = s.Close()
	srv.Close()
	tr.CloseIdleConnections()
}

func TestMaxTokensInsideACallLeavesItOpen(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "max_tokens_in_call.sse")), wiretest.SSE(wiretest.Fixture(t, "parallel.sse")))
	p := newProvider(t, srv, nil)
	evs, err := run(t, p, userReq("read"))
	if err != nil {
		t.Fatal(err)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Ended || c[0].Args != `{"path": "READ` {
		t.Errorf("calls = %+v", c[0])
	}
	if last := evs[len(evs)-1]; last.StopReason != "max_tokens" {
		t.Errorf("stop = %+v", last)
	}
	// Held ends are released as the next block starts: every complete call
	// of a normal response ends.
	evs, err = run(t, p, userReq("look"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range wiretest.Calls(evs) {
		if !c.Ended {
			t.Errorf("call %s not ended", c.ID)
		}
	}
}

func TestMalformedEventIsAClearFault(t *testing.T) {
	body := strings.Replace(wiretest.Fixture(t, "text.sse"), `{"type":"content_block_stop","index":0}`, `{"type":"content_block_stop","index":0`, 1)
	srv := wiretest.NewServer(t, wiretest.SSE(body))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultDecode || !f.StreamCut() {
		t.Errorf("err = %v", err)
	}
	if wiretest.Text(evs) != "Hello, I read the workspace." {
		t.Errorf("text = %q", wiretest.Text(evs))
	}
}
