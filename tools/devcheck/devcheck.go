// Package devcheck is the dev_check tool: one gate script of the workspace
// (script/check-<name>.sh) run inside a disposable copy of the repository,
// under the sandbox mode of the session. The copy is a git worktree of a
// snapshot commit of the working tree as it is (tracked changes and untracked
// files included), taken with a private index so the operator's index and
// branches are never touched; it is removed when the gate ends.
package devcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"staage/tools"
	"staage/tools/shell/sandbox"
)

// DefaultTimeout bounds one gate when Deps gives none.
const DefaultTimeout = 10 * time.Minute

// Deps is what dev_check needs from the composition.
type Deps struct {
	Workspace string
	Sandbox   sandbox.Sandbox
	Timeout   time.Duration
	Env       []string // the console's environment, before scrubbing; nil means this process's
}

// Declarations declares dev_check (REQUIRED, irreversible). The shipped boot
// composes it only with --dev-check.
func Declarations(deps Deps) []tools.Declaration {
	if deps.Timeout <= 0 {
		deps.Timeout = DefaultTimeout
	}
	if deps.Env == nil {
		// A gate needs the operator's PATH (git, go, linters); credentials
		// are removed by the sandbox whatever the mode.
		deps.Env = os.Environ()
	}
	return []tools.Declaration{{
		Origin:  tools.BuiltinOrigin,
		RawName: "dev_check",
		Description: "Run one gate script of the workspace, script/check-<gate>.sh, inside a disposable git worktree " +
			"holding the working tree as it is now (uncommitted and untracked files included), under the session's " +
			"sandbox. Returns the gate's exit code and bounded output; the copy is removed afterwards. " +
			"An unknown gate is refused as check.unknown with the list of gates.",
		Schema: []byte(`{"type":"object","additionalProperties":false,"required":["gate"],"properties":{` +
			`"gate":{"type":"string","pattern":"^[a-z0-9][a-z0-9_-]{0,63}$","description":"the gate name: \"lint\" runs script/check-lint.sh"}}}`),
		Policy:  tools.Required,
		Effect:  tools.EffectIrreversible,
		Handler: &handler{deps: deps},
	}}
}

// Output is the gate's result. A failing gate is a result, not a refusal:
// Passed says which.
type Output struct {
	Gate       string `json:"gate"`
	Script     string `json:"script"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exitCode"`
	Output     string `json:"output"`
	DurationMs int64  `json:"durationMs"`
	Sandbox    string `json:"sandbox"`
	tools.Bounds
}

type handler struct {
	deps Deps
}

var _ tools.Previewer = (*handler)(nil)

var gateName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Gates lists the gate names of a workspace: script/check-*.sh that are
// regular files (a symlink could lead anywhere).
func Gates(workspace string) []string {
	m, _ := filepath.Glob(filepath.Join(workspace, "script", "check-*.sh"))
	var out []string
	for _, p := range m {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "check-"), ".sh")
		if gateName.MatchString(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (h *handler) gate(call tools.Call) (string, *tools.Refusal) {
	var a struct {
		Gate string `json:"gate"`
	}
	if err := call.Decode(&a); err != nil {
		return "", tools.Refuse(tools.ArgsInvalid, "dev_check: "+err.Error())
	}
	gates := Gates(h.deps.Workspace)
	for _, g := range gates {
		if g == a.Gate {
			return g, nil
		}
	}
	msg := fmt.Sprintf("no gate script/check-%s.sh in the workspace", a.Gate)
	if len(gates) == 0 {
		msg += "; the workspace has no script/check-*.sh"
	} else {
		msg += "; gates: " + strings.Join(gates, ", ")
	}
	return "", tools.Refuse(tools.CheckUnknown, msg).With("gate", a.Gate).With("available", gates)
}

// Run snapshots the working tree, checks it out in a disposable worktree
// and runs the gate there, all inside the sandbox.
func (h *handler) Run(ctx context.Context, call tools.Call) tools.Result {
	gate, ref := h.gate(call)
	if ref != nil {
		return ref
	}
	if _, err := os.Stat(filepath.Join(h.deps.Workspace, ".git")); err != nil {
		return tools.Refuse(tools.CheckUnknown, "the workspace is not a git repository; dev_check runs gates in a git worktree")
	}
	sb := h.deps.Sandbox
	res, err := sb.Run(ctx, sandbox.Exec{
		Workspace: h.deps.Workspace,
		Argv:      []string{"/bin/bash", "-c", runner, "staage-dev-check", gate},
		Env:       h.deps.Env,
		Timeout:   h.deps.Timeout,
	})
	if err != nil {
		var se *sandbox.SetupError
		if errors.As(err, &se) {
			return tools.Refuse(tools.BashSandbox, "the sandbox could not be set up; the gate did not run: "+se.Msg)
		}
		return tools.Refuse(tools.ToolFailed, err.Error())
	}
	switch {
	case res.Cancelled:
		return tools.Refuse(tools.ToolCancelled, "the gate was cancelled; it and everything it started were killed")
	case res.TimedOut:
		return tools.Refuse(tools.BashTimeout, fmt.Sprintf("gate %s killed after %s", gate, h.deps.Timeout)).
			With("output", res.Output).With("clippedLines", res.ClippedLines)
	case res.ExitCode == setupFailed && strings.Contains(res.Output, setupMarker):
		return tools.Refuse(tools.ToolFailed, "the disposable worktree could not be made").With("output", res.Output)
	}
	return tools.Ok{Payload: Output{
		Gate: gate, Script: "script/check-" + gate + ".sh", Passed: res.ExitCode == 0, ExitCode: res.ExitCode,
		Output: res.Output, DurationMs: res.Duration.Milliseconds(), Sandbox: string(sb.Mode()),
		Bounds: tools.Bounds{Truncated: res.Truncated, ClippedLines: res.ClippedLines},
	}}
}

// Preview shows the gate that will run, where and under what.
func (h *handler) Preview(_ context.Context, call tools.Call) (tools.Preview, error) {
	gate, ref := h.gate(call)
	if ref != nil {
		return nil, ref
	}
	return tools.CommandPreview{
		Command: "bash script/check-" + gate + ".sh   # in a disposable worktree of the working tree",
		Workdir: h.deps.Workspace,
		Sandbox: h.deps.Sandbox.Describe(),
		Network: h.deps.Sandbox.Network(),
	}, nil
}

const (
	setupFailed = 97
	setupMarker = "staage-dev-check: "
)

// runner is the script run inside the sandbox; the gate name is its $1,
// never spliced into the text. Git runs with hooks and fsmonitor off, so the
// snapshot itself runs nothing from the repository.
const runner = `set -u
gate="$1"
fail() { echo "staage-dev-check: $*" >&2; exit 97; }
g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 "$@"; }
export GIT_AUTHOR_NAME=staage GIT_AUTHOR_EMAIL=staage@localhost GIT_COMMITTER_NAME=staage GIT_COMMITTER_EMAIL=staage@localhost
export GIT_TERMINAL_PROMPT=0
wt="$(mktemp -d "${TMPDIR:-/tmp}/staage-check.XXXXXX")" || fail "cannot make a temp dir"
idx="$wt.index"
top="$(pwd)"
trap 'status=$?; cd "$top"; g worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt" "$idx"; g worktree prune >/dev/null 2>&1; exit $status' EXIT
real="$(g rev-parse --git-path index)" || fail "not a git repository"
[ -f "$real" ] && cp "$real" "$idx"
GIT_INDEX_FILE="$idx" g add -A >/dev/null 2>&1 || fail "cannot snapshot the working tree"
tree="$(GIT_INDEX_FILE="$idx" g write-tree)" || fail "cannot write the snapshot tree"
if parent="$(g rev-parse -q --verify HEAD)"; then
	commit="$(g commit-tree "$tree" -p "$parent" -m "staage dev_check snapshot")" || fail "cannot commit the snapshot"
else
	commit="$(g commit-tree "$tree" -m "staage dev_check snapshot")" || fail "cannot commit the snapshot"
fi
out="$(g worktree add --detach --quiet "$wt" "$commit" 2>&1)" || fail "git worktree add: $out"
cd "$wt" || fail "cannot enter the worktree"
bash "script/check-$gate.sh"
`
