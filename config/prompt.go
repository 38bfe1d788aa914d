package config

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"unicode"
)

// DefaultPrompt is staage's own system prompt: short, because the tools
// describe themselves in the catalog.
const DefaultPrompt = `You are staage, a coding agent working in the operator's workspace through a terminal console. The operator reads the transcript and approves each tool call that needs approval.

- Work in small, verified steps. For a task of more than one step, keep a plan with the plan tool and update it as you go.
- Read before you edit: file_read returns the digest that file_edit must cite. Change existing files with file_edit, not file_write.
- Tool results are ok with a payload, or a refusal with a name (file.stale, approval.denied, ...). A refusal is information: read it, adjust, and do not repeat the same call unchanged. A denial may carry the operator's note; follow it.
- Results that were cut say so (truncated with nextCursor, scanCapped, ...). Page on or narrow the query instead of guessing what you did not see.
- Do not run destructive or outward-reaching commands the operator did not ask for.
- Write to the operator briefly: what you changed, how you checked it, what is left.`

// instructionFiles are read from the workspace root, in this order.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// maxInstructionBytes caps each instruction file in the prompt.
const maxInstructionBytes = 32 << 10

// PromptPart is one piece of the system prompt, for the operator to see.
type PromptPart struct {
	Source    string `json:"source"` // "default", "AGENTS.md", "CLAUDE.md"
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	// Note explains a file that was present but not used.
	Note string `json:"note,omitempty"`
}

// SystemPromptParts returns the default prompt and the workspace's
// instruction files, sanitized and capped. A file that cannot be used (a
// symlink out of the workspace, not a regular file) is a part with a Note
// and no text.
func SystemPromptParts(workspaceDir string) []PromptPart {
	parts := []PromptPart{{Source: "default", Text: DefaultPrompt}}
	if workspaceDir == "" {
		return parts
	}
	root, err := os.OpenRoot(workspaceDir)
	if err != nil {
		return parts
	}
	defer root.Close()
	for _, name := range instructionFiles {
		p, ok := readInstruction(root, name)
		if ok {
			parts = append(parts, p)
		}
	}
	return parts
}

// SystemPrompt is the default prompt plus the workspace's AGENTS.md and
// CLAUDE.md, each under its own heading.
func SystemPrompt(workspaceDir string) string {
	var b strings.Builder
	for i, p := range SystemPromptParts(workspaceDir) {
		if p.Text == "" {
			continue
		}
		if i > 0 {
			fmt.Fprintf(&b, "\n\n# Workspace instructions: %s\n\n", p.Source)
		}
		b.WriteString(p.Text)
		if p.Truncated {
			fmt.Fprintf(&b, "\n[%s was cut at %d KiB]", p.Source, maxInstructionBytes>>10)
		}
	}
	return b.String()
}

func readInstruction(root *os.Root, name string) (PromptPart, bool) {
	part := PromptPart{Source: name}
	if _, err := root.Lstat(name); err != nil {
		return part, false
	}
	// Links are followed only inside the root; O_NONBLOCK keeps a FIFO
	// planted under the name from hanging boot.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		part.Note = "not read: " + err.Error()
		return part, true
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil || !fst.Mode().IsRegular() {
		part.Note = "not read: not a regular file"
		return part, true
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInstructionBytes+1))
	if err != nil {
		part.Note = "not read: " + err.Error()
		return part, true
	}
	if len(data) > maxInstructionBytes {
		data = data[:maxInstructionBytes]
		part.Truncated = true
	}
	part.Text = strings.TrimSpace(Sanitize(string(data)))
	return part, true
}

// ansiSeq matches terminal escape sequences: CSI, OSC (BEL or ST
// terminated), and two-byte escapes.
var ansiSeq = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])`)

// Sanitize strips terminal escape sequences, control characters other than
// newline and tab, and invisible format characters (bidi overrides,
// zero-width), and drops invalid UTF-8: the prompt is shown to the
// operator and must not rewrite their terminal or hide text.
func Sanitize(s string) string {
	s = ansiSeq.ReplaceAllString(s, "")
	s = strings.ToValidUTF8(s, "")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return -1
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}
