package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"staage/agent/provider/wire/wiretest"
)

// toolStream is a response whose one call's arguments arrive in n
// fragments.
func toolStream(n int) string {
	var b strings.Builder
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"file_write","arguments":""}}]},"finish_reason":null}]}` + "\n\n")
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\""}}]},"finish_reason":null}]}` + "\n\n")
	for i := range n {
		q, _ := json.Marshal(fmt.Sprintf("line %d\\n", i))
		fmt.Fprintf(&b, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`+"\n\n", q)
	}
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"finish_reason":null}]}` + "\n\n")
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// BenchmarkStreamToolArguments measures one call whose arguments arrive in
// 2,000 fragments, through the SDK's decoder and our reassembly.
func BenchmarkStreamToolArguments(b *testing.B) {
	body := toolStream(2000)
	replies := make([]wiretest.Reply, b.N)
	for i := range replies {
		replies[i] = wiretest.SSE(body)
	}
	srv := wiretest.NewServer(b, replies...)
	p, err := New(Options{BaseURL: srv.URL, Model: "gpt-4.1", Retry: wiretest.Policy(new([]time.Duration))})
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
		if err != nil {
			b.Fatal(err)
		}
		if c := wiretest.Calls(evs); len(c) != 1 || !json.Valid([]byte(c[0].Args)) {
			b.Fatalf("calls = %+v", c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2000), "ns/fragment")
}
