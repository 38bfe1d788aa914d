package app

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// key handles a key press: global keys first, then the modal, then the
// focused pane.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return m.ctrlC()
	}
	// Any other key ends a pending quit and clears the last note.
	m.quitArmed, m.flash = time.Time{}, ""
	if m.modal.Visible() {
		if cmd, ok := m.modal.Update(k); ok {
			m.info.Pending = m.modal.Len()
			return cmd
		}
	} else if m.modal.Hidden() {
		if cmd, ok := m.modal.Update(k); ok {
			return cmd
		}
	}
	if m.system.open && m.system.key(s, m.pageSize()) {
		return nil
	}
	if m.help {
		if s == "esc" || s == "?" || s == "q" || s == "f1" {
			m.help = false
		}
		if s != "esc" || !m.running {
			return nil
		}
	}
	switch s {
	case "esc":
		if m.Interrupt() {
			return nil
		}
		m.setFocus(FocusInput)
		return nil
	case "f1":
		m.help = true
		return nil
	case "?":
		if m.focus != FocusInput || m.input.Value() == "" {
			m.help = true
			return nil
		}
	case "tab":
		m.setFocus((m.focus + 1) % focusCount)
		m.skipHidden(1)
		return nil
	case "shift+tab":
		m.setFocus((m.focus + focusCount - 1) % focusCount)
		m.skipHidden(-1)
		return nil
	case "pgup":
		m.cur().Scroll(-m.pageSize())
		return nil
	case "pgdown":
		m.cur().Scroll(m.pageSize())
		return nil
	case "ctrl+o":
		m.cur().ToggleSelected()
		return nil
	case "alt+s":
		m.system.open, m.system.offset = true, 0
		return nil
	case "alt+p":
		m.showPlan = !m.showPlan
		m.layout()
		return nil
	case "alt+d":
		m.showDesk = !m.showDesk
		m.layout()
		return nil
	case "alt+]":
		m.switchLane(1)
		return nil
	case "alt+[":
		m.switchLane(-1)
		return nil
	}
	switch m.focus {
	case FocusInput:
		cmd := m.input.Update(k)
		m.layout()
		return cmd
	case FocusTranscript:
		t := m.cur()
		switch s {
		case "j", "down":
			t.Scroll(1)
		case "k", "up":
			t.Scroll(-1)
		case "g", "home":
			t.ScrollToTop()
		case "G", "end":
			t.ScrollToBottom()
		case "]", "n":
			t.SelectNext(1)
		case "[", "p":
			t.SelectNext(-1)
		case "enter", "space", "o", "x":
			t.ToggleSelected()
		}
	case FocusPlan:
		switch s {
		case "j", "down":
			m.plans[m.lane].Scroll(1)
		case "k", "up":
			m.plans[m.lane].Scroll(-1)
		}
	case FocusDesk:
		switch s {
		case "j", "down":
			m.desks[m.lane].Scroll(1)
		case "k", "up":
			m.desks[m.lane].Scroll(-1)
		}
	}
	return nil
}

// ctrlC clears the input first; a second press within QuitWindow quits,
// interrupting the running turn.
func (m *Model) ctrlC() tea.Cmd {
	now := m.now()
	if !m.quitArmed.IsZero() && now.Sub(m.quitArmed) < QuitWindow {
		if m.cancel != nil {
			m.cancel()
		}
		return tea.Quit
	}
	if m.focus == FocusInput && m.input.Value() != "" {
		m.input.Reset()
		m.layout()
	}
	m.quitArmed = now
	m.flash = "press ctrl+c again to quit"
	at := now
	return tea.Tick(QuitWindow, func(time.Time) tea.Msg { return quitDisarmMsg{at: at} })
}

func (m *Model) setFocus(f Focus) {
	m.focus = f
	if f == FocusInput {
		m.input.Focus()
		m.cur().ClearSelection()
	} else {
		m.input.Blur()
	}
}

// skipHidden moves focus past panes that are not on screen.
func (m *Model) skipHidden(dir int) {
	for i := 0; i < int(focusCount); i++ {
		if (m.focus == FocusPlan && !m.planShown()) || (m.focus == FocusDesk && !m.deskShown()) {
			m.setFocus((m.focus + Focus(int(focusCount)+dir)) % focusCount)
			continue
		}
		return
	}
}

func (m *Model) switchLane(dir int) {
	if len(m.lanes) < 2 {
		return
	}
	i := 0
	for j, l := range m.lanes {
		if l.Name == m.lane {
			i = j
		}
	}
	i = (i + dir + len(m.lanes)) % len(m.lanes)
	m.lane = m.lanes[i].Name
	m.layout()
}

// wheel scrolls what is under the pointer.
func (m *Model) wheel(w tea.MouseWheelMsg) {
	n := 0
	switch w.Button {
	case tea.MouseWheelUp:
		n = -3
	case tea.MouseWheelDown:
		n = 3
	default:
		return
	}
	if m.modal.Visible() {
		m.modal.Scroll(n)
		return
	}
	l := m.geometry()
	switch {
	case l.sideW > 0 && w.X >= l.mainW && w.Y >= l.top && w.Y < l.top+l.planH:
		m.plans[m.lane].Scroll(n / 3)
	case l.sideW > 0 && w.X >= l.mainW && w.Y >= l.top+l.planH && w.Y < l.top+l.midH:
		m.desks[m.lane].Scroll(n)
	case w.Y >= l.top && w.Y < l.top+l.midH:
		m.cur().Scroll(n)
	}
}

// click focuses the pane under the pointer. Clicks never reach the
// approval dialog: a click is not an answer.
func (m *Model) click(c tea.MouseClickMsg) {
	if m.modal.Visible() || c.Button != tea.MouseLeft {
		return
	}
	l := m.geometry()
	switch {
	case c.Y >= l.inputTop && c.Y < l.inputTop+l.inputH:
		m.setFocus(FocusInput)
	case c.Y < l.top || c.Y >= l.top+l.midH:
	case l.sideW > 0 && c.X >= l.mainW && c.Y < l.top+l.planH && m.showPlan:
		m.setFocus(FocusPlan)
	case l.sideW > 0 && c.X >= l.mainW:
		m.setFocus(FocusDesk)
	default:
		m.setFocus(FocusTranscript)
	}
}
