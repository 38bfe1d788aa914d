package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
	"staage/tools/delegate"
	"staage/tools/notes"
	"staage/tools/rails"
	"staage/tools/shell/sandbox"
	"staage/tools/skills"
	"staage/tools/toolset"
	"staage/tools/workspace"
)

// bootRuntime is one composed boot: everything the console or a headless run
// needs, and what the operator is told about it.
type bootRuntime struct {
	Session      *agent.Session
	Toolset      *tools.Toolset
	Report       tools.Report
	Workspace    string
	ProviderName string
	// Sandbox is the one-line statement of bash's containment.
	Sandbox string
	Demo    bool
	// DemoPrompt is sent automatically when the demo starts.
	DemoPrompt string
	// System is the system prompt the model is given.
	System string
	// BootReport is the boot report in lines for the operator.
	BootReport []string
	// Restored is set when a journaled session was resumed; History holds
	// the replayed events, for the console to rebuild its screen.
	Restored *agent.Restored
	History  []agent.Event
	// Close releases the sandbox, the journal and a demo workspace.
	Close func()
}

// closers runs cleanups in reverse order.
type closers []func()

func (c *closers) add(f func()) { *c = append(*c, f) }

func (c closers) run() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

// compose builds a runtime. approver is nil for headless runs (nobody can
// approve); sink receives every event after the journal has it.
func compose(ctx context.Context, opts bootOptions, approver approvals.Approver, sink agent.Sink) (_ *bootRuntime, err error) {
	var cl closers
	defer func() {
		if err != nil {
			cl.run()
		}
	}()
	model, err := loadModel(ctx, opts)
	if err != nil {
		return nil, err
	}
	cl.add(model.close)
	dir := opts.Workspace
	if model.workspace != "" {
		dir = model.workspace
	}
	tb, err := composeTools(ctx, opts, dir)
	if err != nil {
		return nil, err
	}
	cl.add(tb.close)
	rt := &bootRuntime{
		Toolset: tb.toolset, Report: tb.report, Workspace: tb.ws.Dir(),
		ProviderName: model.provider.Name(), Sandbox: tb.sandbox.Describe(),
		Demo: model.demo, DemoPrompt: model.demoPrompt, System: model.system,
		BootReport: append(append([]string(nil), model.lines...), tb.lines...),
	}

	auto, err := approvals.ParseAuto(opts.Auto)
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	if len(auto) > 0 {
		rt.BootReport = append(rt.BootReport, fmt.Sprintf("--auto: %v run without asking for this session", auto))
	}
	gate := approvals.NewGate(approvals.GateConfig{Approver: approver, Always: tb.always, Auto: auto})

	sinks := agent.Fanout{}
	jr, err := startJournal(ctx, opts, rt, sink, model.secrets)
	if err != nil {
		return nil, err
	}
	if jr != nil {
		cl.add(jr.close)
		sinks = append(sinks, jr.sink)
	}
	sinks = append(sinks, sink)

	rt.Session = agent.NewSession(agent.SessionConfig{
		Provider: model.provider, Toolset: tb.toolset, Gate: gate, Sink: sinks,
		System: model.system, MaxSteps: opts.MaxSteps, MaxTokens: model.maxTokens,
		Sandbox: rt.Sandbox, Cost: model.cost,
	})
	tb.children.session, tb.children.gate, tb.children.notes = rt.Session, gate, tb.notes
	// From here on, what an MCP server does (exits, changes a tool) is
	// shown as it happens.
	tb.notices.attach(sink)
	if jr != nil && jr.replay != nil {
		restored := rt.Session.Restore(jr.replay)
		rt.Restored, rt.History = &restored, jr.replay
		rt.BootReport = append(rt.BootReport, restored.Notes...)
		// Tools keep their own state across a resume: plans and desk
		// pages live in the notes store.
		for _, lane := range rt.Session.State().Lanes() {
			ls, _ := rt.Session.State().Lane(lane)
			tb.notes.Restore(lane, ls.Plan, ls.Desk)
		}
		model.resumed(jr.replay)
	}
	rt.Close = cl.run
	return rt, nil
}

// toolBoot is the tool half of a boot: workspace, sandbox, grants, catalog.
type toolBoot struct {
	ws       *workspace.Root
	sandbox  sandbox.Sandbox
	always   *approvals.GrantFile
	notes    *notes.Store
	children *childRunner
	notices  *lateNotices
	toolset  *tools.Toolset
	report   tools.Report
	lines    []string
	close    func()
}

func composeTools(ctx context.Context, opts bootOptions, dir string) (_ *toolBoot, err error) {
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("workspace %s: %v", dir, err)}
	}
	tb := &toolBoot{ws: ws, notes: notes.NewStore(), children: &childRunner{}, notices: &lateNotices{}, close: func() {}}
	if swept, err := ws.SweepTemps(ctx); err == nil && swept > 0 {
		tb.lines = append(tb.lines, fmt.Sprintf("swept %d temporary file(s) left by an interrupted write", swept))
	}
	tb.sandbox, err = sandbox.Probe(ctx, opts.Sandbox)
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	tb.close = func() { _ = tb.sandbox.Close() }
	defer func() {
		if err != nil {
			tb.close()
		}
	}()

	if opts.Worktrees != "" {
		if !opts.Delegate {
			return nil, &exitError{code: 2, msg: "--worktrees needs --delegate (write children are started by task)"}
		}
		if err := delegate.NewWorktrees(ws.Dir(), opts.Worktrees).Validate(ctx); err != nil {
			return nil, &exitError{code: 2, msg: "--worktrees: " + err.Error()}
		}
	}
	keyPath, err := xdg.ConfigFile(filepath.Join("staage", "grant-key"))
	if err != nil {
		return nil, fmt.Errorf("grant key: %w", err)
	}
	if tb.always, err = approvals.OpenGrantFile(ws.Dir(), keyPath); err != nil {
		return nil, err
	}
	tb.lines = append(tb.lines, tb.always.Problems()...)

	extra, err := connectMCP(ctx, opts, tb)
	if err != nil {
		return nil, err
	}

	userSkills, _ := xdg.ConfigFile(filepath.Join("staage", "skills"))
	tb.toolset, tb.report, err = toolset.Compose(toolset.Options{
		Workspace: ws, Sandbox: tb.sandbox, Env: os.Environ(), BashTimeout: opts.BashTimeout,
		Scratch: opts.Scratch, Notes: tb.notes,
		Skills:     skills.Dirs{Workspace: filepath.Join(ws.Dir(), ".staage", "skills"), User: userSkills},
		Delegation: opts.Delegate, Children: tb.children, WorktreeRoot: opts.Worktrees,
		DevCheck: opts.DevCheck, Rails: rails.FromEnv(os.Getenv), RequireRails: opts.RequireRails,
		Extra: extra,
	})
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	for _, n := range tb.report.Notes {
		tb.lines = append(tb.lines, n.Message)
	}
	if opts.Worktrees != "" {
		// Worktrees live on disk: a crashed session's finished children
		// are still there, and apply_change can land them.
		if ids, err := delegate.NewWorktrees(ws.Dir(), opts.Worktrees).List(ctx); err == nil && len(ids) > 0 {
			tb.lines = append(tb.lines, fmt.Sprintf("pending child changes: %s (apply_change lands one)", strings.Join(ids, ", ")))
		}
	}
	return tb, nil
}
