package fs

import (
	"context"
	"errors"
	"sync"

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

// writeHandler remembers what it previewed: the arguments carry no digest,
// so the run of a previewed call checks the file is still the one whose
// diff was shown (file.stale otherwise). A call that was never previewed
// (granted without a prompt) writes as asked.
type writeHandler struct {
	ws   *workspace.Root
	seen previewMemo
}

// previewMemo maps (lane, call id) to the digest a preview showed ("" for
// a file that did not exist) and the arguments it was shown for. It holds
// at most maxMemo calls, dropping the oldest.
type previewMemo struct {
	mu    sync.Mutex
	byKey map[string]memoEntry
	order []string
}

type memoEntry struct {
	args   string
	digest string
}

const maxMemo = 256

func memoKey(call tools.Call) string { return call.Lane + "\x00" + call.ID }

func (m *previewMemo) put(call tools.Call, digest string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byKey == nil {
		m.byKey = map[string]memoEntry{}
	}
	k := memoKey(call)
	if _, ok := m.byKey[k]; !ok {
		m.order = append(m.order, k)
	}
	m.byKey[k] = memoEntry{args: string(call.Args), digest: digest}
	for len(m.order) > maxMemo {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
}

// take returns and forgets what was previewed for this exact call.
func (m *previewMemo) take(call tools.Call) (digest string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoKey(call)
	e, ok := m.byKey[k]
	if !ok || e.args != string(call.Args) {
		return "", false
	}
	delete(m.byKey, k)
	return e.digest, true
}

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

func (h *writeHandler) Preview(ctx context.Context, call tools.Call) (pv tools.Preview, err error) {
	defer recoverPreview(&pv, &err)
	p, r := h.plan(call)
	if r != nil {
		return nil, r
	}
	op := tools.FileCreate
	if p.exists {
		op = tools.FileReplace
	}
	h.seen.put(call, p.digest)
	return tools.DiffPreview{Files: []tools.FileDiff{{
		Path: p.rel, Op: op, Old: string(p.old), New: p.a.Content, Unified: p.diff(), Digest: p.digest,
	}}}, nil
}

func (h *writeHandler) Run(ctx context.Context, call tools.Call) (res tools.Result) {
	defer recoverResult(call, &res)
	p, r := h.plan(call)
	if r != nil {
		return r
	}
	if err := ctx.Err(); err != nil {
		return tools.Refuse(tools.ToolCancelled, "cancelled before writing")
	}
	opt := workspace.WriteOptions{Overwrite: p.a.Overwrite, MakeDirs: true}
	if shown, ok := h.seen.take(call); ok {
		if shown != p.digest {
			return tools.Refuse(tools.FileStale, p.a.Path+" changed since the write was previewed; preview it again").
				With("path", p.a.Path).With("digest", p.digest)
		}
		if shown == "" {
			// The approved diff was a create: no overwrite now.
			opt.Overwrite = false
		} else {
			opt.ExpectDigest = shown
		}
	}
	data := []byte(p.a.Content)
	if _, err := h.ws.WriteFile(p.rel, data, opt); err != nil {
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
