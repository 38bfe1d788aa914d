package app

import (
	"fmt"
	"testing"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
)

func TestSmokePrint(t *testing.T) {
	m, c := newTestModel(t, 100, 30)
	send(m, ev(agent.UserMessage{Lane: "main", Text: "fix the bug"}),
		ev(agent.TextDelta{Lane: "main", Text: "I will **read** the file."}),
		ev(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: "I will **read** the file."}}),
		ev(agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "read", Status: "done"}, {Title: "edit", Status: "in_progress"}, {Title: "test", Status: "pending"}}}),
		ev(agent.DeskChanged{Lane: "main", Page: "# Notes\n\n- the bug is in `add`"}),
		ev(agent.ToolCall{Lane: "main", ID: "c1", Tool: "file_read", Effect: tools.EffectRead, Digest: "sha256:0123456789abcdef0123", Input: raw(map[string]any{"path": "main.go"})}),
		ev(agent.ToolResult{Lane: "main", ID: "c1", OK: true, Payload: raw(map[string]any{"truncated": true, "content": "x"})}),
	)
	fmt.Println(screen(m))
	openReq(m, 1, approvals.Request{ID: "c2", Descriptor: descriptor("file_edit", tools.EffectReversible), Args: raw(map[string]any{"path": "main.go", "old": "a", "new": "b"}),
		Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "main.go", Op: tools.FileModify, Old: "package main\n\nfunc add(a, b int) int { return a - b }\n", New: "package main\n\nfunc add(a, b int) int { return a + b }\n"}}}})
	c.Add(modalGrace())
	fmt.Println(screen(m))
}
