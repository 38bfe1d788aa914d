package tools

import "encoding/json"

// Preview is the typed, exact effect of a call, computed without running it.
// The approval modal renders previews by type; a new tool that returns one of
// these needs no UI change.
type Preview interface {
	sealedPreview()
}

// DiffPreview shows the change a file tool would make, one entry per file.
type DiffPreview struct {
	Files []FileDiff `json:"files"`
}

// FileOp says what happens to a file in a diff.
type FileOp string

// File operations in a DiffPreview.
const (
	FileCreate  FileOp = "create"
	FileModify  FileOp = "modify"
	FileReplace FileOp = "replace" // a whole-file write over an existing file
	FileDelete  FileOp = "delete"
)

// FileDiff is one file of a DiffPreview. Old and New are the whole contents
// so the viewer can render unified or split and highlight by file name;
// Unified is the unified diff that will be reported after the write.
type FileDiff struct {
	Path    string `json:"path"`
	Op      FileOp `json:"op"`
	Old     string `json:"old"`
	New     string `json:"new"`
	Unified string `json:"unified"`
	// Digest is the sha256 of Old the run will re-check, so what was
	// approved is what gets written.
	Digest string `json:"digest,omitempty"`
}

// CommandPreview shows a command and where it will run.
type CommandPreview struct {
	Command string `json:"command"`
	Workdir string `json:"workdir"`
	Sandbox string `json:"sandbox"`
	// Network says in words whether the command can reach the network.
	Network string `json:"network,omitempty"`
}

// ArgsPreview is the fallback: the canonical arguments, shown as they are.
type ArgsPreview struct {
	Args json.RawMessage `json:"args"`
}

func (DiffPreview) sealedPreview()    {}
func (CommandPreview) sealedPreview() {}
func (ArgsPreview) sealedPreview()    {}
