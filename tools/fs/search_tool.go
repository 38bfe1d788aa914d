package fs

import (
	"context"
	"fmt"
	"sync"

	"staage/tools"
	"staage/tools/workspace"
)

type searchArgs struct {
	Pattern string `json:"pattern"`
	Literal bool   `json:"literal"`
	Glob    string `json:"glob"`
	Cursor  string `json:"cursor"`
	Limit   int    `json:"limit"`
}

// SearchPayload is file_search's answer.
type SearchPayload struct {
	Matches      []Match `json:"matches"`
	FilesScanned int     `json:"filesScanned"`
	tools.Bounds
}

type searchHandler struct {
	ws   *workspace.Root
	bufs sync.Pool // read buffers, reused across calls
}

func (h *searchHandler) Run(ctx context.Context, call tools.Call) (res tools.Result) {
	defer recoverResult(call, &res)
	var a searchArgs
	if r := decode(call, &a); r != nil {
		return r
	}
	if a.Limit == 0 {
		a.Limit = DefaultSearchLimit
	}
	if a.Limit < 1 || a.Limit > MaxSearchLimit {
		return tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("limit must be between 1 and %d", MaxSearchLimit))
	}
	q, err := compileQuery(a.Pattern, a.Literal)
	if err != nil {
		return tools.Refuse(tools.FindInvalid, err.Error()).With("pattern", a.Pattern)
	}
	var m *matcher
	if a.Glob != "" {
		if m, err = compileGlob(a.Glob); err != nil {
			return tools.Refuse(tools.FindInvalid, err.Error()).With("glob", a.Glob)
		}
	}
	after, r := decodeCursor(a.Cursor)
	if r != nil {
		return r
	}
	lim := defaultSearchLimits()
	lim.bufs = &h.bufs
	found, err := search(ctx, h.ws, q, m, after, a.Limit, lim)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Refuse(tools.ToolCancelled, "search interrupted")
		}
		return fail(err)
	}
	if found.matches == nil {
		found.matches = []Match{}
	}
	return tools.Ok{Payload: SearchPayload{Matches: found.matches, FilesScanned: found.files, Bounds: found.Bounds}}
}

// Search runs one file_search page outside the tool machinery, for the
// benchmark driver (bench/cmd/fsbench) and tests.
func Search(ctx context.Context, ws *workspace.Root, pattern string, literal bool, glob string, limit int) (SearchPayload, error) {
	q, err := compileQuery(pattern, literal)
	if err != nil {
		return SearchPayload{}, err
	}
	var m *matcher
	if glob != "" {
		if m, err = compileGlob(glob); err != nil {
			return SearchPayload{}, err
		}
	}
	res, err := search(ctx, ws, q, m, cursor{}, limit, defaultSearchLimits())
	return SearchPayload{Matches: res.matches, FilesScanned: res.files, Bounds: res.Bounds}, err
}
