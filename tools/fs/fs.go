// Package fs declares the five file tools of staage — file_read, file_edit,
// file_write, file_find and file_search — on a workspace.Root.
//
// Every path goes through the workspace (path.escape outside it); every
// answer is bounded and says how (tools.Bounds). file_edit is bound to the
// digest file_read returned, and both writing tools preview the exact diff
// they would make; the run re-checks the digest so what was approved is what
// is written. Decisions and limits are in docs/file-tools.md.
package fs

import (
	"encoding/json"
	"errors"
	"fmt"

	"staage/tools"
	"staage/tools/workspace"
)

// Limits. docs/file-tools.md explains each choice.
const (
	// MaxFileBytes is the largest file file_read and file_edit handle
	// (the digest covers the whole file, so the whole file is read).
	MaxFileBytes = 16 << 20
	// DefaultReadLines and MaxReadLines bound one file_read page.
	DefaultReadLines = 2000
	MaxReadLines     = 10000
	// MaxReadOutputBytes bounds the text one file_read returns.
	MaxReadOutputBytes = 128 << 10
	// MaxReadLineBytes clips one over-long line in file_read.
	MaxReadLineBytes = 2000
	// MaxDiffBytes bounds the diff a write reports (the preview carries
	// the whole texts).
	MaxDiffBytes = 64 << 10

	// DefaultFindLimit and MaxFindLimit bound one file_find page.
	DefaultFindLimit = 200
	MaxFindLimit     = 2000

	// DefaultSearchLimit and MaxSearchLimit bound one file_search page.
	DefaultSearchLimit = 100
	MaxSearchLimit     = 1000
	// MaxSearchLineBytes clips a matching line.
	MaxSearchLineBytes = 240
	// MaxSearchFileBytes: larger files are skipped (skippedLarge).
	MaxSearchFileBytes = 8 << 20
	// MaxScanBytes: a search that has read this much stops (scanCapped).
	MaxScanBytes = 1 << 30
	// MaxWalkEntries: a walk that has seen this many directory entries
	// stops (scanCapped).
	MaxWalkEntries = 500_000
)

// Declarations returns the five file tools bound to ws.
func Declarations(ws *workspace.Root) []tools.Declaration {
	return []tools.Declaration{
		{
			Origin: tools.BuiltinOrigin, RawName: "file_read",
			Description: "Read a text file in the workspace, line-framed. Returns numbered lines " +
				"(\"<n>\\t<text>\", line endings removed; eol says LF or CRLF), totalLines, and digest: " +
				"the sha256 of the whole file, which file_edit must cite. offset is the 1-based first " +
				"line (default 1), limit the number of lines (default 2000). When truncated is true, " +
				"read on from nextOffset. Lines over 2000 bytes are cut (clippedLines counts them). " +
				"Binary files are refused.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],
				"properties":{
				"path":{"type":"string","minLength":1,"maxLength":4096,"description":"Path relative to the workspace root."},
				"offset":{"type":"integer","minimum":1,"description":"1-based line to start at."},
				"limit":{"type":"integer","minimum":1,"maximum":10000,"description":"Number of lines to return."}}}`),
			Policy: tools.Required, Effect: tools.EffectRead,
			Handler: &readHandler{ws: ws},
		},
		{
			Origin: tools.BuiltinOrigin, RawName: "file_edit",
			Description: "Replace an exact string in a workspace file. digest must be the one file_read " +
				"returned for the file's current content (file.stale otherwise: read it again). old must " +
				"occur exactly once (file.ambiguous otherwise, unless replaceAll is true) and must be copied " +
				"exactly, whitespace included, without the line numbers of file_read. CRLF files keep CRLF; " +
				"write old and new with plain newlines. Returns a unified diff and the new digest.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path","digest","old","new"],
				"properties":{
				"path":{"type":"string","minLength":1,"maxLength":4096,"description":"Path relative to the workspace root."},
				"digest":{"type":"string","pattern":"^sha256:[0-9a-f]{64}$","description":"The digest file_read returned."},
				"old":{"type":"string","minLength":1,"description":"The exact text to replace."},
				"new":{"type":"string","description":"The replacement text."},
				"replaceAll":{"type":"boolean","description":"Replace every occurrence of old."}}}`),
			Policy: tools.Required, Effect: tools.EffectReversible,
			Handler: &editHandler{ws: ws},
		},
		{
			Origin: tools.BuiltinOrigin, RawName: "file_write",
			Description: "Write a whole file in the workspace, creating parent directories. An existing " +
				"file is refused (file.exists) unless overwrite is true. The content is written exactly " +
				"as given. Prefer file_edit for changes to an existing file.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path","content"],
				"properties":{
				"path":{"type":"string","minLength":1,"maxLength":4096,"description":"Path relative to the workspace root."},
				"content":{"type":"string","description":"The whole new content of the file."},
				"overwrite":{"type":"boolean","description":"Replace the file if it exists."}}}`),
			Policy: tools.Required, Effect: tools.EffectIrreversible,
			Handler: &writeHandler{ws: ws},
		},
		{
			Origin: tools.BuiltinOrigin, RawName: "file_find",
			Description: "List workspace files whose path matches a glob, sorted, skipping .git and " +
				"what .gitignore ignores. \"**\" crosses directories; {a,b} alternates. A pattern without " +
				"\"/\" matches file names at any depth (\"*.go\"); one with \"/\" matches the whole " +
				"relative path (\"cmd/**/*_test.go\"). When truncated is true, call again with cursor " +
				"set to nextCursor. limit defaults to 200.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["pattern"],
				"properties":{
				"pattern":{"type":"string","minLength":1,"maxLength":4096,"description":"Glob, e.g. **/*.go or src/*.ts."},
				"cursor":{"type":"string","maxLength":8192,"description":"nextCursor from the previous page."},
				"limit":{"type":"integer","minimum":1,"maximum":2000,"description":"Paths per page."}}}`),
			Policy: tools.Required, Effect: tools.EffectRead,
			Handler: &findHandler{ws: ws},
		},
		{
			Origin: tools.BuiltinOrigin, RawName: "file_search",
			Description: "Search workspace files line by line for an RE2 regular expression (or a plain " +
				"string with literal:true). Returns path, line number and the matching line (cut to 240 " +
				"bytes), sorted by path and line; never a whole file. glob narrows the files like " +
				"file_find's pattern. Skips .git, .gitignored, binary and files over 8 MiB (counted in " +
				"skippedBinary, skippedLarge). When truncated is true, call again with cursor set to " +
				"nextCursor. limit defaults to 100.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["pattern"],
				"properties":{
				"pattern":{"type":"string","minLength":1,"maxLength":4096,"description":"RE2 regular expression, or a literal string with literal:true."},
				"literal":{"type":"boolean","description":"Treat pattern as a plain string."},
				"glob":{"type":"string","minLength":1,"maxLength":4096,"description":"Only files matching this glob."},
				"cursor":{"type":"string","maxLength":8192,"description":"nextCursor from the previous page."},
				"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Matching lines per page."}}}`),
			Policy: tools.Required, Effect: tools.EffectRead,
			Handler: &searchHandler{ws: ws},
		},
	}
}

// fail turns an error into a result: refusals travel as they are; anything
// else is a tool failure, reported rather than hidden.
func fail(err error) tools.Result {
	var r *tools.Refusal
	if errors.As(err, &r) {
		return r
	}
	return tools.Refuse(tools.ToolFailed, err.Error())
}

// recoverResult turns a panic in a handler into tool.failed: a bug in a
// tool is reported to the model and the operator, never a crash of the
// console.
func recoverResult(call tools.Call, res *tools.Result) {
	if r := recover(); r != nil {
		*res = tools.Refuse(tools.ToolFailed, fmt.Sprintf("internal error (a bug): %v", r)).With("call", call.ID)
	}
}

// recoverPreview is recoverResult for Preview.
func recoverPreview(pv *tools.Preview, err *error) {
	if r := recover(); r != nil {
		*pv = nil
		*err = tools.Refuse(tools.ToolFailed, fmt.Sprintf("internal error (a bug): %v", r))
	}
}

// decode reads a call's canonical arguments into v.
func decode(call tools.Call, v any) *tools.Refusal {
	if err := call.Decode(v); err != nil {
		return tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("arguments: %v", err))
	}
	return nil
}
