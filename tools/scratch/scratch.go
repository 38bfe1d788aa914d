// Package scratch is the scratch_read tool: one read-only command (ls, cat,
// wc, head, tail, file, stat) over the operator's --scratch directory. The
// argv is built by the tool, never by a shell: the command is one of six,
// every flag is one known not to write, follow or execute, and every path is
// resolved (symlinks included) and must stay inside the scratch directory.
package scratch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"staage/tools"
	"staage/tools/shell/proc"
)

// Timeout bounds one scratch command.
const Timeout = 10 * time.Second

// Declarations declares scratch_read (REQUIRED, read). With dir == "" the
// tool exists and answers scratch.unavailable.
func Declarations(dir string) []tools.Declaration {
	return []tools.Declaration{{
		Origin:  tools.BuiltinOrigin,
		RawName: "scratch_read",
		Description: "Run one read-only command over the scratch directory: ls, cat, wc, head, tail, file or stat, " +
			"with flags that cannot write, follow links or run programs. Paths are relative to the scratch directory " +
			"and must stay inside it. No shell is involved: args are passed as they are. Output is bounded (head and tail, clippedLines).",
		Schema: []byte(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{` +
			`"command":{"type":"string","enum":["ls","cat","wc","head","tail","file","stat"]},` +
			`"args":{"type":"array","maxItems":64,"items":{"type":"string","maxLength":4096},"description":"flags and paths, e.g. [\"-n\",\"20\",\"notes.txt\"]"}}}`),
		Policy:  tools.Required,
		Effect:  tools.EffectRead,
		Handler: &handler{dir: dir},
	}}
}

type args struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// Output is the payload: what ran, its exit code and its bounded output. A
// non-zero exit (a missing file, say) is information, not a refusal.
type Output struct {
	Argv     []string `json:"argv"`
	ExitCode int      `json:"exitCode"`
	Output   string   `json:"output"`
	tools.Bounds
}

type handler struct {
	dir string
}

var _ tools.Previewer = (*handler)(nil)

// build validates the call and returns the argv to run and the scratch root.
func (h *handler) build(call tools.Call) ([]string, string, *tools.Refusal) {
	if h.dir == "" {
		return nil, "", tools.Refuse(tools.ScratchUnavailable, "no scratch directory was given (start staage with --scratch DIR)")
	}
	root, err := filepath.EvalSymlinks(h.dir)
	if err != nil {
		return nil, "", tools.Refuse(tools.ScratchUnavailable, "the scratch directory is not reachable: "+err.Error())
	}
	var a args
	if err := call.Decode(&a); err != nil {
		return nil, "", tools.Refuse(tools.ArgsInvalid, "scratch_read: "+err.Error())
	}
	spec, ok := specs[a.Command]
	if !ok {
		return nil, "", tools.Refuse(tools.ScratchDenied, fmt.Sprintf("%q is not one of ls, cat, wc, head, tail, file, stat", a.Command))
	}
	flags, paths, ref := spec.split(a.Args)
	if ref != nil {
		return nil, "", ref.With("command", a.Command)
	}
	argv := append([]string{a.Command}, flags...)
	argv = append(argv, "--")
	for _, p := range paths {
		rel, ref := confine(root, p)
		if ref != nil {
			return nil, "", ref
		}
		argv = append(argv, rel)
	}
	return argv, root, nil
}

// confine resolves p inside root and returns it as ./relative to root. A
// path that leaves root, lexically or through a link, is path.escape.
func confine(root, p string) (string, *tools.Refusal) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", tools.Refuse(tools.ScratchDenied, "empty or invalid path")
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	if !within(root, abs) {
		return "", tools.Refuse(tools.PathEscape, fmt.Sprintf("%s is outside the scratch directory", p)).With("path", p)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", tools.Refuse(tools.FileMissing, fmt.Sprintf("%s does not exist in the scratch directory", p)).With("path", p)
	}
	if err != nil {
		return "", tools.Refuse(tools.PathEscape, fmt.Sprintf("%s cannot be resolved: %v", p, err)).With("path", p)
	}
	if !within(root, real) {
		return "", tools.Refuse(tools.PathEscape, fmt.Sprintf("%s leads outside the scratch directory", p)).With("path", p)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return "", tools.Refuse(tools.PathEscape, err.Error()).With("path", p)
	}
	return "./" + filepath.ToSlash(rel), nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Run runs the command without a shell, in the scratch directory.
func (h *handler) Run(ctx context.Context, call tools.Call) tools.Result {
	argv, root, ref := h.build(call)
	if ref != nil {
		return ref
	}
	env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=" + root}
	prog, err := lookPath(argv[0])
	if err != nil {
		return tools.Refuse(tools.ScratchUnavailable, fmt.Sprintf("%s is not installed: %v", argv[0], err))
	}
	res, err := proc.Run(ctx, proc.Spec{Path: prog, Args: argv, Env: env, Dir: root, Timeout: Timeout})
	if err != nil {
		return tools.Refuse(tools.ToolFailed, err.Error())
	}
	switch {
	case res.Cancelled:
		return tools.Refuse(tools.ToolCancelled, "cancelled")
	case res.TimedOut:
		return tools.Refuse(tools.ToolFailed, fmt.Sprintf("%s did not finish within %s", argv[0], Timeout)).With("output", res.Output)
	}
	return tools.Ok{Payload: Output{Argv: argv, ExitCode: res.ExitCode, Output: res.Output,
		Bounds: tools.Bounds{Truncated: res.Truncated, ClippedLines: res.ClippedLines}}}
}

// Preview shows the exact argv that will run.
func (h *handler) Preview(_ context.Context, call tools.Call) (tools.Preview, error) {
	argv, root, ref := h.build(call)
	if ref != nil {
		return nil, ref
	}
	return tools.CommandPreview{Command: strings.Join(quoteAll(argv), " "), Workdir: root,
		Sandbox: "no shell; read-only command, paths confined to the scratch directory", Network: "none"}, nil
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>*?[]{}()!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// lookPath finds a program in the fixed system path only.
func lookPath(name string) (string, error) {
	for _, d := range []string{"/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}
