package openai

import (
	"context"
	"encoding/json"
	"errors"
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

const testKey = "sk-proj-test-0123456789"

func newProvider(t *testing.T, srv *wiretest.Server, delays *[]time.Duration) *Provider {
	t.Helper()
	if delays == nil {
		delays = new([]time.Duration)
	}
	p, err := New(Options{APIKey: testKey, BaseURL: srv.URL + "/v1", Model: "gpt-4.1", MaxTokens: 4096, Retry: wiretest.Policy(delays)})
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
	if len(u) != 1 || u[0].Usage != (agent.Usage{InputTokens: 176, OutputTokens: 15, CacheReadTokens: 1024}) {
		t.Errorf("usage = %+v", u)
	}
	if last := evs[len(evs)-1]; last.Kind != agent.StreamStop || last.StopReason != "end_turn" {
		t.Errorf("last = %+v", last)
	}
	if h := srv.Headers()[0]; h.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("authorization = %q", h.Get("Authorization"))
	}
	if p := srv.Paths()[0]; p != "/v1/chat/completions" {
		t.Errorf("path = %s", p)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.Requests()[0], &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["model"] != "gpt-4.1" || body["max_completion_tokens"] != float64(4096) ||
		body["stream_options"].(map[string]any)["include_usage"] != true {
		t.Errorf("body = %s", srv.Requests()[0])
	}
	sys := body["messages"].([]any)[0].(map[string]any)
	if sys["role"] != "system" || sys["content"] != "You are staage." {
		t.Errorf("system = %v", sys)
	}
}

func TestCRLFLineEndings(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text_crlf.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil || wiretest.Text(evs) != "Hello, I read the workspace." {
		t.Errorf("text = %q, err = %v", wiretest.Text(evs), err)
	}
}

func TestDataLineOver64KiB(t *testing.T) {
	big := strings.Repeat("y", 70<<10)
	body := strings.Replace(wiretest.Fixture(t, "text.sse"), `"content":"Hello"`, `"content":"`+big+`"`, 1)
	srv := wiretest.NewServer(t, wiretest.SSE(body))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil || wiretest.Text(evs) != big+", I read the workspace." {
		t.Errorf("text length = %d, err = %v", len(wiretest.Text(evs)), err)
	}
}

func TestOneToolCall(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "tool.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("read"))
	if err != nil {
		t.Fatal(err)
	}
	calls := wiretest.Calls(evs)
	if len(calls) != 1 || calls[0].ID != "call_DdmO9pD3xa9XTPNJ32zg2hcA" || calls[0].Name != "file_read" || calls[0].Args != `{"path":"README.md"}` || !calls[0].Ended {
		t.Fatalf("calls = %+v", calls)
	}
	if last := evs[len(evs)-1]; last.StopReason != "tool_use" {
		t.Errorf("stop = %+v", last)
	}
}

func TestParallelCallsInterleavedByIndex(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "parallel.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("look"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, name, args string }{
		{"call_A", "file_find", `{"pattern":"**/*.go"}`},
		{"call_B", "file_search", `{"pattern":"func main","literal":true}`},
		{"call_C", "skill_list", `{}`},
	}
	calls := wiretest.Calls(evs)
	if len(calls) != 3 {
		t.Fatalf("calls = %+v", calls)
	}
	for i, w := range want {
		if c := calls[i]; c.ID != w.id || c.Name != w.name || c.Args != w.args || !c.Ended || c.Index != i {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
	}
}

func TestArgumentsInManyChunks(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "many_chunks.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("write"))
	if err != nil {
		t.Fatal(err)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Args != wiretest.Fixture(t, "many_chunks.args.json") {
		t.Fatalf("calls = %+v", c)
	}
}

func TestCutStreamLeavesCallsOpen(t *testing.T) {
	for _, fx := range []string{"cut.sse", "cut_before_done.sse"} {
		t.Run(fx, func(t *testing.T) {
			srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, fx)))
			evs, err := run(t, newProvider(t, srv, nil), userReq("read"))
			if f := fault(t, err); f.Kind != wire.FaultCut {
				t.Errorf("err = %v", err)
			}
			if c := wiretest.Calls(evs); len(c) != 1 || c[0].Ended {
				t.Errorf("calls = %+v", c)
			}
			if len(srv.Requests()) != 1 {
				t.Error("retried after output")
			}
		})
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	date := wiretest.Now().Add(5 * time.Second).Format(http.TimeFormat)
	rl := `{"error":{"message":"Rate limit reached for gpt-4.1 on tokens per min (TPM)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	cases := []struct {
		name   string
		header []string
		want   time.Duration
	}{
		{"seconds", []string{"Retry-After", "3"}, 3 * time.Second},
		{"http-date", []string{"Retry-After", date}, 5 * time.Second},
		{"milliseconds", []string{"Retry-After-Ms", "1500", "Retry-After", "9"}, 1500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var delays []time.Duration
			srv := wiretest.NewServer(t, wiretest.JSONError(429, rl, c.header...), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
			evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if len(delays) != 1 || delays[0] != c.want {
				t.Errorf("delays = %v, want %v", delays, c.want)
			}
			w := wiretest.Find(evs, agent.StreamWarning)
			if len(w) != 1 || !strings.HasPrefix(w[0].Message, "openai: rate limited (429 requests rate_limit_exceeded); retrying in ") {
				t.Errorf("warnings = %+v", w)
			}
		})
	}
}

func TestServerErrorsThenSuccess(t *testing.T) {
	var delays []time.Duration
	srv := wiretest.NewServer(t,
		wiretest.JSONError(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`),
		wiretest.JSONError(503, `{"error":{"message":"The engine is currently overloaded","type":"server_error","param":null,"code":null}}`),
		wiretest.SSE(wiretest.Fixture(t, "tool.sse")))
	evs, err := run(t, newProvider(t, srv, &delays), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wiretest.Calls(evs)) != 1 || len(wiretest.Find(evs, agent.StreamWarning)) != 2 {
		t.Errorf("events = %+v", evs)
	}
	if len(delays) != 2 || delays[0] != time.Second || delays[1] != 2*time.Second {
		t.Errorf("delays = %v", delays)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.JSONError(400, `{"error":{"message":"Invalid 'tools[0].function.name'","type":"invalid_request_error","param":"tools[0].function.name","code":"invalid_value"}}`))
	_, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultRequest || !strings.Contains(err.Error(), "Invalid 'tools[0].function.name'") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Error("the key is in the error")
	}
}

func TestMidStreamError(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "error_mid.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if wiretest.Text(evs) != "Working on" {
		t.Errorf("text = %q", wiretest.Text(evs))
	}
	if f := fault(t, err); f.Kind != wire.FaultStreamError || err.Error() != "openai: error in stream (server_error): The server had an error while processing your request. Sorry about that!" {
		t.Errorf("err = %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Error("retried after output")
	}
}

func TestEarlyStreamErrorIsRetried(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "error_early.sse")), wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.Contains(w[0].Message, "error in stream (server_error 502); retrying") {
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
	if w := wiretest.Find(evs, agent.StreamWarning); len(w) != 1 || !strings.HasPrefix(w[0].Message, "openai: stream idle timeout; retrying") {
		t.Errorf("warnings = %+v", w)
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
	if ev, err := s.Next(); err != nil || ev.Kind != agent.StreamToolStart {
		t.Fatalf("first = %+v, %v", ev, err)
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

func TestOllamaStyleServer(t *testing.T) {
	// A key in the environment must not travel to a keyless local server.
	t.Setenv("OPENAI_API_KEY", "sk-from-env-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "ollama_tool.sse")))
	p, err := New(Options{BaseURL: srv.URL + "/v1", Model: "qwen3:8b", Label: "ollama", LegacyMaxTokens: true, MaxTokens: 2048, Retry: wiretest.Policy(new([]time.Duration))})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "ollama/qwen3:8b" {
		t.Errorf("name = %s", p.Name())
	}
	evs, err := run(t, p, userReq("list docs"))
	if err != nil {
		t.Fatal(err)
	}
	if h := srv.Headers()[0]; h.Get("Authorization") != "" {
		t.Errorf("authorization sent to a keyless server: %q", h.Get("Authorization"))
	}
	if !strings.Contains(string(srv.Requests()[0]), `"max_tokens":2048`) {
		t.Errorf("body = %s", srv.Requests()[0])
	}
	th := wiretest.Find(evs, agent.StreamThinking)
	if len(th) != 1 || th[0].Text != "The user wants the file listed." {
		t.Errorf("thinking = %+v", th)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Args != `{"pattern":"*.md"}` || !c[0].Ended {
		t.Errorf("calls = %+v", c)
	}
	// The server said "stop" although it made a call: the loop must see
	// tool_use or it would never run the call.
	if last := evs[len(evs)-1]; last.StopReason != "tool_use" {
		t.Errorf("stop = %+v", last)
	}
	if u := wiretest.Find(evs, agent.StreamUsage); len(u) != 1 || u[0].Usage.InputTokens != 812 {
		t.Errorf("usage = %+v", u)
	}
}

func TestRequestMapsConversationAndCatalog(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "text.sse")))
	req := agent.Request{
		System: "sys",
		Tools: []tools.CatalogEntry{
			{Name: "file_read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		},
		Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "read two"},
			{Role: agent.RoleAssistant, Text: "Reading.", ToolCalls: []agent.ToolCallPart{
				{ID: "call_1", Name: "file_read", Input: json.RawMessage(`{"path":"a.go"}`)},
				{ID: "call_2", Name: "file_read", Input: json.RawMessage(`{"path":"b.go"}`)},
			}},
			{Role: agent.RoleTool, ToolResults: []agent.ToolResultPart{
				{CallID: "call_1", Name: "file_read", Content: `{"ok":true}`},
				{CallID: "call_2", Name: "file_read", Content: `{"refusal":"file.missing"}`, IsError: true},
			}},
		},
	}
	if _, err := run(t, newProvider(t, srv, nil), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0], &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "function" || body.Tools[0].Function.Name != "file_read" || body.Tools[0].Function.Parameters["required"].([]any)[0] != "path" {
		t.Errorf("tools = %+v", body.Tools)
	}
	if len(body.Messages) != 5 {
		t.Fatalf("messages = %v", body.Messages)
	}
	tc := body.Messages[2]["tool_calls"].([]any)
	if len(tc) != 2 || tc[1].(map[string]any)["function"].(map[string]any)["arguments"] != `{"path":"b.go"}` {
		t.Errorf("assistant = %v", body.Messages[2])
	}
	for i, id := range []string{"call_1", "call_2"} {
		m := body.Messages[3+i]
		if m["role"] != "tool" || m["tool_call_id"] != id {
			t.Errorf("tool message %d = %v", i, m)
		}
	}
}

func TestToolNamesFailClosed(t *testing.T) {
	srv := wiretest.NewServer(t)
	p := newProvider(t, srv, nil)
	req := userReq("x")
	req.Tools = []tools.CatalogEntry{{Name: "search.a"}}
	if _, err := p.Stream(context.Background(), req); err == nil {
		t.Error("an invalid name was accepted")
	}
}

func TestConnectionRefusedIsClearAndNotRetried(t *testing.T) {
	srv := wiretest.NewServer(t)
	url := srv.URL
	srv.Close() // nothing listens there any more
	var delays []time.Duration
	p, err := New(Options{BaseURL: url + "/v1", Model: "qwen3:8b", Label: "ollama", Retry: wiretest.Policy(&delays)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(t, p, userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultNetwork || !strings.Contains(err.Error(), "ollama: network error: connection refused (is the server running?)") {
		t.Errorf("err = %v", err)
	}
	if len(delays) != 0 {
		t.Errorf("retried a refused connection: %v", delays)
	}
}

func TestBareErrorObject(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(`data: {"object":"error","message":"This model's maximum context length is 32768 tokens.","type":"BadRequestError","param":null,"code":400}`+"\n\n"))
	_, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultStreamError || !strings.Contains(err.Error(), "maximum context length") || f.Retryable {
		t.Errorf("err = %v (retryable %v)", err, f.Retryable)
	}
}

func TestLengthInsideACallLeavesItOpen(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.SSE(wiretest.Fixture(t, "length_in_call.sse")))
	evs, err := run(t, newProvider(t, srv, nil), userReq("read"))
	if err != nil {
		t.Fatal(err)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Ended || c[0].Args != `{"path":"` {
		t.Errorf("calls = %+v", c[0])
	}
	if last := evs[len(evs)-1]; last.StopReason != "max_tokens" {
		t.Errorf("stop = %+v", last)
	}
}

func TestMalformedChunkIsAClearFault(t *testing.T) {
	body := strings.Replace(wiretest.Fixture(t, "tool.sse"), `"arguments":"README"}}]}`, `"arguments":"README"}}]`, 1)
	srv := wiretest.NewServer(t, wiretest.SSE(body))
	evs, err := run(t, newProvider(t, srv, nil), userReq("hi"))
	if f := fault(t, err); f.Kind != wire.FaultDecode {
		t.Errorf("err = %v", err)
	}
	if c := wiretest.Calls(evs); len(c) != 1 || c[0].Ended {
		t.Errorf("calls = %+v", c)
	}
}
