package fs

import (
	"context"
	"fmt"

	"staage/tools"
	"staage/tools/workspace"
)

type findArgs struct {
	Pattern string `json:"pattern"`
	Cursor  string `json:"cursor"`
	Limit   int    `json:"limit"`
}

// FindPayload is file_find's answer.
type FindPayload struct {
	Paths []string `json:"paths"`
	tools.Bounds
}

type findHandler struct{ ws *workspace.Root }

func (h *findHandler) Run(ctx context.Context, call tools.Call) (res tools.Result) {
	defer recoverResult(call, &res)
	var a findArgs
	if r := decode(call, &a); r != nil {
		return r
	}
	if a.Limit == 0 {
		a.Limit = DefaultFindLimit
	}
	if a.Limit < 1 || a.Limit > MaxFindLimit {
		return tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("limit must be between 1 and %d", MaxFindLimit))
	}
	m, err := compileGlob(a.Pattern)
	if err != nil {
		return tools.Refuse(tools.FindInvalid, err.Error()).With("pattern", a.Pattern)
	}
	after, r := decodeCursor(a.Cursor)
	if r != nil {
		return r
	}
	p, err := find(ctx, h.ws, m, after, a.Limit, MaxWalkEntries)
	if err != nil {
		return fail(err)
	}
	return tools.Ok{Payload: p}
}

// find lists matching paths after the cursor in path order. The walk is in
// that order already, so it stops as soon as the page is full.
func find(ctx context.Context, ws *workspace.Root, m *matcher, after cursor, limit, maxEntries int) (FindPayload, error) {
	p := FindPayload{Paths: []string{}}
	var last string
	capped, err := walk(ctx, ws.OS(), walkOptions{prefix: m.prefix, after: after, symlinks: true, maxEntries: maxEntries},
		func(f walkFile) bool {
			if f.rel == after.Path || !m.match(f.rel, f.name) {
				last = f.rel
				return true
			}
			if len(p.Paths) == limit {
				p.Truncated = true
				p.NextCursor = cursor{Path: p.Paths[len(p.Paths)-1]}.encode()
				return false
			}
			p.Paths = append(p.Paths, f.rel)
			last = f.rel
			return true
		})
	if err != nil {
		return p, err
	}
	if capped && !p.Truncated {
		p.ScanCapped = true
		if last != "" {
			p.NextCursor = cursor{Path: last}.encode()
		}
	}
	return p, nil
}
