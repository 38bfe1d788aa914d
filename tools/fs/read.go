package fs

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"

	"staage/tools"
	"staage/tools/workspace"
)

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// ReadPayload is file_read's answer.
type ReadPayload struct {
	Path string `json:"path"`
	// Digest is "sha256:<hex>" of the whole file, not only the lines
	// returned: the value file_edit must cite.
	Digest     string `json:"digest"`
	TotalLines int    `json:"totalLines"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	// Content is "<n>\t<line>\n" per line, terminators removed.
	Content string `json:"content"`
	// EOL is "lf", "crlf", "mixed" or "none" (no line break at all).
	EOL          string `json:"eol"`
	FinalNewline bool   `json:"finalNewline"`
	NextOffset   int    `json:"nextOffset,omitempty"`
	tools.Bounds
}

type readHandler struct{ ws *workspace.Root }

func (h *readHandler) Run(ctx context.Context, call tools.Call) (res tools.Result) {
	defer recoverResult(call, &res)
	var a readArgs
	if r := decode(call, &a); r != nil {
		return r
	}
	if a.Offset == 0 {
		a.Offset = 1
	}
	if a.Limit == 0 {
		a.Limit = DefaultReadLines
	}
	if a.Offset < 1 || a.Limit < 1 || a.Limit > MaxReadLines {
		return tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("offset must be ≥ 1 and limit between 1 and %d", MaxReadLines))
	}
	f, err := h.ws.ReadFile(a.Path, MaxFileBytes)
	if err != nil {
		return fail(err)
	}
	if workspace.IsBinary(f.Data) {
		return binaryRefusal(a.Path)
	}
	return tools.Ok{Payload: frame(f, a.Offset, a.Limit)}
}

func binaryRefusal(p string) *tools.Refusal {
	return tools.Refuse(tools.FileBinary, fmt.Sprintf("%s is binary (a NUL byte in its first 8 KiB)", p)).With("path", p)
}

// frame cuts the page [offset, offset+limit) of lines out of a file, within
// the output byte cap.
func frame(f workspace.File, offset, limit int) ReadPayload {
	data := f.Data
	p := ReadPayload{
		Path:         f.Rel,
		Digest:       workspace.Digest(data),
		EOL:          eolStyle(data),
		FinalNewline: len(data) > 0 && data[len(data)-1] == '\n',
		StartLine:    offset,
	}
	p.TotalLines = bytes.Count(data, nl)
	if len(data) > 0 && !p.FinalNewline {
		p.TotalLines++
	}
	var out []byte
	n := 0
	pos := 0
	for lineNo := 1; pos < len(data); lineNo++ {
		le := lineEnd(data, pos)
		line := data[pos:le]
		pos = le + 1
		if lineNo < offset {
			continue
		}
		if lineNo >= offset+limit {
			p.Truncated = true
			p.NextOffset = lineNo
			break
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		clipped := len(line) > MaxReadLineBytes
		if clipped {
			cut := MaxReadLineBytes
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut]
		}
		entry := strconv.AppendInt(nil, int64(lineNo), 10)
		entry = append(entry, '\t')
		if len(out)+len(entry)+len(line)+1 > MaxReadOutputBytes && n > 0 {
			p.Truncated = true
			p.NextOffset = lineNo
			break
		}
		out = append(out, entry...)
		out = append(out, line...)
		out = append(out, '\n')
		n++
		if clipped {
			p.ClippedLines++
		}
	}
	if n == 0 {
		p.StartLine = 0
	} else {
		p.EndLine = offset + n - 1
	}
	if p.Truncated {
		p.NextCursor = strconv.Itoa(p.NextOffset)
	}
	p.Content = string(out)
	return p
}

func eolStyle(data []byte) string {
	lf := bytes.Count(data, nl)
	crlf := bytes.Count(data, []byte("\r\n"))
	switch {
	case lf == 0:
		return "none"
	case crlf == 0:
		return "lf"
	case crlf == lf:
		return "crlf"
	}
	return "mixed"
}
