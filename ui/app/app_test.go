package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/agent"
	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui"
	"staage/ui/status"
)

func demoEvents() []tea.Msg {
	return []tea.Msg{
		ev(agent.UserMessage{Lane: "main", Text: "fix the bug"}),
		ev(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: "I will **read** the file."}}),
		ev(agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "read", Status: "done"}, {Title: "edit", Status: "in_progress"}, {Title: "test", Status: "pending"}}}),
		ev(agent.DeskChanged{Lane: "main", Page: "# Notes\n\n- the bug is in `Sum`"}),
		ev(agent.ToolCall{Lane: "main", ID: "c1", Tool: "file_read", Effect: tools.EffectRead, Digest: "sha256:0123456789abcdef0123", Input: raw(map[string]any{"path": "main.go"})}),
		ev(agent.ToolResult{Lane: "main", ID: "c1", OK: true, Payload: raw(map[string]any{"truncated": true, "content": "x"})}),
		ev(agent.UsageReport{Lane: "main", Usage: agent.Usage{InputTokens: 12000, OutputTokens: 345}, CostUSD: 0.042}),
	}
}

func checkFrame(t *testing.T, m *Model, w, h int) {
	t.Helper()
	lines := strings.Split(m.View().Content, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("line %d is %d cells wide (> %d): %q", i, lw, w, ansi.Strip(l))
		}
	}
	// The side column starts at the same cell on every row of the
	// middle area.
	if g := m.geometry(); g.sideW > 0 && !m.modal.Visible() && !m.help {
		for i := g.top; i < g.top+g.midH && i < len(lines); i++ {
			if lw := ansi.StringWidth(ansi.Truncate(lines[i], g.mainW, "")); lw != g.mainW {
				t.Fatalf("row %d: the transcript part is %d cells, want %d: %q", i, lw, g.mainW, ansi.Strip(lines[i]))
			}
		}
	}
}

func TestLayoutGolden120x40(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	checkFrame(t, m, 120, 40)
	golden(t, t.Name(), screen(m))
}

func TestLayoutGolden80x24(t *testing.T) {
	m, _ := newTestModel(t, 80, 24)
	send(m, demoEvents()...)
	checkFrame(t, m, 80, 24)
	golden(t, t.Name(), screen(m))
}

func TestResizeReflows(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	for _, sz := range [][2]int{{80, 24}, {50, 15}, {200, 60}, {120, 40}} {
		send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, m, sz[0], sz[1])
	}
}

func TestTinyTerminalWithModal(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	openReq(m, 1, approvals.Request{ID: "c", Descriptor: descriptor("bash", tools.EffectIrreversible),
		Args: raw(map[string]any{"command": strings.Repeat("x", 300)}), Preview: tools.CommandPreview{Command: strings.Repeat("x", 300)}})
	for _, sz := range [][2]int{{80, 24}, {40, 12}, {20, 8}} {
		send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, m, sz[0], sz[1])
	}
}

func TestStatusBarGolden(t *testing.T) {
	th := themes.New(themes.DarkPalette())
	in := status.Info{Model: "anthropic/claude-sonnet-4-5", Sandbox: "product", Workspace: "~/src/proj",
		InputTokens: 12000, OutputTokens: 345, CostUSD: 0.04, CostKnown: true, Pending: 2}
	var b strings.Builder
	for _, w := range []int{120, 80, 40} {
		b.WriteString(ansi.Strip(status.Bar(th, in, w)) + "|\n")
	}
	demo := status.Info{Model: "offline demo", Sandbox: "off", Workspace: "/tmp/staage-demo-1", Demo: true}
	b.WriteString(ansi.Strip(status.Bar(th, demo, 100)) + "|\n")
	golden(t, t.Name(), b.String())
}

func TestPanesGolden(t *testing.T) {
	m, _ := newTestModel(t, 100, 30)
	send(m, demoEvents()...)
	g := m.geometry()
	var b strings.Builder
	b.WriteString(ansi.Strip(m.plans["main"].View(g.sideW, g.planH, true)) + "\n")
	b.WriteString(ansi.Strip(m.desks["main"].View(g.sideW, 10, false)) + "\n")
	golden(t, t.Name(), b.String())
}

func TestTogglePanesAndFocus(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	send(m, tea.KeyPressMsg{Code: 'p', Mod: tea.ModAlt})
	if strings.Contains(screen(m), "PLAN") {
		t.Fatal("alt+p did not hide the plan")
	}
	send(m, tea.KeyPressMsg{Code: 'd', Mod: tea.ModAlt})
	if strings.Contains(screen(m), "DESK") {
		t.Fatal("alt+d did not hide the desk")
	}
	if g := m.geometry(); g.mainW != 120 {
		t.Fatalf("transcript width %d with both panes hidden", g.mainW)
	}
	send(m, tea.KeyPressMsg{Code: 'p', Mod: tea.ModAlt}, key("tab"))
	if m.focus != FocusTranscript {
		t.Fatalf("focus = %d after tab", m.focus)
	}
	send(m, key("tab"))
	if m.focus != FocusPlan {
		t.Fatalf("focus = %d, want plan", m.focus)
	}
	send(m, key("tab"))
	if m.focus != FocusInput {
		t.Fatalf("focus = %d, want input (desk hidden)", m.focus)
	}
}

func TestModalOverDimmedScreen(t *testing.T) {
	m, c := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	ch := openReq(m, 1, approvals.Request{ID: "c2", Lane: "main", Descriptor: descriptor("file_edit", tools.EffectReversible),
		Args: raw(map[string]any{"path": "main.go", "old": "a - b", "new": "a + b"}),
		Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "main.go", Op: tools.FileModify,
			Old: "package main\n\nfunc add(a, b int) int { return a - b }\n", New: "package main\n\nfunc add(a, b int) int { return a + b }\n"}}}})
	out := screen(m)
	for _, want := range []string{"Approve file_edit?", "1 of 1", "reversible", "sha256:abcdef012345", "-", "+ func add(a, b int) int { return a + b }", "1 pending"} {
		if !strings.Contains(out, want) {
			t.Fatalf("modal frame lacks %q:\n%s", want, out)
		}
	}
	checkFrame(t, m, 120, 40)
	golden(t, t.Name(), screen(m))
	c.Add(modalGrace())
	send(m, key("y"))
	select {
	case d := <-ch:
		if d.Verdict != approvals.Approve || d.Scope != approvals.ScopeOnce {
			t.Fatalf("decision %+v", d)
		}
	default:
		t.Fatal("y did not answer")
	}
	if strings.Contains(screen(m), "Approve file_edit?") {
		t.Fatal("modal still on screen")
	}
}

func TestTypedAheadKeysGoToInputNotModal(t *testing.T) {
	m, c := newTestModel(t, 100, 30)
	send(m, key("y"), key("e"))
	ch := openReq(m, 1, approvals.Request{ID: "c", Descriptor: descriptor("bash", tools.EffectIrreversible),
		Args: raw(map[string]any{"command": "rm -rf build"}), Preview: tools.CommandPreview{Command: "rm -rf build"}})
	send(m, key("s"), key("y")) // arrives right after the modal opened
	c.Add(200 * time.Millisecond)
	send(m, key("y"))
	select {
	case d := <-ch:
		t.Fatalf("typed-ahead key answered: %+v", d)
	default:
	}
	if got := m.input.Value(); got != "ye" {
		t.Fatalf("input = %q: keys typed before the modal belong to the input", got)
	}
}

func TestEscInterruptsTurn(t *testing.T) {
	release := make(chan struct{})
	r := &fakeRunner{release: release}
	m, _ := newTestModel(t, 100, 30)
	m.cfg.Runner = r
	_, cmd := m.Update(key("h"))
	drain(m, cmd, 0)
	_, cmd = m.Update(key("enter"))
	// SubmitMsg → startTurn; run the turn command in the background.
	submit := cmd()
	_, turn := m.Update(submit)
	if !m.Running() {
		t.Fatal("turn not running")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- turn() }()
	send(m, key("esc"))
	select {
	case msg := <-done:
		m.Update(msg)
	case <-time.After(2 * time.Second):
		t.Fatal("esc did not cancel the turn")
	}
	if m.Running() {
		t.Fatal("still running after the turn returned")
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
	m, c := newTestModel(t, 100, 30)
	_, cmd := m.Update(key("ctrl+c"))
	if isQuit(cmd) {
		t.Fatal("one ctrl+c quit")
	}
	if !strings.Contains(screen(m), "press ctrl+c again to quit") {
		t.Fatal("no hint after the first ctrl+c")
	}
	c.Add(QuitWindow + time.Second)
	_, cmd = m.Update(key("ctrl+c"))
	if isQuit(cmd) {
		t.Fatal("ctrl+c after the window quit")
	}
	send(m, key("x")) // another key in between disarms
	_, cmd = m.Update(key("ctrl+c"))
	if isQuit(cmd) {
		t.Fatal("ctrl+c, a key, ctrl+c quit")
	}
	c.Add(500 * time.Millisecond)
	_, cmd = m.Update(key("ctrl+c"))
	if !isQuit(cmd) {
		t.Fatal("second ctrl+c within the window did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		_, ok := msg.(tea.QuitMsg)
		return ok
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

func TestHelpToggles(t *testing.T) {
	m, _ := newTestModel(t, 100, 30)
	send(m, key("?"))
	if !strings.Contains(screen(m), "HELP") || !strings.Contains(screen(m), "approve once / session / always") {
		t.Fatalf("? did not show help:\n%s", screen(m))
	}
	send(m, key("esc"))
	if strings.Contains(screen(m), "HELP") {
		t.Fatal("esc did not close help")
	}
	send(m, key("a"), key("?"))
	if strings.Contains(screen(m), "HELP") || m.input.Value() != "a?" {
		t.Fatal("? in a non-empty input must be typed, not open help")
	}
}

func TestInputHistoryAndNewline(t *testing.T) {
	m, _ := newTestModel(t, 100, 30)
	m.cfg.Runner = &fakeRunner{}
	send(m, key("o"), key("n"), key("e"), key("enter"))
	if m.input.Value() != "" {
		t.Fatalf("input not cleared after enter: %q", m.input.Value())
	}
	send(m, key("x"), tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}, key("y"))
	if m.input.Value() != "x\ny" {
		t.Fatalf("ctrl+j did not insert a newline: %q", m.input.Value())
	}
	m.input.Reset()
	send(m, tea.KeyPressMsg{Code: tea.KeyUp})
	if m.input.Value() != "one" {
		t.Fatalf("up did not recall history: %q", m.input.Value())
	}
}

func TestMouseWheelScrollsUnderPointer(t *testing.T) {
	m, _ := newTestModel(t, 120, 30)
	for i := 0; i < 40; i++ {
		send(m, ev(agent.UserMessage{Lane: "main", Text: "line"}))
	}
	send(m, tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelUp})
	if m.cur().Following() {
		t.Fatal("wheel over the transcript did not scroll it")
	}
	send(m, tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelDown}, tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelDown})
	if !m.cur().Following() {
		t.Fatal("wheel down to the end did not resume following")
	}
}

// TestStreamRepaintsOncePerFrame: 5,000 deltas between two frames leave the
// frame content unchanged until the frame message settles them, so the
// renderer (which skips unchanged frames) paints at most once per frame.
func TestStreamRepaintsOncePerFrame(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, ev(agent.UserMessage{Lane: "main", Text: "go"}))
	frames := map[string]bool{}
	ticks := 0
	for i := 0; i < 5000; i++ {
		_, cmd := m.Update(ev(agent.TextDelta{Lane: "main", Text: "word "}))
		if cmd != nil {
			ticks++
		}
		if i%25 == 0 { // sampled: a View per delta makes no difference but time
			frames[m.View().Content] = true
		}
		if i%500 == 499 { // a frame boundary
			m.Update(frameMsg{})
			frames[m.View().Content] = true
		}
	}
	// One distinct frame for the first delta's item plus one per frame.
	if len(frames) > 11 {
		t.Fatalf("%d distinct frames for 10 frame ticks", len(frames))
	}
	if ticks != 10 {
		t.Fatalf("%d frame ticks scheduled, want one per frame (10)", ticks)
	}
}

// TestInjectionInert drives the whole console with hostile text in a tool
// result and a model message.
func TestInjectionInert(t *testing.T) {
	evil := "hi\x1b[2J\x1b[10;10H\x1b]52;c;Y3VybCBldmls\x07\x1b]0;owned\x1b\\\u202egnp.exe\u202c"
	m, _ := newTestModel(t, 120, 40)
	send(m,
		ev(agent.TextDelta{Lane: "main", Text: evil}),
		ev(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: evil}}),
		ev(agent.ToolCall{Lane: "main", ID: "e", Tool: "bash", Effect: tools.EffectIrreversible, Input: raw(map[string]any{"command": evil})}),
		ev(agent.ToolResult{Lane: "main", ID: "e", Refusal: tools.BashExit, Message: evil, Payload: raw(map[string]any{"output": evil})}),
		ev(agent.DeskChanged{Lane: "main", Page: evil}),
		ev(agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: evil, Status: "pending"}}}),
	)
	m.cur().ToggleSelected()
	openReq(m, 1, approvals.Request{ID: "e2", Descriptor: descriptor("bash"+evil, tools.EffectIrreversible),
		Args: raw(map[string]any{"command": evil}), Preview: tools.CommandPreview{Command: evil, Workdir: evil}})
	v := m.View()
	for _, bad := range []string{"\x1b[2J", "\x1b[10;10H", "\x1b]52", "\x1b]0;", "\u202e", "\u202c", "\x07"} {
		if strings.Contains(v.Content, bad) {
			t.Fatalf("%q reached the screen", bad)
		}
	}
	if v.WindowTitle != "staage · approval needed" {
		t.Fatalf("window title changed to %q", v.WindowTitle)
	}
	if !strings.Contains(screen(m), "hi␛␛␛␛⟦U+202E⟧gnp.exe⟦U+202C⟧") {
		t.Fatalf("the command does not show what was removed:\n%s", screen(m))
	}
}

// TestNoColorHonoured renders a busy frame (transcript, panes, a modal with a
// diff) under NO_COLOR and finds no colour in it.
func TestNoColorHonoured(t *testing.T) {
	m := New(Config{Env: themes.Env{NoColor: "1"}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	// The terminal's background answer must not bring colour back.
	m.Update(tea.BackgroundColorMsg{})
	send(m, demoEvents()...)
	openReq(m, 1, approvals.Request{ID: "c", Descriptor: descriptor("file_edit", tools.EffectReversible),
		Args: raw(map[string]any{"path": "a.go"}), Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "a.go", Op: tools.FileModify, Old: "package a\n", New: "package b\n"}}}})
	frames := []string{m.View().Content}
	m.modal.Update(key("v"))
	frames = append(frames, m.View().Content)
	for _, f := range frames {
		if p := colourParam(f); p != "" {
			t.Fatalf("colour SGR parameter %s under NO_COLOR", p)
		}
	}
	if !strings.Contains(ansi.Strip(frames[0]), "[reversible]") {
		t.Fatal("the effect class is not spelled out without colour")
	}
	// The detector itself finds colour in the dark theme.
	d, _ := newTestModel(t, 120, 40)
	send(d, demoEvents()...)
	if colourParam(d.View().Content) == "" {
		t.Fatal("colourParam finds no colour in the dark theme")
	}
}

// colourParam returns the first SGR parameter that sets a colour.
func colourParam(s string) string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return ""
		}
		s = s[i+2:]
		j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' && r != ';' && r != ':' })
		if j < 0 || s[j] != 'm' {
			continue
		}
		for _, p := range strings.FieldsFunc(s[:j], func(r rune) bool { return r == ';' || r == ':' }) {
			switch {
			case p == "38" || p == "48" || p == "58",
				len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] <= '7',
				len(p) == 3 && strings.HasPrefix(p, "10") && p[2] <= '7':
				return p
			}
		}
	}
}

// TestHistoryRebuildsTheScreen: a resumed session's events go through the
// same reducers as live ones.
func TestHistoryRebuildsTheScreen(t *testing.T) {
	var hist []agent.Event
	for _, msg := range demoEvents() {
		hist = append(hist, msg.(ui.EventMsg).Event)
	}
	hist = append(hist, agent.TextDelta{Lane: "main", Text: "half a stream"})
	m := New(Config{Env: themes.Env{Override: themes.Dark}, History: hist, BootReport: []string{"resumed session s-1"}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	out := screen(m)
	for _, want := range []string{"fix the bug", "file_read", "PLAN 1/3", "the bug is in", "12.3k tok", "half a stream", "resumed session s-1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("resumed screen lacks %q:\n%s", want, out)
		}
	}
}

func TestChildLanes(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m,
		ev(agent.ChildStarted{Lane: "main", Child: "scout-1", Mode: "scout", Objective: "find the handler"}),
		ev(agent.UserMessage{Lane: "scout-1", Text: "child prompt"}),
		ev(agent.PlanChanged{Lane: "scout-1", Steps: []tools.PlanStep{{Title: "grep", Status: "in_progress"}}}),
	)
	out := screen(m)
	if !strings.Contains(out, "scout-1 ●") || !strings.Contains(out, "child scout-1 (scout) started") {
		t.Fatalf("child lane not shown:\n%s", out)
	}
	if strings.Contains(out, "child prompt") {
		t.Fatal("the child's events leaked into the main transcript")
	}
	send(m, tea.KeyPressMsg{Code: ']', Mod: tea.ModAlt})
	out = screen(m)
	if !strings.Contains(out, "[scout-1 ●]") || !strings.Contains(out, "child prompt") || !strings.Contains(out, "▸ grep") {
		t.Fatalf("alt+] did not switch to the child lane:\n%s", out)
	}
	send(m, ev(agent.ChildFinished{Lane: "main", Child: "scout-1", Status: "done"}))
	if !strings.Contains(screen(m), "[scout-1 ✓]") {
		t.Fatalf("finished child not marked:\n%s", screen(m))
	}
}

func TestWheelScrollsTheDialogPreview(t *testing.T) {
	m, _ := newTestModel(t, 100, 30)
	var old, nw strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i%40 == 0 {
			fmt.Fprintf(&nw, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&nw, "line %d\n", i)
		}
	}
	openReq(m, 1, approvals.Request{ID: "c", Descriptor: descriptor("file_edit", tools.EffectReversible), Args: raw(map[string]any{"path": "a.txt"}),
		Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "a.txt", Op: tools.FileModify, Old: old.String(), New: nw.String()}}}})
	before := screen(m)
	send(m, tea.MouseWheelMsg{X: 50, Y: 15, Button: tea.MouseWheelDown})
	if screen(m) == before {
		t.Fatal("the wheel did not scroll the dialog's preview")
	}
	if !m.modal.Visible() {
		t.Fatal("the wheel answered or hid the dialog")
	}
}

func TestBellAndNotification(t *testing.T) {
	if bellSequence(false) != "\a" {
		t.Fatal("no bell")
	}
	if got := bellSequence(true); got != "\a\x1b]9;staage: approval needed\x07" {
		t.Fatalf("notification = %q", got)
	}
	t.Setenv("TERM_PROGRAM", "WezTerm")
	if !NotifySupported() {
		t.Fatal("WezTerm shows OSC 9")
	}
	t.Setenv("TERM_PROGRAM", "Apple_Terminal")
	t.Setenv("TERM", "xterm-256color")
	if NotifySupported() {
		t.Fatal("OSC 9 sent to a terminal not known to show it")
	}
}

func TestClickFocusesPanes(t *testing.T) {
	m, _ := newTestModel(t, 120, 40)
	send(m, demoEvents()...)
	g := m.geometry()
	for _, c := range []struct {
		x, y int
		want Focus
	}{
		{10, 5, FocusTranscript},
		{g.mainW + 3, g.top + 1, FocusPlan},
		{g.mainW + 3, g.top + g.planH + 2, FocusDesk},
		{10, g.inputTop, FocusInput},
	} {
		send(m, tea.MouseClickMsg{X: c.x, Y: c.y, Button: tea.MouseLeft})
		if m.focus != c.want {
			t.Fatalf("click at %d,%d focused %d, want %d", c.x, c.y, m.focus, c.want)
		}
	}
}
