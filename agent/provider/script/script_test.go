package script

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"staage/agent"
)

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"syntax":   {"{\n\"responses\": [\n{\"text\": \"a\",}\n]}", "line 3"},
		"type":     {"{\"responses\": [\n{\"text\": 5}]}", "line 2"},
		"eof":      {"{\"responses\": [\n", "unexpected end"},
		"unknown":  {`{"responses":[],"respones":[]}`, "unknown field"},
		"noname":   {`{"responses":[{"tool_calls":[{"id":"x"}]}]}`, "no tool name"},
		"trailing": {`{"responses":[]} {}`, "trailing"},
	}
	for name, c := range cases {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, c.want)
		}
	}
}

func drain(t *testing.T, s agent.Stream) ([]agent.StreamEvent, error) {
	t.Helper()
	var out []agent.StreamEvent
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestReplaysResponsesInOrderThenEnds(t *testing.T) {
	p, err := New([]byte(`{"name":"t","responses":[{"text":"hello world","tool_calls":[{"name":"file_read","input":{"path":"a.go"}}]},{"text":"bye"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "script/t" {
		t.Fatalf("name %q", p.Name())
	}
	st, _ := p.Stream(context.Background(), agent.Request{})
	evs, err := drain(t, st)
	if err != nil {
		t.Fatal(err)
	}
	var text, args strings.Builder
	var id, stop string
	for _, e := range evs {
		switch e.Kind {
		case agent.StreamText:
			text.WriteString(e.Text)
		case agent.StreamToolStart:
			id = e.ID
		case agent.StreamToolDelta:
			args.WriteString(e.ArgsDelta)
		case agent.StreamStop:
			stop = e.StopReason
		}
	}
	if text.String() != "hello world" || args.String() != `{"path":"a.go"}` || id != "r1c1" || stop != "tool_use" {
		t.Fatalf("text %q args %q id %q stop %q", text.String(), args.String(), id, stop)
	}
	p.Stream(context.Background(), agent.Request{})
	st, _ = p.Stream(context.Background(), agent.Request{})
	evs, _ = drain(t, st)
	if len(evs) != 1 || evs[0].StopReason != "end_turn" || p.Remaining() != 0 {
		t.Fatalf("exhausted script: %+v", evs)
	}
}

func TestCutAndCancel(t *testing.T) {
	p, _ := New([]byte(`{"responses":[{"text":"a b","cut":true},{"text":"slow words here","delay_ms":1000}]}`))
	st, _ := p.Stream(context.Background(), agent.Request{})
	if _, err := drain(t, st); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("cut stream ended cleanly: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, _ = p.Stream(ctx, agent.Request{})
	cancel()
	if _, err := drain(t, st); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
}
