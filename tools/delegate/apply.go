package delegate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"staage/textdiff"
	"staage/tools"
	"staage/tools/workspace"
)

// maxPreviewFileBytes bounds the contents a preview carries per file side.
// Larger (and binary) files are listed with their operation but no text.
const maxPreviewFileBytes = 1 << 20

// maxRecords bounds the previews remembered for their runs; an approval
// that is never answered must not grow memory without end.
const maxRecords = 64

func applyDeclaration(wt *Worktrees) tools.Declaration {
	return tools.Declaration{
		Origin:  tools.BuiltinOrigin,
		RawName: "apply_change",
		Description: "Apply a finished write child's change (the id its task envelope named) to the main checkout. " +
			"The operator sees the whole multi-file diff first. Refused as change.conflict when the diff no longer " +
			"applies, change.unknown when no such change exists. The child's worktree is removed once applied.",
		Schema: json.RawMessage(`{"type":"object","properties":{"change":{"type":"string","minLength":1,"maxLength":64}},` +
			`"required":["change"],"additionalProperties":false}`),
		Policy:  tools.Required,
		Effect:  tools.EffectIrreversible,
		Handler: &applyHandler{wt: wt, records: map[string]record{}},
	}
}

// ApplyPayload is apply_change's answer.
type ApplyPayload struct {
	Change  string       `json:"change"`
	Applied bool         `json:"applied"`
	Files   []FileChange `json:"files"`
	// WorktreeRemoved is false when the change landed but its worktree
	// could not be removed (Note says why).
	WorktreeRemoved bool   `json:"worktreeRemoved"`
	Note            string `json:"note,omitempty"`
}

// record is what a preview showed, so the run can refuse to write anything
// else: the same diff, onto the same main-checkout contents.
type record struct {
	change  string
	patch   [32]byte
	digests map[string]string // path → digest of the main checkout's file ("" when absent)
}

type applyHandler struct {
	wt *Worktrees

	mu      sync.Mutex
	records map[string]record // by call id
	order   []string
}

var (
	_ tools.Handler   = (*applyHandler)(nil)
	_ tools.Previewer = (*applyHandler)(nil)
)

func changeArg(call tools.Call) (string, *tools.Refusal) {
	var args struct {
		Change string `json:"change"`
	}
	if err := call.Decode(&args); err != nil {
		return "", tools.Refuse(tools.ArgsInvalid, "apply_change arguments: "+err.Error())
	}
	return args.Change, nil
}

// load reads the change and checks that it applies now.
func (h *applyHandler) load(ctx context.Context, id string) (Change, *tools.Refusal) {
	ch, err := h.wt.Diff(ctx, id)
	switch {
	case errors.Is(err, ErrUnknown):
		ref := tools.Refuse(tools.ChangeUnknown, fmt.Sprintf("no change named %q", clipRunes(id, 80))).With("change", clipRunes(id, 80))
		if ids, err := h.wt.List(ctx); err == nil && len(ids) > 0 {
			ref.Message += fmt.Sprintf("; pending changes: %v", ids)
			ref = ref.With("pending", ids)
		}
		return Change{}, ref
	case err != nil:
		return Change{}, tools.Refuse(tools.ToolFailed, "the change could not be read: "+err.Error())
	case ch.Empty():
		return Change{}, tools.Refuse(tools.ChangeUnknown, fmt.Sprintf("change %q holds no edits", id)).With("change", id)
	}
	if err := h.wt.Check(ctx, ch.Patch); err != nil {
		return Change{}, conflict(id, err)
	}
	return ch, nil
}

func conflict(id string, err error) *tools.Refusal {
	return tools.Refuse(tools.ChangeConflict,
		fmt.Sprintf("change %q no longer applies to the main checkout: %v", id, err)).With("change", id)
}

// Preview shows every file of the change as it will land: Old is the main
// checkout's file now, New is that file with the diff applied.
//
// Every failure is a refusal: an irreversible change that cannot be shown
// exactly is not put to the operator with its arguments alone.
func (h *applyHandler) Preview(ctx context.Context, call tools.Call) (tools.Preview, error) {
	p, err := h.preview(ctx, call)
	var ref *tools.Refusal
	if err != nil && !errors.As(err, &ref) {
		return nil, tools.Refuse(tools.ToolFailed, "the change could not be previewed: "+err.Error())
	}
	return p, err
}

func (h *applyHandler) preview(ctx context.Context, call tools.Call) (tools.Preview, error) {
	id, ref := changeArg(call)
	if ref != nil {
		return nil, ref
	}
	ch, ref := h.load(ctx, id)
	if ref != nil {
		return nil, ref
	}
	top, err := h.wt.toplevel(ctx)
	if err != nil {
		return nil, err
	}
	olds, err := readMain(top, ch.Files)
	if err != nil {
		return nil, err
	}
	news, err := applied(ctx, ch, olds)
	if err != nil {
		return nil, err
	}
	rec := record{change: id, patch: sha256.Sum256(ch.Patch), digests: map[string]string{}}
	var prev tools.DiffPreview
	for _, f := range ch.Files {
		old, oldOK := olds[f.Path]
		nw := news[f.Path]
		fd := tools.FileDiff{Path: f.Path, Op: tools.FileOp(f.Op)}
		if oldOK {
			fd.Digest = digest(old)
		}
		rec.digests[f.Path] = fd.Digest
		if showable(old) && showable(nw) {
			fd.Old, fd.New = string(old), string(nw)
			oldPath, newPath := f.Path, f.Path
			if f.Op == "create" {
				oldPath = textdiff.DevNull
			}
			if f.Op == "delete" {
				newPath = textdiff.DevNull
			}
			fd.Unified = textdiff.Unified(oldPath, newPath, fd.Old, fd.New, -1)
		} else {
			fd.Unified = fmt.Sprintf("Binary or large file %s: %d bytes before, %d bytes after; contents not shown\n", f.Path, len(old), len(nw))
		}
		prev.Files = append(prev.Files, fd)
	}
	h.remember(call.ID, rec)
	return prev, nil
}

func (h *applyHandler) remember(callID string, rec record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.records[callID]; !ok {
		h.order = append(h.order, callID)
	}
	h.records[callID] = rec
	for len(h.order) > maxRecords {
		delete(h.records, h.order[0])
		h.order = h.order[1:]
	}
}

func (h *applyHandler) take(callID string) (record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, ok := h.records[callID]
	delete(h.records, callID)
	return rec, ok
}

// Run lands the change. When this call was previewed, the diff and every
// touched file of the main checkout must still be what the preview showed;
// otherwise the operator approved something else, and the run refuses.
func (h *applyHandler) Run(ctx context.Context, call tools.Call) tools.Result {
	id, ref := changeArg(call)
	if ref != nil {
		return ref
	}
	rec, previewed := h.take(call.ID)
	ch, ref := h.load(ctx, id)
	if ref != nil {
		return ref
	}
	top, err := h.wt.toplevel(ctx)
	if err != nil {
		return tools.Refuse(tools.ToolFailed, err.Error())
	}
	if previewed {
		if rec.change != id || rec.patch != sha256.Sum256(ch.Patch) {
			return tools.Refuse(tools.ChangeConflict, fmt.Sprintf("change %q differs from the diff that was previewed; ask again", id)).With("change", id)
		}
		olds, err := readMain(top, ch.Files)
		if err != nil {
			return tools.Refuse(tools.ToolFailed, err.Error())
		}
		for _, f := range ch.Files {
			now := ""
			if b, ok := olds[f.Path]; ok {
				now = digest(b)
			}
			if now != rec.digests[f.Path] {
				return tools.Refuse(tools.ChangeConflict,
					fmt.Sprintf("%s changed in the main checkout after the preview was shown; ask again", f.Path)).
					With("change", id).With("path", f.Path)
			}
		}
	}
	if err := h.wt.Apply(ctx, ch.Patch); err != nil {
		return conflict(id, err)
	}
	p := ApplyPayload{Change: id, Applied: true, Files: ch.Files, WorktreeRemoved: true}
	if err := h.wt.Remove(context.WithoutCancel(ctx), id); err != nil {
		p.WorktreeRemoved = false
		p.Note = "the change landed, but its worktree could not be removed: " + err.Error()
	}
	return tools.Ok{Payload: p}
}

// readMain reads the main checkout's current bytes of every touched file,
// through os.Root so that a link planted in the checkout cannot make the
// preview read from elsewhere. Absent files are absent from the map.
func readMain(top string, files []FileChange) (map[string][]byte, error) {
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := map[string][]byte{}
	for _, f := range files {
		b, err := root.ReadFile(filepath.FromSlash(f.Path))
		switch {
		case err == nil:
			out[f.Path] = b
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, fmt.Errorf("read %s in the main checkout: %w", f.Path, err)
		}
	}
	return out, nil
}

// applied computes each touched file after the change by applying the patch
// to copies of the main checkout's files in a scratch directory: exactly
// what git apply will write, including when the checkout moved on in other
// parts of those files.
func applied(ctx context.Context, ch Change, olds map[string][]byte) (map[string][]byte, error) {
	scratch, err := os.MkdirTemp("", "staage-preview-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	work := filepath.Join(scratch, "tree")
	for path, b := range olds {
		full := filepath.Join(work, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, b, 0o600); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return nil, err
	}
	// Outside any repository (the ceiling stops discovery), git apply
	// works on plain files like patch(1).
	env := []string{"GIT_CEILING_DIRECTORIES=" + scratch}
	if _, err := git(ctx, work, env, ch.Patch, "apply", "--binary", "--whitespace=nowarn", "-"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	out := map[string][]byte{}
	for _, f := range ch.Files {
		b, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(f.Path)))
		switch {
		case err == nil:
			out[f.Path] = b
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
	}
	return out, nil
}

func showable(b []byte) bool {
	return len(b) <= maxPreviewFileBytes && utf8.Valid(b) && !bytes.ContainsRune(b, 0)
}

// digest is the form file_read reports, so a preview's digests read the
// same as every other tool's.
func digest(b []byte) string { return workspace.Digest(b) }
