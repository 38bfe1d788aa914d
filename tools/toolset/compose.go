// Package toolset is the one declaration site of staage: Compose turns the
// boot's options into the Toolset the loop dispatches to and the provider
// renders, and a boot report that says in words what was offered, what was
// not, and why.
package toolset

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"staage/tools"
	"staage/tools/delegate"
	"staage/tools/devcheck"
	"staage/tools/fs"
	"staage/tools/notes"
	"staage/tools/rails"
	"staage/tools/scratch"
	"staage/tools/shell"
	"staage/tools/shell/sandbox"
	"staage/tools/skills"
	"staage/tools/workspace"
)

// AlwaysPresent are the eleven tools every shipped boot offers.
var alwaysPresent = []string{
	"bash", "desk", "file_edit", "file_find", "file_read", "file_search",
	"file_write", "plan", "scratch_read", "skill_list", "skill_load",
}

// AlwaysPresent returns the eleven names (a copy).
func AlwaysPresent() []string { return slices.Clone(alwaysPresent) }

// MaxBuiltin is the spec's ceiling on built-in names.
const MaxBuiltin = 17

// Options is everything a boot decides about the catalog.
type Options struct {
	Workspace *workspace.Root
	Sandbox   sandbox.Sandbox
	// Env is the console's environment; bash scrubs it before use.
	Env         []string
	BashTimeout time.Duration
	// Scratch is the --scratch directory ("" = scratch_read answers
	// scratch.unavailable).
	Scratch string
	Skills  skills.Dirs
	Notes   *notes.Store

	// Delegation offers task; Children runs the child threads.
	Delegation bool
	Children   delegate.ChildRunner
	// WorktreeRoot enables write children and apply_change.
	WorktreeRoot string

	// DevCheck composes dev_check in place of bash: a dev tree boot runs
	// its gate scripts, not free commands.
	DevCheck bool

	Rails        rails.Config
	RequireRails bool

	// Extra declarations from other origins (MCP servers).
	Extra []tools.Declaration
}

// Compose builds the toolset. It fails only on a boot that cannot keep its
// promises (--require-rails without credentials, more built-in names than the
// spec allows); everything else is reported.
func Compose(opts Options) (*tools.Toolset, tools.Report, error) {
	if opts.Workspace == nil {
		return nil, tools.Report{}, fmt.Errorf("toolset: no workspace")
	}
	if opts.Notes == nil {
		opts.Notes = notes.NewStore()
	}
	var info []tools.Note
	say := func(format string, a ...any) {
		info = append(info, tools.Note{Kind: tools.NoteInfo, Message: fmt.Sprintf(format, a...)})
	}

	var decls []tools.Declaration
	decls = append(decls, fs.Declarations(opts.Workspace)...)
	decls = append(decls, scratch.Declarations(opts.Scratch)...)
	decls = append(decls, skills.Declarations(opts.Skills)...)
	decls = append(decls, notes.Declarations(opts.Notes)...)
	if opts.Scratch == "" {
		say("scratch_read: no --scratch directory; it answers scratch.unavailable")
	}

	if opts.DevCheck {
		decls = append(decls, devcheck.Declarations(devcheck.Deps{Workspace: opts.Workspace.Dir(), Sandbox: opts.Sandbox})...)
		say("dev_check is offered in place of bash (--dev-check)")
	} else {
		decls = append(decls, shell.Declarations(shell.Deps{
			Workspace: opts.Workspace.Dir(), Sandbox: opts.Sandbox, Timeout: opts.BashTimeout, Env: opts.Env,
		})...)
	}
	say("%s", opts.Sandbox.Report())

	if opts.Delegation {
		if opts.Children == nil {
			return nil, tools.Report{}, fmt.Errorf("toolset: delegation is on but nothing runs child threads")
		}
		decls = append(decls, delegate.Declarations(delegate.Deps{
			Runner: opts.Children, Repo: opts.Workspace.Dir(), WorktreeRoot: opts.WorktreeRoot,
		})...)
		if opts.WorktreeRoot == "" {
			say("task: scout children only; name a worktree root (--worktrees) for write children and apply_change")
		}
	} else {
		say("task is not offered: delegation is off (--delegate turns it on)")
	}

	railDecls := rails.Declarations(opts.Rails)
	missing := opts.Rails.Missing()
	if opts.RequireRails && len(missing) > 0 {
		return nil, tools.Report{}, fmt.Errorf("--require-rails: %s", strings.Join(missing, "; "))
	}
	for _, m := range missing {
		say("rail not offered — %s", m)
	}
	decls = append(decls, railDecls...)
	decls = append(decls, opts.Extra...)

	ts, rep := tools.NewToolset(decls)
	builtin := 0
	for _, d := range ts.Descriptors() {
		if d.Origin == tools.BuiltinOrigin {
			builtin++
		}
	}
	if builtin > MaxBuiltin {
		return nil, rep, fmt.Errorf("toolset: %d built-in tools composed; the spec allows at most %d", builtin, MaxBuiltin)
	}
	rep.Notes = append(info, rep.Notes...)
	return ts, rep, nil
}

// ComposeWriteChild builds a write child's catalog: the file tools rooted in
// its worktree and the plan, nothing that runs a process. The digests equal
// the parent's (same origin, name, schema, effect), so the operator's
// standing grants mean the same thing in both.
func ComposeWriteChild(worktree *workspace.Root, store *notes.Store) (*tools.Toolset, tools.Report) {
	var decls []tools.Declaration
	decls = append(decls, fs.Declarations(worktree)...)
	decls = append(decls, notes.Declarations(store)...)
	ts, rep := tools.NewToolset(decls)
	return ts.Narrow(tools.WriteChild()), rep
}
