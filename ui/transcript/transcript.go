// Package transcript is the console's conversation view: user and
// assistant messages, thinking, tool calls as compact cards and notices,
// built only from agent events. It is virtualized: items cache their
// rendering per width, finished items are frozen, and a frame renders only
// the items that intersect the window, so its cost does not grow with the
// length of the session.
package transcript

import (
	"strings"

	"staage/agent"
	"staage/themes"
	"staage/ui/markdown"
	"staage/ui/sanitize"
)

// Transcript is one lane's conversation. It is not safe for concurrent use.
type Transcript struct {
	theme themes.Theme
	md    *markdown.Renderer

	items  []*Item
	byCall map[string]*Item
	// streaming is the assistant item receiving deltas, if any.
	streaming *Item
	thinking  *Item

	width, height int
	// follow keeps the view on the newest line; when false the window
	// starts at line topOff of item topIdx.
	follow         bool
	topIdx, topOff int
	// selected is the index of the selected item, -1 for none.
	selected int
	// renders counts item renders (tests and benchmarks read it).
	renders int
	// unseen is set when items arrived while the view was scrolled up.
	unseen bool
}

// New returns an empty transcript.
func New(theme themes.Theme, md *markdown.Renderer) *Transcript {
	return &Transcript{theme: theme, md: md, byCall: map[string]*Item{}, follow: true, selected: -1}
}

// SetTheme changes the theme and drops every cached rendering.
func (t *Transcript) SetTheme(theme themes.Theme, md *markdown.Renderer) {
	t.theme, t.md = theme, md
	for _, it := range t.items {
		it.invalidate()
		it.blocks = markdown.Blocks{}
	}
}

// SetSize sets the window size. A new width re-renders items lazily.
func (t *Transcript) SetSize(w, h int) { t.width, t.height = max(w, 1), max(h, 1) }

// Len is the number of items.
func (t *Transcript) Len() int { return len(t.items) }

// Renders is how many times an item was rendered so far.
func (t *Transcript) Renders() int { return t.renders }

// Append adds an item at the end.
func (t *Transcript) Append(it *Item) {
	t.items = append(t.items, it)
	if !t.follow {
		t.unseen = true
	}
	if it.Tool != nil && it.Tool.ID != "" {
		t.byCall[it.Tool.ID] = it
	}
}

// Apply folds one event into the transcript. It reports whether anything
// visible changed now; text deltas only mark their item stale, and the
// change shows at the next Settle.
func (t *Transcript) Apply(e agent.Event) bool {
	switch ev := e.(type) {
	case agent.UserMessage:
		t.endStream()
		t.Append(&Item{Kind: KindUser, Text: sanitize.Text(ev.Text)})
	case agent.TextDelta:
		if t.streaming == nil {
			t.streaming = &Item{Kind: KindAssistant, Streaming: true}
			t.Append(t.streaming)
		}
		t.streaming.Text += sanitize.Text(ev.Text)
		t.streaming.stale = true
		return false
	case agent.ThinkingDelta:
		if t.thinking == nil {
			t.thinking = &Item{Kind: KindThinking, Streaming: true}
			t.Append(t.thinking)
		}
		t.thinking.Text += sanitize.Text(ev.Text)
		t.thinking.stale = true
		return false
	case agent.AssistantMessage:
		text := sanitize.Text(ev.Message.Text)
		if t.streaming != nil {
			t.streaming.Text = text
			t.streaming.invalidate()
		} else if strings.TrimSpace(text) != "" {
			t.Append(&Item{Kind: KindAssistant, Text: text})
		}
		t.endStream()
	case agent.ToolCall:
		t.endStream()
		t.Append(&Item{Kind: KindTool, Tool: newToolCard(ev.ID, ev.Tool, ev.Origin, ev.Effect, ev.Policy, ev.Digest, ev.Input)})
	case agent.ApprovalAsked:
		t.updateTool(ev.ID, func(tc *ToolCard) { tc.Status = ToolAwaiting })
	case agent.ApprovalDecided:
		t.updateTool(ev.ID, func(tc *ToolCard) {
			if ev.Scope == "never" && ev.Decision == "approved" {
				return // a NEVER-policy tool: nobody was asked
			}
			if ev.Decision == "denied" && tc.Status != ToolAwaiting {
				// Nobody was asked: the gate refused on its own (a
				// preview that failed, a child with no human).
				tc.Decision = "refused before asking"
				return
			}
			d := ev.Decision + " · " + ev.Scope
			if ev.Prefix != "" {
				d += " " + sanitize.Line(ev.Prefix)
			}
			if ev.Note != "" {
				d += " · note: " + sanitize.Line(ev.Note)
			}
			tc.Decision = d
			tc.Edited = ev.Edited
			if ev.Edited && len(ev.Input) > 0 {
				tc.KeyArg, tc.input = keyArg(ev.Input), ev.Input
			}
		})
	case agent.ToolStarted:
		t.updateTool(ev.ID, func(tc *ToolCard) { tc.Status = ToolRunning })
	case agent.ToolResult:
		t.updateTool(ev.ID, func(tc *ToolCard) {
			if ev.OK {
				tc.Status = ToolOK
			} else {
				tc.Status = ToolRefused
				tc.Refusal = sanitize.Line(string(ev.Refusal))
				tc.Message = sanitize.Text(ev.Message)
			}
			tc.Bounds, tc.payload = payloadBounds(ev.Payload), ev.Payload
		})
	case agent.ChildStarted:
		t.notice(LevelInfo, "child "+sanitize.Line(ev.Child)+" ("+sanitize.Line(ev.Mode)+") started: "+sanitize.Line(ev.Objective))
	case agent.ChildFinished:
		t.notice(LevelInfo, "child "+sanitize.Line(ev.Child)+" finished: "+sanitize.Line(ev.Status))
	case agent.TurnDone:
		t.endStream()
		if ev.Stop != "end_turn" && ev.Stop != "" {
			lvl := LevelWarn
			if ev.Stop == "error" {
				lvl = LevelError
			}
			t.notice(lvl, "turn ended: "+sanitize.Line(ev.Stop))
		}
	case agent.Error:
		t.notice(LevelError, sanitize.Line(ev.Kind)+": "+sanitize.Text(ev.Message))
	case agent.Warning:
		t.notice(LevelWarn, sanitize.Text(ev.Message))
	default:
		return false
	}
	return true
}

// Notice appends a console notice (not from the agent).
func (t *Transcript) Notice(level Level, text string) { t.notice(level, sanitize.Text(text)) }

func (t *Transcript) notice(level Level, text string) {
	t.Append(&Item{Kind: KindNotice, Level: level, Text: text})
}

func (t *Transcript) updateTool(id string, f func(*ToolCard)) {
	it := t.byCall[sanitize.Line(id)]
	if it == nil {
		return
	}
	f(it.Tool)
	it.invalidate()
}

// endStream freezes the streaming items: their text is final.
func (t *Transcript) endStream() {
	for _, it := range []*Item{t.streaming, t.thinking} {
		if it != nil {
			it.Streaming = false
			it.stale = false
			it.invalidate()
		}
	}
	t.streaming, t.thinking = nil, nil
}

// Settle makes the text that arrived since the last frame visible: the
// console calls it once per frame, so a burst of deltas costs one render.
func (t *Transcript) Settle() {
	for _, it := range []*Item{t.streaming, t.thinking} {
		if it != nil && it.stale {
			it.stale = false
			it.invalidate()
		}
	}
}

// ToggleSelected expands or collapses the selected item, or the newest
// tool card when nothing is selected.
func (t *Transcript) ToggleSelected() {
	i := t.selected
	if i < 0 {
		for j := len(t.items) - 1; j >= 0; j-- {
			if t.items[j].Kind == KindTool || t.items[j].Kind == KindThinking {
				i = j
				break
			}
		}
	}
	if i < 0 || i >= len(t.items) {
		return
	}
	it := t.items[i]
	it.Expanded = !it.Expanded
	it.invalidate()
}

// SelectNext moves the selection to the next (dir>0) or previous tool card
// or thinking block, and scrolls it into view.
func (t *Transcript) SelectNext(dir int) {
	start := t.selected
	if start < 0 {
		start = len(t.items)
		if dir > 0 {
			start = -1
		}
	}
	for j := start + dir; j >= 0 && j < len(t.items); j += dir {
		if k := t.items[j].Kind; k == KindTool || k == KindThinking {
			t.selected = j
			t.reveal(j)
			return
		}
	}
}

// ClearSelection removes the selection.
func (t *Transcript) ClearSelection() { t.selected = -1 }

// Selected is the selected item index or -1.
func (t *Transcript) Selected() int { return t.selected }

// reveal scrolls so that item i starts in the window.
func (t *Transcript) reveal(i int) {
	top, _ := t.windowStart()
	if i >= top.idx && t.visible(i) {
		return
	}
	t.follow = false
	t.topIdx, t.topOff = i, 0
	t.clampBottom()
}

func (t *Transcript) visible(i int) bool {
	top, _ := t.windowStart()
	rows := 0
	for j := top.idx; j < len(t.items) && rows < t.height; j++ {
		if j == i {
			return true
		}
		rows += len(t.lines(j))
		if j == top.idx {
			rows -= top.off
		}
	}
	return false
}
