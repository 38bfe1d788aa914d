package app

import (
	"fmt"
	"math/rand"
	"os"
	"testing"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
	"staage/ui/modal"
)

// TestRandomTrafficKeepsTheFrame throws a seeded mix of events, approval
// requests and withdrawals, keys, wheel turns, clicks and resizes at the
// console, and checks after each that it has not panicked and that the
// frame is exactly the terminal's size. STAAGE_CHAOS_SEED=n tries another
// seed (seeds 1–28 pass).
func TestRandomTrafficKeepsTheFrame(t *testing.T) {
	seed := int64(7)
	if s := os.Getenv("STAAGE_CHAOS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	rng := rand.New(rand.NewSource(seed))
	m, c := newTestModel(t, 100, 30)
	w, h := 100, 30
	lanes := []string{"main", "scout-1"}
	hostile := []string{"ok", "\x1b[2J", "\u202e", "line\nline", "", "世界", "\t", "\x1b]52;c;AA\x07"}
	keys := []string{"y", "s", "n", "d", "v", "e", "tab", "esc", "enter", "space", "j", "k", "[", "]", "#", "o", "?", "x", "1"}
	var next uint64
	for i := 0; i < 600; i++ {
		lane := lanes[rng.Intn(len(lanes))]
		txt := hostile[rng.Intn(len(hostile))]
		id := fmt.Sprint("c", rng.Intn(20))
		var msg tea.Msg
		switch rng.Intn(14) {
		case 0:
			msg = ev(agent.TextDelta{Lane: lane, Text: txt})
		case 1:
			msg = ev(agent.AssistantMessage{Lane: lane, Message: agent.Message{Text: txt}})
		case 2:
			msg = ev(agent.ToolCall{Lane: lane, ID: id, Tool: "t" + txt, Effect: tools.EffectClass(txt), Input: raw(map[string]any{"path": txt})})
		case 3:
			msg = ev(agent.ToolResult{Lane: lane, ID: id, OK: rng.Intn(2) == 0, Refusal: tools.RefusalName(txt), Payload: raw(map[string]any{"truncated": true, "x": txt})})
		case 4:
			msg = ev(agent.PlanChanged{Lane: lane, Steps: []tools.PlanStep{{Title: txt, Status: "in_progress"}}})
		case 5:
			msg = ev(agent.DeskChanged{Lane: lane, Page: txt})
		case 6:
			next++
			ch := make(chan approvals.Decision, 1)
			msg = modal.OpenMsg{Request: modal.Request{Key: next, Answer: ch, Req: approvals.Request{ID: id, Lane: lane,
				Descriptor: descriptor("tool"+txt, tools.EffectClass(txt)), Args: raw(map[string]any{"content": txt, "path": txt}),
				Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: txt + ".go", Op: tools.FileModify, Old: txt, New: txt + "x\n"}}}}}}
		case 7:
			if next > 0 {
				msg = modal.CancelMsg{Key: uint64(rng.Intn(int(next))) + 1}
			}
		case 8, 9:
			msg = key(keys[rng.Intn(len(keys))])
			c.Add(modalGrace())
		case 10:
			msg = tea.MouseWheelMsg{X: rng.Intn(w), Y: rng.Intn(h), Button: tea.MouseWheelDown}
		case 11:
			msg = tea.MouseClickMsg{X: rng.Intn(w), Y: rng.Intn(h), Button: tea.MouseLeft}
		case 12:
			w, h = 20+rng.Intn(160), 8+rng.Intn(50)
			msg = tea.WindowSizeMsg{Width: w, Height: h}
		case 13:
			msg = frameMsg{}
		}
		if msg == nil {
			continue
		}
		m.Update(msg) // commands are not run: turns and editors stay out
		checkFrame(t, m, w, h)
	}
}
