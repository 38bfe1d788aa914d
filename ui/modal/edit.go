package modal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"

	tea "charm.land/bubbletea/v2"

	"staage/tools"
	"staage/ui/diffview"
)

// editedMsg returns from $EDITOR.
type editedMsg struct {
	key     uint64
	content string
	err     error
}

// editable returns the one file whose proposed content can be edited: a
// diff preview of exactly one file that is created or changed.
func editable(e *entry) (tools.FileDiff, bool) {
	var p tools.DiffPreview
	switch v := e.Req.Preview.(type) {
	case tools.DiffPreview:
		p = v
	case *tools.DiffPreview:
		if v == nil {
			return tools.FileDiff{}, false
		}
		p = *v
	default:
		return tools.FileDiff{}, false
	}
	if len(p.Files) != 1 || p.Files[0].Op == tools.FileDelete {
		return tools.FileDiff{}, false
	}
	if _, err := editArgs(e.Req.Args, p.Files[0], p.Files[0].New); err != nil {
		return tools.FileDiff{}, false
	}
	return p.Files[0], true
}

func (m *Model) canEdit(e *entry) bool { _, ok := editable(e); return ok }

// editCmd writes the proposed content to a temporary file with the same
// extension (so the editor highlights it) and runs $VISUAL or $EDITOR on it.
func (m *Model) editCmd(e *entry) tea.Cmd {
	fd, ok := editable(e)
	if !ok {
		m.flash = "this request has no single proposed file to edit"
		return nil
	}
	content := fd.New
	if e.edited != nil {
		content = *e.edited
	}
	f, err := os.CreateTemp("", "staage-edit-*"+path.Ext(fd.Path))
	if err != nil {
		m.flash = "edit: " + err.Error()
		return nil
	}
	name := f.Name()
	_, werr := f.WriteString(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(name)
		m.flash = "edit: " + err.Error()
		return nil
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	// Through sh so that EDITOR may carry flags ("code -w"); the file name
	// is passed as $1, never spliced into the command line.
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "staage-editor", name)
	key := e.Key
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(name)
		if err != nil {
			return editedMsg{key: key, err: fmt.Errorf("editor: %w", err)}
		}
		b, rerr := os.ReadFile(name)
		return editedMsg{key: key, content: string(b), err: rerr}
	})
}

// edited takes the editor's result: the preview is recomputed from the
// edited content, so what the operator approves next is what they see.
func (m *Model) edited(msg editedMsg) tea.Cmd {
	if len(m.queue) == 0 || m.queue[0].Key != msg.key {
		return nil
	}
	e := m.queue[0]
	m.armAt = m.now().Add(Grace)
	if msg.err != nil {
		m.flash = msg.err.Error()
		return nil
	}
	fd, _ := editable(e)
	if msg.content == fd.New && e.edited == nil {
		m.flash = "content unchanged"
		return nil
	}
	args, err := editArgs(e.Req.Args, fd, msg.content)
	if err != nil {
		m.flash = "edit: " + err.Error()
		return nil
	}
	content := msg.content
	e.edited, e.editedArgs = &content, args
	fd.New = content
	fd.Unified = ""
	e.diff = newDiff(m, fd)
	m.layout()
	return m.highlightCmd()
}

// editArgs puts edited content into the call's arguments by their shape,
// never by the tool's name: a "content" string is replaced whole; an
// exact-replace pair ("old"/"new") becomes a replacement of the whole old
// text with the edited text. Anything else cannot carry an edit.
func editArgs(raw json.RawMessage, fd tools.FileDiff, content string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("arguments are not an object: %w", err)
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	isString := func(k string) bool {
		v, ok := obj[k]
		var s string
		return ok && json.Unmarshal(v, &s) == nil
	}
	switch {
	case isString("content"):
		obj["content"] = str(content)
	case isString("old") && isString("new"):
		if fd.Old == "" {
			return nil, errors.New("no old content to replace")
		}
		obj["old"] = str(fd.Old)
		obj["new"] = str(content)
		if _, ok := obj["replaceAll"]; ok {
			obj["replaceAll"] = json.RawMessage("false")
		}
	default:
		return nil, errors.New("the arguments have no content to edit")
	}
	return json.Marshal(obj)
}

func newDiff(m *Model, fd tools.FileDiff) *diffview.View {
	return diffview.New(m.theme, m.hl, tools.DiffPreview{Files: []tools.FileDiff{fd}})
}
