package fs

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"staage/textdiff"
	"staage/tools"
	"staage/tools/workspace"
)

type editArgs struct {
	Path       string `json:"path"`
	Digest     string `json:"digest"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replaceAll"`
}

// EditPayload is file_edit's answer.
type EditPayload struct {
	Path           string `json:"path"`
	Digest         string `json:"digest"`
	PreviousDigest string `json:"previousDigest"`
	Replacements   int    `json:"replacements"`
	// Diff is the unified diff of the change (cut at MaxDiffBytes:
	// truncated says so).
	Diff string `json:"diff"`
	tools.Bounds
}

type editHandler struct{ ws *workspace.Root }

// editPlan is an edit computed but not yet written.
type editPlan struct {
	rel      string
	old, new []byte
	digest   string // of old
	n        int
}

// plan reads the file, checks the cited digest and computes the new
// content. Preview and Run share it, so the previewed diff is the one the
// run writes.
func (h *editHandler) plan(call tools.Call) (editPlan, *tools.Refusal) {
	var a editArgs
	if r := decode(call, &a); r != nil {
		return editPlan{}, r
	}
	if a.Old == "" {
		return editPlan{}, tools.Refuse(tools.ArgsInvalid, "old is empty; use file_write to create a file")
	}
	if a.Old == a.New {
		return editPlan{}, tools.Refuse(tools.ArgsInvalid, "old and new are the same; nothing to change")
	}
	if _, err := tools.ParseDigest(a.Digest); err != nil {
		return editPlan{}, tools.Refuse(tools.ArgsInvalid, "digest must be the sha256:<64 hex> file_read returned")
	}
	f, err := h.ws.ReadFile(a.Path, MaxFileBytes)
	if err != nil {
		return editPlan{}, asRefusal(err)
	}
	if workspace.IsBinary(f.Data) {
		return editPlan{}, binaryRefusal(a.Path)
	}
	cur := workspace.Digest(f.Data)
	if cur != a.Digest {
		return editPlan{}, tools.Refuse(tools.FileStale, fmt.Sprintf("%s changed since it was read (digest %s, cited %s); read it again", a.Path, short(cur), short(a.Digest))).
			With("path", a.Path).With("digest", cur)
	}
	out, n, r := replace(f.Data, a.Old, a.New, a.ReplaceAll, a.Path)
	if r != nil {
		return editPlan{}, r
	}
	if len(out) > MaxFileBytes {
		return editPlan{}, tools.Refuse(tools.FileTooLarge, fmt.Sprintf("the edit makes %s %d bytes, over the %d byte limit", a.Path, len(out), MaxFileBytes))
	}
	return editPlan{rel: f.Rel, old: f.Data, new: out, digest: cur, n: n}, nil
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// replace applies the edit. In a file whose every line ends in CRLF, old
// and new are matched and written with CRLF whatever the model typed; in
// other files old is matched as given, then (if that finds nothing) with
// its newlines as CRLF, for CRLF stretches of a mixed file.
func replace(data []byte, old, new string, all bool, p string) ([]byte, int, *tools.Refusal) {
	o, nw := []byte(old), []byte(new)
	crlfFile := eolStyle(data) == "crlf"
	if crlfFile {
		o, nw = toCRLF(o), toCRLF(nw)
	}
	n := bytes.Count(data, o)
	if n == 0 && !crlfFile && bytes.Contains(o, nl) && bytes.Contains(data, []byte("\r\n")) {
		if c := toCRLF(o); bytes.Count(data, c) > 0 {
			o, nw = c, toCRLF(nw)
			n = bytes.Count(data, o)
		}
	}
	switch {
	case n == 0:
		r := tools.Refuse(tools.FileMissing, fmt.Sprintf("old was not found in %s; copy it exactly from file_read (no line numbers)", p)).With("path", p)
		if lines := nearLines(data, old); len(lines) > 0 {
			r.Message += fmt.Sprintf("; its first line, ignoring indentation, is at line %d: check whitespace and the lines after it", lines[0])
			r = r.With("nearLines", lines)
		}
		return nil, 0, r
	case n > 1 && !all:
		return nil, 0, tools.Refuse(tools.FileAmbiguous, fmt.Sprintf("old occurs %d times in %s; add context to make it unique, or set replaceAll", n, p)).
			With("path", p).With("count", n).With("lines", matchLines(data, o, 20))
	}
	if !all {
		n = 1
	}
	return bytes.Replace(data, o, nw, n), n, nil
}

// nearLines finds where the first non-blank line of old occurs with its
// leading and trailing whitespace ignored: a hint for a near miss.
func nearLines(data []byte, old string) []int {
	var first string
	for _, l := range strings.Split(old, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			first = t
			break
		}
	}
	if first == "" {
		return nil
	}
	var out []int
	for i, l := range bytes.Split(data, nl) {
		if string(bytes.TrimSpace(l)) == first {
			out = append(out, i+1)
			if len(out) == 5 {
				break
			}
		}
	}
	return out
}

// toCRLF turns every bare "\n" into "\r\n" (existing "\r\n" stay).
func toCRLF(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), nl)
	return bytes.ReplaceAll(b, nl, []byte("\r\n"))
}

// matchLines lists the 1-based lines where sub starts, at most max.
func matchLines(data, sub []byte, max int) []int {
	var out []int
	line, counted, pos := 1, 0, 0
	for len(out) < max {
		i := bytes.Index(data[pos:], sub)
		if i < 0 {
			break
		}
		at := pos + i
		line += bytes.Count(data[counted:at], nl)
		counted = at
		out = append(out, line)
		pos = at + len(sub)
	}
	return out
}

func (h *editHandler) Preview(ctx context.Context, call tools.Call) (pv tools.Preview, err error) {
	defer recoverPreview(&pv, &err)
	p, r := h.plan(call)
	if r != nil {
		return nil, r
	}
	return tools.DiffPreview{Files: []tools.FileDiff{{
		Path: p.rel, Op: tools.FileModify,
		Old: string(p.old), New: string(p.new),
		Unified: textdiff.Unified(p.rel, p.rel, string(p.old), string(p.new), textdiff.DefaultContext),
		Digest:  p.digest,
	}}}, nil
}

func (h *editHandler) Run(ctx context.Context, call tools.Call) (res tools.Result) {
	defer recoverResult(call, &res)
	p, r := h.plan(call)
	if r != nil {
		return r
	}
	if err := ctx.Err(); err != nil {
		return tools.Refuse(tools.ToolCancelled, "cancelled before writing")
	}
	// ExpectDigest re-checks right before the rename: a change since the
	// plan read the file is file.stale, not overwritten.
	if _, err := h.ws.WriteFile(p.rel, p.new, workspace.WriteOptions{Overwrite: true, ExpectDigest: p.digest}); err != nil {
		return fail(err)
	}
	digest, r := verify(h.ws, p.rel, p.new)
	if r != nil {
		return r
	}
	diff, clipped := clipDiff(textdiff.Unified(p.rel, p.rel, string(p.old), string(p.new), textdiff.DefaultContext))
	return tools.Ok{Payload: EditPayload{
		Path: p.rel, Digest: digest, PreviousDigest: p.digest, Replacements: p.n, Diff: diff,
		Bounds: tools.Bounds{Truncated: clipped},
	}}
}

// verify re-reads what was written and checks it is byte for byte what was
// meant, returning its digest.
func verify(ws *workspace.Root, rel string, want []byte) (string, *tools.Refusal) {
	f, err := ws.ReadFile(rel, MaxFileBytes)
	if err != nil {
		return "", asRefusal(err)
	}
	if !bytes.Equal(f.Data, want) {
		return "", tools.Refuse(tools.ToolFailed, fmt.Sprintf("%s does not hold what was written (changed right after the write?); read it again", rel)).
			With("path", rel).With("digest", workspace.Digest(f.Data))
	}
	return workspace.Digest(f.Data), nil
}

func clipDiff(d string) (string, bool) {
	if len(d) <= MaxDiffBytes {
		return d, false
	}
	cut := bytes.LastIndexByte([]byte(d[:MaxDiffBytes]), '\n') + 1
	return d[:cut], true
}

func asRefusal(err error) *tools.Refusal {
	if r, ok := fail(err).(*tools.Refusal); ok {
		return r
	}
	return tools.Refuse(tools.ToolFailed, err.Error())
}
