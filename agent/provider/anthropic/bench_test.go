package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/provider/wire/wiretest"
	"staage/tools"
)

// longStream is a recorded-shape response of n text deltas.
func longStream(n int) string {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_b\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2000}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

// BenchmarkStreamText measures one 2,000-delta response through the SDK's
// decoder and our mapping, over a loopback httptest server.
func BenchmarkStreamText(b *testing.B) {
	body := longStream(2000)
	replies := make([]wiretest.Reply, b.N)
	for i := range replies {
		replies[i] = wiretest.SSE(body)
	}
	srv := wiretest.NewServer(b, replies...)
	p, err := New(Options{BaseURL: srv.URL, Model: "claude-sonnet-4-5", Retry: wiretest.Policy(new([]time.Duration))})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s, err := p.Stream(context.Background(), userReq("hi"))
		if err != nil {
			b.Fatal(err)
		}
		evs, err := wiretest.Drain(b, s)
		if err != nil || len(evs) != 2002 {
			b.Fatalf("%d events, %v", len(evs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2000), "ns/delta")
}

// BenchmarkRequestParams measures mapping a 200-message conversation with
// a 17-tool catalog to the API's params and encoding them.
func BenchmarkRequestParams(b *testing.B) {
	req := agent.Request{System: strings.Repeat("system prompt ", 200)}
	for i := range 17 {
		req.Tools = append(req.Tools, tools.CatalogEntry{Name: fmt.Sprintf("tool_%d", i), Description: "A tool.",
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)})
	}
	for i := range 50 {
		id := fmt.Sprintf("toolu_%d", i)
		req.Messages = append(req.Messages,
			agent.Message{Role: agent.RoleUser, Text: "do the next thing"},
			agent.Message{Role: agent.RoleAssistant, Text: "Reading.", ToolCalls: []agent.ToolCallPart{{ID: id, Name: "tool_1", Input: json.RawMessage(`{"path":"a.go"}`)}}},
			agent.Message{Role: agent.RoleTool, ToolResults: []agent.ToolResultPart{{CallID: id, Name: "tool_1", Content: strings.Repeat(`{"line":"x"}`, 100)}}},
			agent.Message{Role: agent.RoleAssistant, Text: "Done with that."})
	}
	p, err := New(Options{Model: "claude-sonnet-4-5"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		params, err := p.params(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(params); err != nil {
			b.Fatal(err)
		}
	}
}
