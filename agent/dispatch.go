package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"staage/approvals"
	"staage/tools"
)

// dispatch binds one call to a tool, validates it, gates it, runs it and
// publishes every step. Whatever goes wrong becomes a typed refusal the model
// reads; nothing here panics on the model's input.
func (s *Session) dispatch(ctx context.Context, t Turn, gate *approvals.Gate, full, offered *tools.Toolset, c ToolCallPart) {
	tool, ok := offered.Lookup(c.Name)
	if !ok {
		s.publish(ToolCall{Lane: t.Lane, ID: c.ID, Tool: c.Name, Input: inputJSON(c.Input)})
		if _, declared := full.Lookup(c.Name); declared {
			s.publishResult(t.Lane, c.ID, c.Name, tools.Refuse(tools.ToolOffProfile,
				fmt.Sprintf("%s is not offered in this turn", c.Name)))
			return
		}
		s.publishResult(t.Lane, c.ID, c.Name, tools.Refuse(tools.ToolUnknown,
			fmt.Sprintf("there is no tool named %q; the tools offered are: %s", c.Name, strings.Join(offered.Names(), ", "))))
		return
	}
	d := tool.Descriptor
	call, ref := tool.Bind(c.ID, t.Lane, c.Input)
	input := call.Args
	if ref != nil {
		input = inputJSON(c.Input)
	}
	s.publish(ToolCall{Lane: t.Lane, ID: c.ID, Tool: d.Name, Origin: d.Origin, Policy: d.Policy,
		Effect: d.Effect, Digest: d.Digest.String(), Input: input})
	if ref != nil {
		s.publishResult(t.Lane, c.ID, d.Name, ref)
		return
	}
	out := gate.Check(ctx, approvals.Pending{
		Tool: tool, Call: call, Child: t.Child, Sandbox: s.cfg.Sandbox,
		OnAsk: func(req approvals.Request) {
			s.publish(ApprovalAsked{Lane: t.Lane, ID: c.ID, Tool: d.Name, Preview: req.Preview})
		},
	})
	decided := ApprovalDecided{Lane: t.Lane, ID: c.ID, Tool: d.Name, Digest: d.Digest.String(),
		Decision: string(approvals.Deny), Scope: string(out.Scope), Prefix: out.Prefix, Note: out.Note, Asked: out.Asked}
	if out.Approved {
		decided.Decision = string(approvals.Approve)
	}
	if out.Edited {
		decided.Edited, decided.Input = true, out.Call.Args
	}
	s.publish(decided)
	if !out.Approved {
		s.publishResult(t.Lane, c.ID, d.Name, out.Refusal)
		return
	}
	s.publish(ToolStarted{Lane: t.Lane, ID: c.ID, Tool: d.Name})
	res := runHandler(ctx, tool, out.Call)
	if p, isPtr := res.(*tools.Ok); isPtr && p != nil {
		res = *p
	}
	if okRes, isOk := res.(tools.Ok); isOk {
		for _, n := range okRes.Notices {
			switch n := n.(type) {
			case tools.PlanNotice:
				s.publish(PlanChanged{Lane: t.Lane, Steps: n.Steps})
			case tools.DeskNotice:
				s.publish(DeskChanged{Lane: t.Lane, Page: n.Page})
			}
		}
		if out.Edited {
			okRes.Payload = editedPayload{Edited: true, Note: "the operator edited the arguments before approving; this is the result of the edited call", Input: out.Call.Args, Result: okRes.Payload}
			res = okRes
		}
	}
	if out.Note != "" {
		if okRes, isOk := res.(tools.Ok); isOk {
			okRes.Payload = notedPayload{OperatorNote: out.Note, Result: okRes.Payload}
			res = okRes
		}
	}
	s.publishResult(t.Lane, c.ID, d.Name, res)
}

type editedPayload struct {
	Edited bool            `json:"edited"`
	Note   string          `json:"note"`
	Input  json.RawMessage `json:"input"`
	Result any             `json:"result"`
}

type notedPayload struct {
	OperatorNote string `json:"operatorNote"`
	Result       any    `json:"result"`
}

// runHandler runs a handler and turns a panic into tool.failed: one broken
// tool must not take the console down.
func runHandler(ctx context.Context, tool *tools.Tool, call tools.Call) (res tools.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = tools.Refuse(tools.ToolFailed, fmt.Sprintf("%s failed: %v", tool.Name, p))
		}
	}()
	res = tool.Handler().Run(ctx, call)
	if res == nil {
		return tools.Refuse(tools.ToolFailed, tool.Name+" returned no result")
	}
	return res
}

func (s *Session) publishResult(lane, id, name string, r tools.Result) {
	w := tools.ToWire(r)
	s.publish(ToolResult{Lane: lane, ID: id, Tool: name, OK: w.OK, Payload: w.Payload,
		Refusal: w.Refusal, Message: w.Message, Details: w.Details})
}

// inputJSON keeps the model's raw arguments as a JSON value for the record:
// valid JSON as it is, anything else as a JSON string.
func inputJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
