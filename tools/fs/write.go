package fs

import (
	"context"
	"errors"

	"staage/textdiff"
	"staage/tools"
	"staage/tools/workspace"
)

type writeArgs struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Overwrite bool   `json:"overwrite"`
}

// WritePayload is file_write's answer.
type WritePayload struct {
	Path    string `json:"path"`
	Digest  string `json:"digest"`
	Created bool   `json:"created"`
	Bytes   int    `json:"bytes"`
	// Diff is the unified diff against what was there (from /dev/null
	// for a new file), cut at MaxDiffBytes (truncated says so).
	Diff string `json:"diff"`
	tools.Bounds
}

type writeHandler struct{ ws *workspace.Root }

// writePlan is what a write would replace.
type writePlan struct {
	a      writeArgs
	rel    string
	exists bool
	old    []byte
	digest string
}

func (h *writeHandler) plan(call tools.Call) (writePlan, *tools.Refusal) {
	var a writeArgs
	if r := decode(call, &a); r != nil {
		return writePlan{}, r
	}
	if len(a.Content) > MaxFileBytes {
		return writePlan{}, tools.Refuse(tools.FileTooLarge, "content is over the file size limit")
	}
	p := writePlan{a: a}
	rel, fi, err := h.ws.Stat(a.Path)
	var ref *tools.Refusal
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return writePlan{}, workspace.NotRegular(a.Path, fi.Mode())
		}
		if !a.Overwrite {
			return writePlan{}, tools.Refuse(tools.FileExists, a.Path+" exists; pass overwrite:true to replace it").With("path", a.Path)
		}
		f, err := h.ws.ReadFile(a.Path, MaxFileBytes)
		if err != nil {
			return writePlan{}, asRefusal(err)
		}
		p.exists, p.old, p.digest = true, f.Data, workspace.Digest(f.Data)
	case errors.As(err, &ref) && ref.Name == tools.FileMissing:
	default:
		return writePlan{}, asRefusal(err)
	}
	p.rel = rel
	return p, nil
}

func (p writePlan) diff() string {
	oldPath := p.rel
	if !p.exists {
		oldPath = textdiff.DevNull
	}
	if workspace.IsBinary(p.old) {
		// A text diff of binary bytes would be noise (and unsafe to show).
		return "Binary file " + p.rel + " replaced\n"
	}
	return textdiff.Unified(oldPath, p.rel, string(p.old), p.a.Content, textdiff.DefaultContext)
}

func (h *writeHandler) Preview(ctx context.Context, call tools.Call) (tools.Preview, error) {
	p, r := h.plan(call)
	if r != nil {
		return nil, r
	}
	op := tools.FileCreate
	if p.exists {
		op = tools.FileReplace
	}
	return tools.DiffPreview{Files: []tools.FileDiff{{
		Path: p.rel, Op: op, Old: string(p.old), New: p.a.Content, Unified: p.diff(), Digest: p.digest,
	}}}, nil
}

func (h *writeHandler) Run(ctx context.Context, call tools.Call) tools.Result {
	p, r := h.plan(call)
	if r != nil {
		return r
	}
	if err := ctx.Err(); err != nil {
		return tools.Refuse(tools.ToolCancelled, "cancelled before writing")
	}
	data := []byte(p.a.Content)
	if _, err := h.ws.WriteFile(p.rel, data, workspace.WriteOptions{Overwrite: p.a.Overwrite, MakeDirs: true}); err != nil {
		return fail(err)
	}
	digest, r := verify(h.ws, p.rel, data)
	if r != nil {
		return r
	}
	diff, clipped := clipDiff(p.diff())
	return tools.Ok{Payload: WritePayload{
		Path: p.rel, Digest: digest, Created: !p.exists, Bytes: len(data), Diff: diff,
		Bounds: tools.Bounds{Truncated: clipped},
	}}
}
