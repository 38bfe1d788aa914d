package modal

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui/diffview"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", strings.ReplaceAll(t.Name(), "/", "_")+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Errorf("differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newModal(w, h int) (*Model, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := themes.DarkPalette()
	m := New(themes.New(p), diffview.NewHighlighter(p), c.now)
	m.SetSize(w, h)
	return m, c
}

func plain(s string) string {
	ls := strings.Split(ansi.Strip(s), "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " ")
	}
	return strings.Join(ls, "\n")
}

func desc(name string, e tools.EffectClass) tools.Descriptor {
	return tools.Descriptor{Name: name, Origin: "builtin", RawName: name, Policy: tools.Required, Effect: e,
		Digest: tools.Digest{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}, Description: "Reads a file."}
}

func args(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

const oldGo = "package tally\n\n// Sum returns the sum of xs.\nfunc Sum(xs []int) int {\n\ttotal := 0\n\tfor i := 1; i < len(xs); i++ {\n\t\ttotal += xs[i]\n\t}\n\treturn total\n}\n"

var newGo = strings.Replace(oldGo, "i := 1", "i := 0", 1)

func editReq() approvals.Request {
	return approvals.Request{
		ID: "c1", Lane: "main", Descriptor: desc("file_edit", tools.EffectReversible),
		Args:    args(map[string]any{"path": "tally/tally.go", "digest": "sha256:" + strings.Repeat("a", 64), "old": "i := 1", "new": "i := 0"}),
		Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "tally/tally.go", Op: tools.FileModify, Old: oldGo, New: newGo}}},
	}
}

func bashReq(cmd string) approvals.Request {
	return approvals.Request{
		ID: "c2", Lane: "main", Descriptor: desc("bash", tools.EffectIrreversible),
		Args:    args(map[string]any{"command": cmd}),
		Preview: tools.CommandPreview{Command: cmd, Workdir: "/work/proj", Sandbox: "product (landlock)", Network: "none"},
		Sandbox: "product (landlock)",
	}
}

func open(m *Model, key uint64, req approvals.Request) chan approvals.Decision {
	ch := make(chan approvals.Decision, 1)
	m.Open(Request{Key: key, Req: req, Answer: ch})
	return ch
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
}

func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

func answered(t *testing.T, ch chan approvals.Decision) (approvals.Decision, bool) {
	t.Helper()
	select {
	case d := <-ch:
		return d, true
	default:
		return approvals.Decision{}, false
	}
}

func TestModalGoldenEffectClasses(t *testing.T) {
	for _, e := range tools.EffectClasses() {
		t.Run(string(e), func(t *testing.T) {
			m, _ := newModal(100, 24)
			open(m, 1, approvals.Request{ID: "c", Descriptor: desc("probe", e),
				Args: args(map[string]any{"path": "README.md"}), Preview: tools.ArgsPreview{Args: args(map[string]any{"path": "README.md"})}})
			out := m.View()
			if !strings.Contains(out, string(e)) {
				t.Fatalf("effect %s not shown", e)
			}
			golden(t, plain(out))
		})
	}
}

func TestEffectBadgesHaveDistinctColours(t *testing.T) {
	th := themes.New(themes.DarkPalette())
	seen := map[string]tools.EffectClass{}
	for _, e := range tools.EffectClasses() {
		b := th.Badge(e)
		sgr := b[:strings.Index(b, "m")+1]
		if prev, ok := seen[sgr]; ok {
			t.Fatalf("%s and %s share the badge style %q", prev, e, sgr)
		}
		seen[sgr] = e
	}
}

func TestModalGoldenDiffUnified(t *testing.T) {
	m, _ := newModal(100, 30)
	open(m, 1, editReq())
	golden(t, plain(m.View()))
}

func TestModalGoldenDiffSplit(t *testing.T) {
	m, c := newModal(120, 30)
	open(m, 1, editReq())
	c.t = c.t.Add(time.Second)
	press(m, "tab")
	golden(t, plain(m.View()))
}

func TestModalGoldenLongArgument(t *testing.T) {
	m, _ := newModal(100, 24)
	long := strings.Repeat("very-long-argument-", 20) + "\x1b]52;c;ZXZpbA==\x07end"
	open(m, 1, approvals.Request{ID: "c", Descriptor: desc("probe", tools.EffectRead),
		Args: args(map[string]any{"path": long, "body": strings.Repeat("line\n", 4)}), Preview: tools.ArgsPreview{}})
	out := m.View()
	if strings.Contains(out, "\x1b]52") {
		t.Fatal("OSC 52 reached the screen")
	}
	if !strings.Contains(plain(out), "␛end") {
		t.Fatalf("the end of a long argument is not on screen:\n%s", plain(out))
	}
	golden(t, plain(out))
}

func TestModalGoldenNarrowTerminal(t *testing.T) {
	m, _ := newModal(80, 24)
	open(m, 1, editReq())
	out := m.View()
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Fatalf("line %d is %d cells wide", i, w)
		}
	}
	golden(t, plain(out))
}

func TestModalGoldenCommand(t *testing.T) {
	m, _ := newModal(100, 24)
	open(m, 1, bashReq("go test ./...\x1b[2J && echo done"))
	out := plain(m.View())
	if !strings.Contains(out, "$ go test ./...␛ && echo done") {
		t.Fatalf("command not shown with a marker:\n%s", out)
	}
	if !strings.Contains(out, "sandbox product (landlock)") {
		t.Fatalf("sandbox not shown:\n%s", out)
	}
	golden(t, out)
}

func TestModalNoDefaultAnswer(t *testing.T) {
	m, c := newModal(100, 24)
	ch := open(m, 1, editReq())
	c.t = c.t.Add(time.Second)
	press(m, "enter", "space")
	if _, ok := answered(t, ch); ok {
		t.Fatal("enter or space answered the request")
	}
	if !strings.Contains(m.Flash(), "no default") {
		t.Fatalf("flash = %q", m.Flash())
	}
}

func TestModalGraceDiscardsTypedAheadKeys(t *testing.T) {
	m, c := newModal(100, 24)
	ch := open(m, 1, editReq())
	press(m, "y") // typed just as the dialog opened
	c.t = c.t.Add(300 * time.Millisecond)
	press(m, "y") // still typing: restarts the quiet period
	c.t = c.t.Add(300 * time.Millisecond)
	press(m, "y")
	if _, ok := answered(t, ch); ok {
		t.Fatal("a key inside the grace period answered")
	}
	c.t = c.t.Add(Grace + time.Millisecond)
	press(m, "n")
	d, ok := answered(t, ch)
	if !ok || d.Verdict != approvals.Deny {
		t.Fatalf("after quiet, n = %+v %v", d, ok)
	}
}

func TestModalScopes(t *testing.T) {
	for k, want := range map[string]approvals.Decision{
		"y": {Verdict: approvals.Approve, Scope: approvals.ScopeOnce},
		"s": {Verdict: approvals.Approve, Scope: approvals.ScopeSession},
		"a": {Verdict: approvals.Approve, Scope: approvals.ScopeAlways},
		"n": {Verdict: approvals.Deny},
	} {
		m, c := newModal(100, 24)
		ch := open(m, 1, editReq())
		c.t = c.t.Add(time.Second)
		press(m, k)
		d, ok := answered(t, ch)
		if !ok || fmt.Sprint(d) != fmt.Sprint(want) {
			t.Errorf("%s: got %+v, want %+v", k, d, want)
		}
		if m.Active() {
			t.Errorf("%s: still active after answering", k)
		}
	}
}

func TestModalDenyWithNote(t *testing.T) {
	m, c := newModal(100, 24)
	ch := open(m, 1, bashReq("curl x | sh"))
	c.t = c.t.Add(time.Second)
	press(m, "d", "n", "o", "space", "n", "e", "t", "backspace", "backspace", "e", "t", "y")
	if !strings.Contains(plain(m.View()), "deny with a note ▸ no nety") {
		t.Fatalf("note not shown:\n%s", plain(m.View()))
	}
	press(m, "enter")
	d, ok := answered(t, ch)
	if !ok || d.Verdict != approvals.Deny || d.Note != "no nety" {
		t.Fatalf("got %+v %v", d, ok)
	}
}

func TestModalFIFOQueueNeverReplacesHead(t *testing.T) {
	m, c := newModal(100, 24)
	first := open(m, 1, editReq())
	c.t = c.t.Add(time.Second)
	second := open(m, 2, bashReq("go test ./..."))
	out := plain(m.View())
	if !strings.Contains(out, "Approve file_edit?") || !strings.Contains(out, "1 of 2") {
		t.Fatalf("head replaced or count wrong:\n%s", out)
	}
	press(m, "y")
	if _, ok := answered(t, first); !ok {
		t.Fatal("first not answered")
	}
	if _, ok := answered(t, second); ok {
		t.Fatal("the same key answered the second request too")
	}
	out = plain(m.View())
	if !strings.Contains(out, "Approve bash?") || !strings.Contains(out, "1 of 1") {
		t.Fatalf("second not shown:\n%s", out)
	}
	// The next request has its own grace period.
	press(m, "y")
	if _, ok := answered(t, second); ok {
		t.Fatal("second answered inside its grace period")
	}
}

func TestModalCancelWithdrawsRequest(t *testing.T) {
	m, c := newModal(100, 24)
	open(m, 1, editReq())
	ch2 := open(m, 2, bashReq("ls"))
	m.Cancel(1)
	if !strings.Contains(plain(m.View()), "Approve bash?") {
		t.Fatal("withdrawn request still on screen")
	}
	c.t = c.t.Add(time.Second)
	press(m, "y")
	if _, ok := answered(t, ch2); !ok {
		t.Fatal("remaining request not answerable")
	}
}

func TestModalHideAndReturn(t *testing.T) {
	m, c := newModal(100, 24)
	ch := open(m, 1, editReq())
	c.t = c.t.Add(time.Second)
	press(m, "v")
	if m.Visible() || !m.Hidden() {
		t.Fatal("v did not hide the modal")
	}
	if _, handled := m.Update(keyMsg("y")); handled {
		t.Fatal("a key went to the hidden modal")
	}
	press(m, "v")
	if !m.Visible() {
		t.Fatal("v did not bring it back")
	}
	press(m, "y") // inside the fresh grace period
	if _, ok := answered(t, ch); ok {
		t.Fatal("answered right after returning")
	}
}

func TestModalMultiFileDiffBrowsing(t *testing.T) {
	m, c := newModal(100, 24)
	req := editReq()
	req.Preview = tools.DiffPreview{Files: []tools.FileDiff{
		{Path: "a.go", Op: tools.FileModify, Old: "package a\n", New: "package a\n\nvar X = 1\n"},
		{Path: "b.md", Op: tools.FileCreate, New: "# b\n"},
	}}
	open(m, 1, req)
	c.t = c.t.Add(time.Second)
	if !strings.Contains(plain(m.View()), "file 1 of 2") {
		t.Fatal("no file counter")
	}
	press(m, "]")
	out := plain(m.View())
	if !strings.Contains(out, "file 2 of 2") || !strings.Contains(out, "b.md (create)") {
		t.Fatalf("] did not move to the next file:\n%s", out)
	}
}

func TestEditArgsByShape(t *testing.T) {
	fd := tools.FileDiff{Path: "x.go", Old: "old whole\n", New: "new whole\n"}
	got, err := editArgs(args(map[string]any{"path": "x.go", "content": "c", "overwrite": true}), fd, "edited\n")
	if err != nil || !strings.Contains(string(got), `"content":"edited\n"`) {
		t.Fatalf("content shape: %s %v", got, err)
	}
	got, err = editArgs(args(map[string]any{"path": "x.go", "digest": "d", "old": "a", "new": "b"}), fd, "edited\n")
	if err != nil || !strings.Contains(string(got), `"old":"old whole\n"`) || !strings.Contains(string(got), `"new":"edited\n"`) {
		t.Fatalf("replace shape: %s %v", got, err)
	}
	if _, err := editArgs(args(map[string]any{"command": "ls"}), fd, "x"); err == nil {
		t.Fatal("a command was treated as editable")
	}
}

func TestModalEditedContentIsWhatIsApproved(t *testing.T) {
	m, c := newModal(100, 30)
	ch := open(m, 7, editReq())
	c.t = c.t.Add(time.Second)
	edited := strings.Replace(newGo, "total := 0", "var total int", 1)
	m.Update(editedMsg{key: 7, content: edited})
	if !strings.Contains(plain(m.View()), "var total int") {
		t.Fatalf("preview does not show the edited content:\n%s", plain(m.View()))
	}
	c.t = c.t.Add(time.Second)
	press(m, "y")
	d, ok := answered(t, ch)
	if !ok || !strings.Contains(string(d.EditedArgs), "var total int") {
		t.Fatalf("decision %+v does not carry the edit", d)
	}
}

func TestModalPrefixGrant(t *testing.T) {
	m, c := newModal(100, 24)
	req := bashReq("go test ./...")
	req.Prefixes = []string{"go", "go test"}
	ch := open(m, 1, req)
	out := plain(m.View())
	if !strings.Contains(out, "1 go  2 go test") {
		t.Fatalf("prefixes not offered:\n%s", out)
	}
	c.t = c.t.Add(time.Second)
	press(m, "3") // no third prefix: nothing happens
	if _, ok := answered(t, ch); ok {
		t.Fatal("a missing prefix answered")
	}
	press(m, "2")
	d, ok := answered(t, ch)
	if !ok || d.Scope != approvals.ScopeSession || d.Prefix != "go test" || d.Verdict != approvals.Approve {
		t.Fatalf("got %+v", d)
	}
}

func TestModalHelp(t *testing.T) {
	m, c := newModal(100, 30)
	ch := open(m, 1, editReq())
	c.t = c.t.Add(time.Second)
	press(m, "?")
	out := plain(m.View())
	if !strings.Contains(out, "there is no default answer") || strings.Contains(out, "@@ -3,7") {
		t.Fatalf("? did not replace the preview with the keys:\n%s", out)
	}
	press(m, "?")
	if !strings.Contains(plain(m.View()), "@@ -3,7") {
		t.Fatal("? did not bring the preview back")
	}
	if _, ok := answered(t, ch); ok {
		t.Fatal("? answered")
	}
}
