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

// Notice is a change to the console's own state that a tool reports with its
// result (the plan, a desk page). The loop turns notices into events, so a
// tool family never needs to know about the event stream.
type Notice interface {
	sealedNotice()
}

// PlanStep is one line of a plan.
type PlanStep struct {
	Title  string `json:"title"`
	Status string `json:"status"` // "pending" | "in_progress" | "done"
}

// PlanNotice carries a lane's whole plan after a change.
type PlanNotice struct {
	Steps []PlanStep
}

// DeskNotice carries a lane's whole desk page after a write.
type DeskNotice struct {
	Page string
}

func (PlanNotice) sealedNotice() {}
func (DeskNotice) sealedNotice() {}
