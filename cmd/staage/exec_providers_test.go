package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/agent/provider/wire/wiretest"
)

// Anthropic's wire: one tool_use block whose JSON arrives in fragments.
func anthropicToolSSE(id, name string, argFragments ...string) string {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"input\":{}}}\n\n")
	for _, f := range argFragments {
		q, _ := json.Marshal(f)
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + string(q) + "}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":20}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

// OpenAI's wire: chat.completion.chunk lines, arguments in fragments.
func openaiToolSSE(id, name string, argFragments ...string) string {
	chunk := func(delta string, finish string) string {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + "}]}\n\n"
	}
	var b strings.Builder
	b.WriteString(chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, ""))
	for _, f := range argFragments {
		q, _ := json.Marshal(f)
		b.WriteString(chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(q)+`}}]}`, ""))
	}
	b.WriteString(chunk(`{}`, "tool_calls"))
	b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func openaiTextSSE(text string) string {
	q, _ := json.Marshal(text)
	return `data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":` + string(q) + `},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
}

// TestExecThroughRealProviders runs multi-step turns through both
// providers' real SDK clients against fake servers: a tool call is gated,
// run, and its result goes back in the provider's own format.
func TestExecThroughRealProviders(t *testing.T) {
	const secret = "sk-test-DO-NOT-PRINT-4242"
	cases := []struct {
		name, model, keyEnv, baseSuffix string
		replies                         []wiretest.Reply
		resultMarker                    string
	}{
		{
			name: "anthropic", model: "anthropic/claude-test", keyEnv: "ANTHROPIC_API_KEY",
			replies: []wiretest.Reply{
				wiretest.SSE(anthropicToolSSE("toolu_1", "file_read", `{"pa`, `th": "main`, `.go"}`)),
				wiretest.SSE(anthropicToolSSE("toolu_2", "plan", `{"steps":[{"title":"read","status":"done"}]}`)),
				wiretest.SSE(readFixture(t, "../../agent/provider/anthropic/testdata/text.sse")),
			},
			resultMarker: `"tool_use_id":"toolu_1"`,
		},
		{
			name: "openai", model: "openai/gpt-test", keyEnv: "OPENAI_API_KEY", baseSuffix: "/v1",
			replies: []wiretest.Reply{
				wiretest.SSE(openaiToolSSE("call_1", "file_read", `{"pa`, `th": "main`, `.go"}`)),
				wiretest.SSE(openaiToolSSE("call_2", "plan", `{"steps":[{"title":"read","status":"done"}]}`)),
				wiretest.SSE(openaiTextSSE("Read it.")),
			},
			resultMarker: `"tool_call_id":"call_1"`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := wiretest.NewServer(t, c.replies...)
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "main.go"), []byte(sampleGo), 0o644)
			env := append(testEnv(t), c.keyEnv+"="+secret)
			out, stderr, code := runStaage(t, env, "exec", "--workspace", ws, "--model", c.model,
				"--base-url", srv.URL+c.baseSuffix, "--json", "--auto", "read", "--sandbox", "off", "read main.go")
			if code != 0 {
				t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, out)
			}
			evs := events(t, out)
			var calls, results, done int
			for _, e := range evs {
				switch e["type"] {
				case "tool_call":
					calls++
				case "tool_result":
					if e["ok"] != true {
						t.Errorf("refused: %v", e)
					}
					results++
				case "turn_done":
					done++
					if e["stop"] != "end_turn" {
						t.Errorf("stop %v", e["stop"])
					}
				}
			}
			if calls != 2 || results != 2 || done != 1 {
				t.Fatalf("calls %d results %d turn_done %d", calls, results, done)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			second := string(reqs[1])
			if !strings.Contains(second, c.resultMarker) || !strings.Contains(second, digestOf(sampleGo)) {
				t.Fatalf("the file_read result did not go back in %s's format:\n%s", c.name, second)
			}
			if !strings.Contains(string(reqs[0]), `"file_edit"`) {
				t.Fatalf("the catalog was not sent: %s", reqs[0])
			}
			if strings.Contains(out+stderr, secret) {
				t.Fatal("the API key reached the output")
			}
			journals, _ := filepath.Glob(filepath.Join(envValue(env, "XDG_STATE_HOME"), "staage", "sessions", "*.jsonl"))
			if len(journals) != 1 {
				t.Fatalf("journals: %v", journals)
			}
			if b, _ := os.ReadFile(journals[0]); strings.Contains(string(b), secret) || len(b) == 0 {
				t.Fatalf("journal empty or holds the key")
			}
		})
	}
}

func readFixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
