package wiretest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
)

// Loop is an agent session over a real provider client, with two tools:
// "guarded" (approval required) and "echo" (never asks). Both answer
// {"echo": msg}.
type Loop struct {
	Session *agent.Session
	mu      sync.Mutex
	events  []agent.Event
	ran     []string
	asked   []string
}

// NewLoop builds the session. verdict decides every approval.
func NewLoop(t testing.TB, p agent.Provider, verdict approvals.Verdict) *Loop {
	t.Helper()
	l := &Loop{}
	decl := func(name string, policy tools.ApprovalPolicy) tools.Declaration {
		return tools.Declaration{
			RawName: name, Description: "Echo a message.", Policy: policy, Effect: tools.EffectRead,
			Schema: json.RawMessage(`{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"],"additionalProperties":false}`),
			Handler: tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result {
				var a struct {
					Msg string `json:"msg"`
				}
				if err := c.Decode(&a); err != nil {
					return tools.Refuse(tools.ArgsInvalid, err.Error())
				}
				l.mu.Lock()
				l.ran = append(l.ran, name+":"+a.Msg)
				l.mu.Unlock()
				return tools.Ok{Payload: map[string]string{"echo": a.Msg}}
			}),
		}
	}
	ts, rep := tools.NewToolset([]tools.Declaration{decl("guarded", tools.Required), decl("echo", tools.Never)})
	if len(rep.Notes) != 0 {
		t.Fatalf("boot notes: %+v", rep.Notes)
	}
	approver := approvals.ApproverFunc(func(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
		l.mu.Lock()
		l.asked = append(l.asked, req.Descriptor.Name+":"+string(req.Args))
		l.mu.Unlock()
		return approvals.Decision{Verdict: verdict, Scope: approvals.ScopeOnce, Note: "not now"}, nil
	})
	l.Session = agent.NewSession(agent.SessionConfig{
		Provider: p, Toolset: ts, System: "You are staage.", MaxSteps: 5,
		Gate: approvals.NewGate(approvals.GateConfig{Approver: approver}),
		Sink: agent.SinkFunc(func(e agent.Event) {
			l.mu.Lock()
			l.events = append(l.events, e)
			l.mu.Unlock()
		}),
	})
	return l
}

// Events returns what the session published.
func (l *Loop) Events() []agent.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]agent.Event(nil), l.events...)
}

// Ran lists the handler runs, "tool:msg".
func (l *Loop) Ran() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ran...)
}

// Asked lists the approval requests, "tool:args".
func (l *Loop) Asked() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.asked...)
}

// Errors returns the Error events.
func (l *Loop) Errors() []agent.Error {
	var out []agent.Error
	for _, e := range l.Events() {
		if x, ok := e.(agent.Error); ok {
			out = append(out, x)
		}
	}
	return out
}

// Warnings returns the Warning events.
func (l *Loop) Warnings() []agent.Warning {
	var out []agent.Warning
	for _, e := range l.Events() {
		if x, ok := e.(agent.Warning); ok {
			out = append(out, x)
		}
	}
	return out
}
