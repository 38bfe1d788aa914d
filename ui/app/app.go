// Package app is the console's root Bubble Tea model: it lays out the
// status bar, transcript, plan and desk panes, input, lanes bar and help,
// folds agent events into them, runs turns, and floats the approval modal
// over the dimmed screen when the agent asks.
package app

import (
	"context"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/themes"
	"staage/ui"
	"staage/ui/diffview"
	"staage/ui/input"
	"staage/ui/markdown"
	"staage/ui/modal"
	"staage/ui/panes"
	"staage/ui/status"
	"staage/ui/transcript"
)

// Runner runs one turn; it is what the console needs of agent.Session.
type Runner interface {
	Run(ctx context.Context, lane, prompt string) (agent.TurnDone, error)
}

// Config sets up the console.
type Config struct {
	Runner Runner
	// Info fills the status bar (model, sandbox, workspace, demo).
	Info status.Info
	// AutoPrompt is sent as soon as the console starts (the demo).
	AutoPrompt string
	// BootReport lines are shown at the top of the transcript.
	BootReport []string
	// History is a resumed session's journaled events, folded through the
	// same reducers as live ones before the console starts.
	History []agent.Event
	// Env picks the theme; DarkBackground is updated from the terminal.
	Env themes.Env
	// Notify enables OSC 9 desktop notifications with the bell.
	Notify bool
	// Now is the clock (time.Now when nil); tests drive the grace period.
	Now func() time.Time
	// Context is the parent of every turn.
	Context context.Context
	// SystemPrompt is what the model is told; alt+s shows it.
	SystemPrompt string
}

// Focus is the pane that receives keys.
type Focus int

// Focusable panes, in tab order.
const (
	FocusInput Focus = iota
	FocusTranscript
	FocusPlan
	FocusDesk
	focusCount
)

type (
	frameMsg      struct{}
	autoPromptMsg struct{ text string }
	turnDoneMsg   struct {
		done agent.TurnDone
		err  error
	}
	quitDisarmMsg struct{ at time.Time }
)

const flashInterrupting = "interrupting…"

// QuitWindow is how long the first ctrl+c waits for the second.
const QuitWindow = 2 * time.Second

// Model is the console.
type Model struct {
	cfg   Config
	now   func() time.Time
	ctx   context.Context
	theme themes.Theme
	md    *markdown.Renderer
	hl    *diffview.Highlighter

	lanes       []status.Lane
	lane        string
	transcripts map[string]*transcript.Transcript
	plans       map[string]*panes.Plan
	desks       map[string]*panes.Desk

	input *input.Model
	modal *modal.Model
	info  status.Info

	w, h               int
	focus              Focus
	showPlan, showDesk bool
	help               bool
	system             systemView
	running            bool
	cancel             context.CancelFunc
	frameScheduled     bool
	quitArmed          time.Time
	flash              string
	themeLocked        bool
	// dimSrc and dimOut cache the dimmed background behind the modal.
	dimSrc string
	dimOut []string
}

// New builds the console.
func New(cfg Config) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	m := &Model{
		cfg: cfg, now: cfg.Now, ctx: cfg.Context, info: cfg.Info,
		lane:        agent.MainLane,
		transcripts: map[string]*transcript.Transcript{},
		plans:       map[string]*panes.Plan{},
		desks:       map[string]*panes.Desk{},
		showPlan:    true, showDesk: true,
		system: systemView{text: cfg.SystemPrompt},
		w:      80, h: 24,
	}
	if cfg.Env.Override == "" && cfg.Env.NoColor == "" {
		cfg.Env.DarkBackground = true
	} else {
		m.themeLocked = true
	}
	m.applyTheme(themes.Select(cfg.Env))
	m.input = input.New(m.theme)
	m.modal = modal.New(m.theme, m.hl, m.now)
	m.ensureLane(agent.MainLane)
	t := m.transcripts[agent.MainLane]
	for _, e := range cfg.History {
		m.event(e)
	}
	for _, tr := range m.transcripts {
		tr.Settle()
	}
	m.frameScheduled = false
	for _, l := range cfg.BootReport {
		t.Notice(transcript.LevelInfo, l)
	}
	m.layout()
	return m
}

// EnvFromOS reads NO_COLOR and STAAGE_THEME.
func EnvFromOS() themes.Env {
	return themes.Env{NoColor: os.Getenv("NO_COLOR"), Override: os.Getenv("STAAGE_THEME"), DarkBackground: true}
}

// NotifySupported guesses whether the terminal shows OSC 9 notifications.
func NotifySupported() bool {
	switch os.Getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "ghostty":
		return true
	}
	return strings.Contains(os.Getenv("TERM"), "kitty")
}

func (m *Model) applyTheme(p themes.Palette) {
	m.theme = themes.New(p)
	m.md = markdown.New(p)
	m.hl = diffview.NewHighlighter(p)
	for lane, t := range m.transcripts {
		t.SetTheme(m.theme, m.md)
		m.plans[lane].SetTheme(m.theme)
		m.desks[lane].SetTheme(m.theme, m.md)
	}
	if m.modal != nil {
		m.modal.SetTheme(m.theme, m.hl)
	}
	if m.input != nil {
		m.input.SetTheme(m.theme)
	}
}

func (m *Model) ensureLane(lane string) {
	if lane == "" {
		lane = agent.MainLane
	}
	if _, ok := m.transcripts[lane]; ok {
		return
	}
	t := transcript.New(m.theme, m.md)
	m.transcripts[lane] = t
	m.plans[lane] = panes.NewPlan(m.theme)
	m.desks[lane] = panes.NewDesk(m.theme, m.md)
	m.lanes = append(m.lanes, status.Lane{Name: lane})
	m.layout()
}

// Transcript returns the transcript of a lane (tests, benchmarks).
func (m *Model) Transcript(lane string) *transcript.Transcript { return m.transcripts[lane] }

// Modal returns the approval modal (tests).
func (m *Model) Modal() *modal.Model { return m.modal }

// Running reports whether a turn is running.
func (m *Model) Running() bool { return m.running }

// Init starts the console.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.cfg.AutoPrompt != "" {
		text := m.cfg.AutoPrompt
		cmds = append(cmds, func() tea.Msg { return autoPromptMsg{text: text} })
	}
	return tea.Batch(cmds...)
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.BackgroundColorMsg:
		if !m.themeLocked {
			env := m.cfg.Env
			env.DarkBackground = msg.IsDark()
			if p := themes.Select(env); p.Name != m.theme.Name {
				m.applyTheme(p)
			}
		}
		return m, nil
	case ui.EventMsg:
		return m, m.event(msg.Event)
	case frameMsg:
		m.frameScheduled = false
		for _, t := range m.transcripts {
			t.Settle()
		}
		return m, nil
	case modal.OpenMsg:
		cmd := m.modal.Open(msg.Request)
		m.info.Pending = m.modal.Len()
		m.layout()
		return m, tea.Batch(cmd, m.bell())
	case modal.CancelMsg:
		cmd := m.modal.Cancel(msg.Key)
		m.info.Pending = m.modal.Len()
		return m, cmd
	case modal.AnsweredMsg:
		m.info.Pending = m.modal.Len()
		return m, nil
	case autoPromptMsg:
		return m, m.startTurn(msg.text)
	case input.SubmitMsg:
		if m.running {
			m.flash = "a turn is running: esc interrupts it"
			return m, nil
		}
		return m, m.startTurn(msg.Text)
	case turnDoneMsg:
		m.running, m.cancel = false, nil
		m.info.Running = false
		if m.flash == flashInterrupting {
			m.flash = ""
		}
		if msg.err != nil {
			m.transcripts[m.lane].Notice(transcript.LevelError, msg.err.Error())
		}
		return m, nil
	case quitDisarmMsg:
		if m.quitArmed.Equal(msg.at) {
			m.quitArmed = time.Time{}
			m.flash = ""
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseWheelMsg:
		m.wheel(msg)
		return m, nil
	case tea.MouseClickMsg:
		m.click(msg)
		return m, nil
	case tea.PasteMsg, tea.PasteStartMsg, tea.PasteEndMsg:
		if m.focus == FocusInput && !m.modal.Visible() {
			cmd := m.input.Update(msg)
			m.layout()
			return m, cmd
		}
		return m, nil
	}
	if cmd, ok := m.modal.Update(msg); ok {
		return m, cmd
	}
	if m.focus == FocusInput {
		return m, m.input.Update(msg)
	}
	return m, nil
}

// event folds one agent event into the console.
func (m *Model) event(e agent.Event) tea.Cmd {
	lane := laneOf(e)
	m.ensureLane(lane)
	switch ev := e.(type) {
	case agent.PlanChanged:
		m.plans[lane].SetSteps(ev.Steps)
		return nil
	case agent.DeskChanged:
		m.desks[lane].SetPage(lane, ev.Page)
		return nil
	case agent.UsageReport:
		m.info.InputTokens += ev.Usage.InputTokens
		m.info.OutputTokens += ev.Usage.OutputTokens
		if ev.CostUSD > 0 {
			m.info.CostUSD += ev.CostUSD
			m.info.CostKnown = true
		}
		return nil
	case agent.ChildStarted:
		m.ensureLane(ev.Child)
		m.setLaneState(ev.Child, "running")
	case agent.ChildFinished:
		m.setLaneState(ev.Child, ev.Status)
	}
	m.transcripts[lane].Apply(e)
	switch e.(type) {
	case agent.TextDelta, agent.ThinkingDelta:
		if !m.frameScheduled {
			m.frameScheduled = true
			return tea.Tick(time.Second/60, func(time.Time) tea.Msg { return frameMsg{} })
		}
	}
	return nil
}

func laneOf(e agent.Event) string {
	var lane string
	switch ev := e.(type) {
	case agent.UserMessage:
		lane = ev.Lane
	case agent.TextDelta:
		lane = ev.Lane
	case agent.ThinkingDelta:
		lane = ev.Lane
	case agent.AssistantMessage:
		lane = ev.Lane
	case agent.ToolCall:
		lane = ev.Lane
	case agent.ApprovalAsked:
		lane = ev.Lane
	case agent.ApprovalDecided:
		lane = ev.Lane
	case agent.ToolStarted:
		lane = ev.Lane
	case agent.ToolResult:
		lane = ev.Lane
	case agent.PlanChanged:
		lane = ev.Lane
	case agent.DeskChanged:
		lane = ev.Lane
	case agent.ChildStarted:
		lane = ev.Lane
	case agent.ChildFinished:
		lane = ev.Lane
	case agent.UsageReport:
		lane = ev.Lane
	case agent.TurnDone:
		lane = ev.Lane
	case agent.Error:
		lane = ev.Lane
	case agent.Warning:
		lane = ev.Lane
	}
	if lane == "" {
		lane = agent.MainLane
	}
	return lane
}

func (m *Model) setLaneState(lane, state string) {
	for i := range m.lanes {
		if m.lanes[i].Name == lane {
			m.lanes[i].State = state
		}
	}
}

// startTurn runs the prompt on the current lane in a command; esc cancels
// its context, which interrupts the running tool.
func (m *Model) startTurn(text string) tea.Cmd {
	if m.cfg.Runner == nil {
		m.transcripts[m.lane].Notice(transcript.LevelError, "no agent is connected")
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.running, m.cancel = true, cancel
	m.info.Running = true
	m.transcripts[m.lane].ScrollToBottom()
	runner, lane := m.cfg.Runner, m.lane
	return func() tea.Msg {
		td, err := runner.Run(ctx, lane, text)
		cancel()
		return turnDoneMsg{done: td, err: err}
	}
}

// Interrupt cancels the running turn.
func (m *Model) Interrupt() bool {
	if m.cancel == nil {
		return false
	}
	m.cancel()
	m.flash = flashInterrupting
	return true
}

func (m *Model) bell() tea.Cmd { return tea.Raw(bellSequence(m.cfg.Notify)) }

// bellSequence announces a pending approval: the bell, and an OSC 9
// desktop notification on terminals that show one. Its text is fixed: no
// untrusted text ever goes into a sequence.
func bellSequence(notify bool) string {
	if notify {
		return "\a\x1b]9;staage: approval needed\x07"
	}
	return "\a"
}
