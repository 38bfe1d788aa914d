// Package delegate offers children: task starts a child thread in its own
// lane (a read-only scout, or a write child in a disposable git worktree)
// and returns its typed envelope; apply_change lands a finished write
// child's diff in the main checkout, the one writer there.
//
// Running a child is the agent loop's job. This package defines what it
// consumes (ChildRunner), owns the worktrees, and turns both into tools.
package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"staage/tools"
)

// Child modes.
const (
	ModeScout = "scout"
	ModeWrite = "write"
)

// Envelope statuses.
const (
	StatusDone   = "done"
	StatusFailed = "failed"
	StatusCut    = "cut"
)

// ChildSpec is what the loop needs to start a child.
type ChildSpec struct {
	ParentLane string
	Objective  string
	Mode       string // ModeScout or ModeWrite
	// Workdir is the worktree a write child's file tools are rooted in;
	// "" for scouts, which read the parent's workspace.
	Workdir string
	// Change is the id a write child's diff will have for apply_change
	// if it finishes with edits (so the runner's events can name it);
	// "" for scouts.
	Change string
}

// Envelope is a child's typed answer.
type Envelope struct {
	Status   string   `json:"status"` // done | failed | cut
	Summary  string   `json:"summary"`
	Findings []string `json:"findings"`
	Files    []string `json:"files"`
	// Change names a finished write child's diff, for apply_change.
	Change string `json:"change,omitempty"`
}

// ChildRunner runs one child thread to its end. It returns an error only
// when the child could not run at all; a child that ran and failed answers
// with Status failed (or cut, when a budget or an interrupt stopped it).
type ChildRunner interface {
	RunChild(ctx context.Context, spec ChildSpec) (Envelope, error)
}

// Deps are what the family needs from the boot.
type Deps struct {
	Runner ChildRunner
	// Repo is the main checkout (any directory inside it).
	Repo string
	// WorktreeRoot holds write children's worktrees; it must be outside
	// the main checkout. "" means no write mode and no apply_change.
	WorktreeRoot string
}

// Limits on what a child's envelope may carry back into the parent's
// context.
const (
	MaxObjectiveRunes = 4000
	MaxSummaryBytes   = 8 << 10
	MaxFindings       = 50
	MaxFindingRunes   = 2000
	MaxFiles          = 200
)

// Declarations returns task, and apply_change when a worktree root is
// named. Without a runner delegation is off and nothing is declared.
func Declarations(deps Deps) []tools.Declaration {
	if deps.Runner == nil {
		return nil
	}
	var wt *Worktrees
	if deps.WorktreeRoot != "" && deps.Repo != "" {
		wt = NewWorktrees(deps.Repo, deps.WorktreeRoot)
	}
	decls := []tools.Declaration{taskDeclaration(deps.Runner, wt)}
	if wt != nil {
		decls = append(decls, applyDeclaration(wt))
	}
	return decls
}

func taskDeclaration(runner ChildRunner, wt *Worktrees) tools.Declaration {
	modes := `["scout"]`
	desc := "Delegate one bounded, read-only investigation to a child thread (mode scout: file_read, file_find, " +
		"file_search, skills, plan; no writes, no bash) and get back a typed envelope {status, summary, findings, files}. " +
		"The objective must say what to find, where, and what answer to bring back."
	if wt != nil {
		modes = `["scout","write"]`
		desc += " Mode write runs the child in a disposable git worktree of the current checkout with file_read, " +
			"file_edit and file_write (no bash); a finished write child's envelope names a change that apply_change can land."
	}
	return tools.Declaration{
		Origin:      tools.BuiltinOrigin,
		RawName:     "task",
		Description: desc,
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"objective":{"type":"string"},` +
			`"mode":{"type":"string","enum":` + modes + `}},` +
			`"required":["objective","mode"],"additionalProperties":false}`),
		Policy:  tools.Never,
		Effect:  tools.EffectRead,
		Handler: &taskHandler{runner: runner, wt: wt},
	}
}

// TaskPayload is task's answer: the child's envelope, bounded.
type TaskPayload struct {
	Envelope
	Mode string `json:"mode"`
	// Discarded names files a write child changed without finishing
	// (status failed or cut); its worktree was removed with them.
	Discarded []string `json:"discarded,omitempty"`
	tools.Bounds
}

type taskHandler struct {
	runner ChildRunner
	wt     *Worktrees
}

func (h *taskHandler) Run(ctx context.Context, call tools.Call) tools.Result {
	var args struct {
		Objective string `json:"objective"`
		Mode      string `json:"mode"`
	}
	if err := call.Decode(&args); err != nil {
		return tools.Refuse(tools.ArgsInvalid, "task arguments: "+err.Error())
	}
	objective, problem := checkObjective(args.Objective)
	if problem != "" {
		return tools.Refuse(tools.TaskObjective, problem)
	}
	switch args.Mode {
	case ModeScout:
		return h.scout(ctx, call.Lane, objective)
	case ModeWrite:
		if h.wt == nil {
			return tools.Refuse(tools.TaskMode, "write children need a worktree root, and this session has none; use mode scout")
		}
		return h.write(ctx, call.Lane, objective)
	default:
		return tools.Refuse(tools.TaskMode, fmt.Sprintf("mode %q; want scout or write", args.Mode))
	}
}

func (h *taskHandler) scout(ctx context.Context, lane, objective string) tools.Result {
	env, err := h.runner.RunChild(ctx, ChildSpec{ParentLane: lane, Objective: objective, Mode: ModeScout})
	if err != nil {
		return runFailure(ctx, err)
	}
	env.Change = "" // a scout has no worktree; a change it names is not one
	p := TaskPayload{Mode: ModeScout}
	p.Envelope, p.Bounds = bound(env)
	return tools.Ok{Payload: p}
}

func (h *taskHandler) write(ctx context.Context, lane, objective string) tools.Result {
	wt, err := h.wt.Create(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Refuse(tools.ToolCancelled, "the task was interrupted while its worktree was being made")
		}
		return tools.Refuse(tools.ToolFailed, "the write child's worktree could not be made: "+err.Error())
	}
	// Cleanup must run even when the turn was interrupted.
	cctx := context.WithoutCancel(ctx)
	env, err := h.runner.RunChild(ctx, ChildSpec{ParentLane: lane, Objective: objective, Mode: ModeWrite, Workdir: wt.Dir, Change: wt.ID})
	if err != nil {
		_ = h.wt.Remove(cctx, wt.ID)
		return runFailure(ctx, err)
	}
	ch, err := h.wt.Diff(cctx, wt.ID)
	if err != nil {
		_ = h.wt.Remove(cctx, wt.ID)
		return tools.Refuse(tools.ToolFailed, "the write child's change could not be read: "+err.Error())
	}
	p := TaskPayload{Mode: ModeWrite}
	env.Change = ""
	// The files of a write child are what its diff touches, not what it
	// says it touched.
	changed := make([]string, 0, len(ch.Files))
	for _, f := range ch.Files {
		changed = append(changed, f.Path)
	}
	switch {
	case ch.Empty():
		_ = h.wt.Remove(cctx, wt.ID)
		env.Files = changed
	case env.Status == StatusDone:
		env.Change = wt.ID
		env.Files = changed
	default:
		// Only a finished child's diff is offered to apply_change; a
		// half-done edit would land half a change.
		_ = h.wt.Remove(cctx, wt.ID)
		env.Files = nil
		p.Discarded = changed
	}
	p.Envelope, p.Bounds = bound(env)
	return tools.Ok{Payload: p}
}

func runFailure(ctx context.Context, err error) *tools.Refusal {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return tools.Refuse(tools.ToolCancelled, "the task was interrupted before the child answered")
	}
	return tools.Refuse(tools.ToolFailed, "the child could not run: "+err.Error())
}

// bound normalizes an envelope from the runner: a status outside the three
// becomes failed (saying so), and every text is clipped to the limits, with
// the bounds reporting it.
func bound(env Envelope) (Envelope, tools.Bounds) {
	var b tools.Bounds
	switch env.Status {
	case StatusDone, StatusFailed, StatusCut:
	default:
		env.Summary = fmt.Sprintf("(the child answered with status %q, read as failed) %s", env.Status, env.Summary)
		env.Status = StatusFailed
	}
	if len(env.Summary) > MaxSummaryBytes {
		env.Summary = clipBytes(env.Summary, MaxSummaryBytes)
		b.Truncated = true
	}
	if len(env.Findings) > MaxFindings {
		env.Findings = env.Findings[:MaxFindings]
		b.Truncated = true
	}
	findings := make([]string, 0, len(env.Findings))
	for _, f := range env.Findings {
		if utf8.RuneCountInString(f) > MaxFindingRunes {
			f = string([]rune(f)[:MaxFindingRunes]) + "…"
			b.ClippedLines++
		}
		findings = append(findings, f)
	}
	env.Findings = findings
	if len(env.Files) > MaxFiles {
		env.Files = env.Files[:MaxFiles]
		b.Truncated = true
	}
	if env.Files == nil {
		env.Files = []string{}
	}
	return env, b
}

func clipBytes(s string, n int) string {
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
