package journal

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"staage/agent"
	"staage/tools"
)

// exportClip bounds a tool input or payload in an export; the journal
// keeps the whole of it.
const exportClip = 4 << 10

// ExportMarkdown writes the session as a Markdown transcript: prompts,
// answers, tool calls with their results (interrupted calls marked), plan
// and desk changes, children, errors. All text from the session is
// sanitized of control characters, and code fences are made longer than
// any backtick run inside them.
func ExportMarkdown(r *Replay, w io.Writer) error {
	bw := bufio.NewWriter(w)
	x := exporter{w: bw, r: r, pending: map[string]*strings.Builder{}, lanes: lanesOf(r.Events)}
	x.header()
	for _, e := range r.Events {
		x.event(e)
	}
	x.flushAll()
	return bw.Flush()
}

type exporter struct {
	w       *bufio.Writer
	r       *Replay
	pending map[string]*strings.Builder // streamed text not yet closed by a message
	order   []string
	lanes   int
}

func lanesOf(events []agent.Event) int {
	seen := map[string]bool{}
	for _, e := range events {
		if u, ok := e.(agent.UserMessage); ok {
			seen[u.Lane] = true
		}
		if c, ok := e.(agent.ChildStarted); ok {
			seen[c.Child] = true
		}
	}
	return len(seen)
}

func (x *exporter) p(format string, args ...any) { fmt.Fprintf(x.w, format, args...) }

func (x *exporter) header() {
	h := x.r.Header
	x.p("# staage session %s\n\n", Sanitize(h.ID))
	x.p("- Workspace: %s\n", inlineCode(h.Workspace))
	x.p("- Model: %s\n", Sanitize(h.Provider))
	x.p("- Sandbox: %s\n", Sanitize(h.Sandbox))
	if !h.Started.IsZero() {
		x.p("- Started: %s\n", h.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if x.r.Resumes > 0 {
		x.p("- Resumed: %d time(s)\n", x.r.Resumes)
	}
	if len(x.r.Problems) > 0 {
		x.p("\n> **Journal problems** (skipped while reading):\n")
		for _, pr := range x.r.Problems {
			x.p("> - %s\n", Sanitize(pr))
		}
	}
	x.p("\n")
}

func (x *exporter) laneTag(lane string) string {
	if x.lanes <= 1 || lane == "" {
		return ""
	}
	return " · " + Sanitize(lane)
}

func (x *exporter) event(e agent.Event) {
	switch v := e.(type) {
	case agent.UserMessage:
		x.flush(v.Lane)
		x.p("## You%s\n\n%s\n\n", x.laneTag(v.Lane), Sanitize(v.Text))
	case agent.TextDelta:
		b := x.pending[v.Lane]
		if b == nil {
			b = &strings.Builder{}
			x.pending[v.Lane] = b
			x.order = append(x.order, v.Lane)
		}
		b.WriteString(v.Text)
	case agent.AssistantMessage:
		delete(x.pending, v.Lane) // the message holds the whole text
		x.message(v)
	case agent.ToolCall:
		x.flush(v.Lane)
		x.p("**Tool** %s%s · call %s\n\n", inlineCode(v.Tool), x.laneTag(v.Lane), inlineCode(v.ID))
		x.p("%s\n", fence("json", clip(string(v.Input))))
	case agent.ApprovalDecided:
		line := fmt.Sprintf("*%s (%s)*", Sanitize(v.Decision), Sanitize(v.Scope))
		if v.Note != "" {
			line += " — note: " + Sanitize(v.Note)
		}
		if v.Edited {
			line += " — content edited before approval"
		}
		x.p("%s\n\n", line)
	case agent.ToolResult:
		x.result(v)
	case agent.PlanChanged:
		x.flush(v.Lane)
		x.p("**Plan**%s\n\n", x.laneTag(v.Lane))
		for _, s := range v.Steps {
			mark := " "
			switch s.Status {
			case "done":
				mark = "x"
			case "in_progress":
				mark = "~"
			}
			x.p("- [%s] %s\n", mark, Sanitize(s.Title))
		}
		x.p("\n")
	case agent.DeskChanged:
		x.flush(v.Lane)
		x.p("**Desk**%s\n\n%s\n", x.laneTag(v.Lane), fence("markdown", v.Page))
	case agent.ChildStarted:
		x.p("**Child** %s started (%s): %s\n\n", inlineCode(v.Child), Sanitize(v.Mode), Sanitize(v.Objective))
	case agent.ChildFinished:
		x.flush(v.Child)
		x.p("**Child** %s finished: %s\n\n%s\n", inlineCode(v.Child), Sanitize(v.Status), fence("json", clip(string(v.Envelope))))
	case agent.TurnDone:
		x.flush(v.Lane)
		if v.Stop != "" && v.Stop != "end_turn" {
			x.p("*turn ended: %s*\n\n", Sanitize(v.Stop))
		}
	case agent.Error:
		x.p("> **Error** (%s): %s\n\n", Sanitize(v.Kind), Sanitize(v.Message))
	case agent.Warning:
		x.p("> Warning: %s\n\n", Sanitize(v.Message))
	}
}

func (x *exporter) message(m agent.AssistantMessage) {
	tag := x.laneTag(m.Lane)
	for _, t := range m.Message.Thinking {
		if t.Text != "" {
			x.p("> *thinking%s:* %s\n\n", tag, strings.ReplaceAll(Sanitize(t.Text), "\n", "\n> "))
		}
	}
	if strings.TrimSpace(m.Message.Text) != "" {
		x.p("## Assistant%s\n\n%s\n\n", tag, Sanitize(m.Message.Text))
	}
}

func (x *exporter) result(v agent.ToolResult) {
	x.flush(v.Lane)
	switch {
	case v.OK:
		x.p("→ ok\n\n%s\n", fence("json", clip(string(v.Payload))))
	case v.Refusal == tools.ToolInterrupted || x.r.Interrupted(v.Lane, v.ID):
		x.p("→ **interrupted** — %s\n\n", Sanitize(v.Message))
	default:
		x.p("→ refused %s: %s\n\n", inlineCode(string(v.Refusal)), Sanitize(v.Message))
	}
}

// flush writes a lane's streamed text that no message closed (the stream
// was cut): it is shown, marked incomplete.
func (x *exporter) flush(lane string) {
	b := x.pending[lane]
	if b == nil || b.Len() == 0 {
		return
	}
	delete(x.pending, lane)
	x.p("## Assistant%s (incomplete)\n\n%s\n\n", x.laneTag(lane), Sanitize(b.String()))
}

func (x *exporter) flushAll() {
	for _, lane := range x.order {
		x.flush(lane)
	}
}

func clip(s string) string {
	if len(s) <= exportClip {
		return s
	}
	cut := exportClip
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes in the journal)", len(s)-cut)
}

// fence wraps s in a code fence longer than any backtick run inside it.
func fence(lang, s string) string {
	s = Sanitize(s)
	n := max(3, longestRun(s, '`')+1)
	f := strings.Repeat("`", n)
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

func inlineCode(s string) string {
	s = strings.ReplaceAll(Sanitize(s), "\n", " ")
	n := longestRun(s, '`') + 1
	f := strings.Repeat("`", n)
	if n > 1 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return f + " " + s + " " + f
	}
	return f + s + f
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
