package app

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"staage/agent"
	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui"
)

// scriptedRunner plays a turn through the bridge the way agent.Session
// does: events to the sink, approvals to the approver, and a "command"
// that runs until the turn is cancelled.
type scriptedRunner struct {
	bridge    *ui.Bridge
	decisions chan approvals.Decision
}

func (r *scriptedRunner) Run(ctx context.Context, lane, prompt string) (agent.TurnDone, error) {
	b := r.bridge
	b.Publish(agent.UserMessage{Lane: lane, Text: prompt})
	b.Publish(agent.TextDelta{Lane: lane, Text: "Running the command."})
	b.Publish(agent.ToolCall{Lane: lane, ID: "b1", Tool: "bash", Effect: tools.EffectIrreversible, Input: raw(map[string]any{"command": "sleep 60"})})
	d, err := b.Approve(ctx, approvals.Request{ID: "b1", Lane: lane, Descriptor: descriptor("bash", tools.EffectIrreversible),
		Args: raw(map[string]any{"command": "sleep 60"}), Preview: tools.CommandPreview{Command: "sleep 60", Sandbox: "off"}})
	if err != nil {
		b.Publish(agent.TurnDone{Lane: lane, Stop: "interrupted"})
		return agent.TurnDone{Lane: lane, Stop: "interrupted"}, nil
	}
	r.decisions <- d
	b.Publish(agent.ApprovalDecided{Lane: lane, ID: "b1", Decision: string(d.Verdict), Scope: string(d.Scope)})
	if d.Verdict == approvals.Approve {
		b.Publish(agent.ToolStarted{Lane: lane, ID: "b1", Tool: "bash"})
		<-ctx.Done() // the command runs until interrupted
		b.Publish(agent.ToolResult{Lane: lane, ID: "b1", Refusal: tools.ToolCancelled, Message: "interrupted"})
	}
	b.Publish(agent.TurnDone{Lane: lane, Stop: "interrupted"})
	return agent.TurnDone{Lane: lane, Stop: "interrupted"}, nil
}

type vtConsole struct {
	emu *vt.SafeEmulator
	in  io.WriteCloser
	p   *tea.Program
	res chan error
}

// send types keys. They go straight into the program's input rather than
// through the emulator, whose SendText holds its lock while it blocks on
// its input pipe and so deadlocks against a renderer writing a frame.
func (c *vtConsole) send(keys string) { c.in.Write([]byte(keys)) }

func startVT(t *testing.T, r *scriptedRunner) *vtConsole {
	t.Helper()
	emu := vt.NewSafeEmulator(100, 30)
	m := New(Config{Runner: r, Env: themes.Env{Override: themes.Dark}})
	inR, inW := osPipe(t)
	go io.Copy(inW, emu) // the emulator's answers to the program's queries
	p := tea.NewProgram(m, tea.WithInput(inR), tea.WithOutput(emu), tea.WithWindowSize(100, 30), tea.WithoutSignals(),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	r.bridge.Attach(p)
	c := &vtConsole{emu: emu, in: inW, p: p, res: make(chan error, 1)}
	go func() { _, err := p.Run(); c.res <- err }()
	t.Cleanup(func() {
		// End the input first so the program's reader is not inside a
		// read when Kill closes it (cancelreader races there).
		inW.Close()
		time.Sleep(100 * time.Millisecond)
		p.Kill()
		<-c.res
		r.bridge.Close()
		// emu.Close is not called: in x/vt v0.1.0 it races with a Read
		// still blocked in the program's input reader.
	})
	return c
}

// waitFor polls the emulator's screen for text. Before each look it asks
// for a full repaint (a resize to the same size): x/vt v0.1.0 loses track
// of the renderer's partial, scrolled updates, while a full frame is drawn
// exactly (the real binary in tmux shows no such drift).
func (c *vtConsole) waitFor(t *testing.T, text string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.p.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
		time.Sleep(30 * time.Millisecond)
		s := ansi.Strip(c.emu.Render())
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q:\n%s", text, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestVTTypedAheadKeysDoNotAnswer sends the prompt and, in the same burst,
// the keys a hurried operator types next: they reach the program before or
// just after the dialog opens, and none of them answers it.
func TestVTTypedAheadKeysDoNotAnswer(t *testing.T) {
	r := &scriptedRunner{bridge: ui.NewBridge(), decisions: make(chan approvals.Decision, 1)}
	c := startVT(t, r)
	c.waitFor(t, "ask, or type a task")
	c.send("run it\r")
	for i := 0; i < 8; i++ {
		c.send("y")
		time.Sleep(30 * time.Millisecond)
	}
	c.waitFor(t, "Approve bash?")
	select {
	case d := <-r.decisions:
		t.Fatalf("typed-ahead keys answered: %+v", d)
	case <-time.After(600 * time.Millisecond):
	}
	c.send("s")
	select {
	case d := <-r.decisions:
		if d.Scope != approvals.ScopeSession {
			t.Fatalf("decision %+v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("s after the quiet period did not answer")
	}
	c.waitFor(t, "running…")
}

// TestVTEscInterruptsRunningCommand approves the command and interrupts it
// with esc.
func TestVTEscInterruptsRunningCommand(t *testing.T) {
	r := &scriptedRunner{bridge: ui.NewBridge(), decisions: make(chan approvals.Decision, 1)}
	c := startVT(t, r)
	c.waitFor(t, "ask, or type a task")
	c.send("run it\r")
	c.waitFor(t, "Approve bash?")
	time.Sleep(600 * time.Millisecond)
	c.send("y")
	<-r.decisions
	c.waitFor(t, "running…")
	c.send("\x1b")
	s := c.waitFor(t, "tool.cancelled")
	if !strings.Contains(s, "turn ended: interrupted") {
		c.waitFor(t, "turn ended: interrupted")
	}
}

// editRunner asks to write a file and reports the decision.
type editRunner struct {
	bridge    *ui.Bridge
	decisions chan approvals.Decision
}

func (r *editRunner) Run(ctx context.Context, lane, prompt string) (agent.TurnDone, error) {
	args := raw(map[string]any{"path": "greet.txt", "content": "hello world\n"})
	d, err := r.bridge.Approve(ctx, approvals.Request{ID: "w1", Lane: lane, Descriptor: descriptor("file_write", tools.EffectIrreversible),
		Args: args, Preview: tools.DiffPreview{Files: []tools.FileDiff{{Path: "greet.txt", Op: tools.FileCreate, New: "hello world\n"}}}})
	if err == nil {
		r.decisions <- d
	}
	return agent.TurnDone{Lane: lane, Stop: "end_turn"}, nil
}

// TestVTEditInEditorThenApprove presses e with an $EDITOR that rewrites the
// file, sees the edited diff, approves, and gets the edited arguments.
func TestVTEditInEditorThenApprove(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "sed -i s/hello/goodbye/")
	r := &editRunner{bridge: ui.NewBridge(), decisions: make(chan approvals.Decision, 1)}
	emu := vt.NewSafeEmulator(100, 30)
	m := New(Config{Runner: r, Env: themes.Env{Override: themes.Dark}})
	inR, inW := osPipe(t)
	go io.Copy(inW, emu)
	p := tea.NewProgram(m, tea.WithInput(inR), tea.WithOutput(emu), tea.WithWindowSize(100, 30), tea.WithoutSignals(),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	r.bridge.Attach(p)
	c := &vtConsole{emu: emu, in: inW, p: p, res: make(chan error, 1)}
	go func() { _, err := p.Run(); c.res <- err }()
	t.Cleanup(func() {
		inW.Close()
		time.Sleep(100 * time.Millisecond)
		p.Kill()
		<-c.res
		r.bridge.Close()
	})

	c.waitFor(t, "ask, or type a task")
	c.send("write it\r")
	c.waitFor(t, "Approve file_write?")
	time.Sleep(600 * time.Millisecond)
	c.send("e")
	c.waitFor(t, "goodbye world")
	c.waitFor(t, "approving runs the edited version")
	time.Sleep(600 * time.Millisecond)
	c.send("y")
	select {
	case d := <-r.decisions:
		if d.Verdict != approvals.Approve || !strings.Contains(string(d.EditedArgs), `"content":"goodbye world\n"`) {
			t.Fatalf("decision %+v, edited %s", d, d.EditedArgs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no decision after y")
	}
}

// osPipe is the program's input. It must be a file, not an io.Pipe: a
// program running $EDITOR hands its input to the child, and os/exec waits
// forever for a copying goroutine when that input is not a file.
func osPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, w
}
