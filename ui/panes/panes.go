// Package panes holds the console's side panes: the plan of the current
// lane and its desk page (markdown). Both render inside a titled frame,
// scroll, and cache their rendering per width.
package panes

import (
	"strings"

	"charm.land/lipgloss/v2"

	"staage/themes"
	"staage/tools"
	"staage/ui/markdown"
	"staage/ui/sanitize"
)

// Frame draws body lines in a bordered box of exactly w×h cells with a
// title in the top border.
func Frame(th themes.Theme, title string, focused bool, body []string, w, h int) string {
	st, border := th.Pane, lipgloss.RoundedBorder()
	if focused {
		st = th.PaneFocused
		if !th.Colored() {
			border = lipgloss.ThickBorder()
		}
	}
	edge := lipgloss.NewStyle().Foreground(st.GetBorderTopForeground())
	if title != "" {
		title = th.PaneTitle.Render(title)
	}
	return themes.Box(border, edge, title, body, w, h, 0)
}

// Plan shows a lane's plan.
type Plan struct {
	theme  themes.Theme
	steps  []tools.PlanStep
	offset int
}

// NewPlan returns an empty plan pane.
func NewPlan(th themes.Theme) *Plan { return &Plan{theme: th} }

// SetTheme changes the theme.
func (p *Plan) SetTheme(th themes.Theme) { p.theme = th }

// SetSteps replaces the plan.
func (p *Plan) SetSteps(steps []tools.PlanStep) { p.steps = steps; p.offset = 0 }

// Steps returns the plan.
func (p *Plan) Steps() []tools.PlanStep { return p.steps }

// Scroll moves the pane by n lines.
func (p *Plan) Scroll(n int) { p.offset = max(0, min(p.offset+n, len(p.steps)-1)) }

// View renders the pane at w×h.
func (p *Plan) View(w, h int, focused bool) string {
	th := p.theme
	var body []string
	if len(p.steps) == 0 {
		body = append(body, th.Muted.Render("no plan yet"))
	}
	done := 0
	for _, s := range p.steps {
		if s.Status == "done" {
			done++
		}
	}
	for _, s := range p.steps[min(p.offset, len(p.steps)):] {
		title := sanitize.Line(s.Title)
		switch s.Status {
		case "done":
			body = append(body, th.OK.Render("✓ ")+th.Muted.Render(title))
		case "in_progress":
			body = append(body, th.Accent.Render("▸ "+title))
		default:
			body = append(body, th.Text.Render("○ "+title))
		}
	}
	title := "PLAN"
	if len(p.steps) > 0 {
		title += " " + itoa(done) + "/" + itoa(len(p.steps))
	}
	return Frame(th, title, focused, body, w, h)
}

// Desk shows a lane's desk page as markdown.
type Desk struct {
	theme  themes.Theme
	md     *markdown.Renderer
	lane   string
	page   string
	cacheW int
	lines  []string
	offset int
	// blocks keeps the rendering of unchanged parts of the page: a desk
	// write replaces the page, but usually changes a few lines of it.
	blocks markdown.Blocks
}

// NewDesk returns an empty desk pane.
func NewDesk(th themes.Theme, md *markdown.Renderer) *Desk { return &Desk{theme: th, md: md} }

// SetTheme changes the theme.
func (d *Desk) SetTheme(th themes.Theme, md *markdown.Renderer) {
	d.theme, d.md, d.lines, d.blocks = th, md, nil, markdown.Blocks{}
}

// SetPage replaces the page (a desk write replaces, never appends).
func (d *Desk) SetPage(lane, page string) {
	d.lane, d.page, d.lines, d.offset = lane, page, nil, 0
}

// Scroll moves by n lines.
func (d *Desk) Scroll(n int) { d.offset = max(0, min(d.offset+n, len(d.lines)-1)) }

// View renders the pane at w×h.
func (d *Desk) View(w, h int, focused bool) string {
	iw := max(w-2, 8)
	if d.lines == nil || d.cacheW != iw {
		if strings.TrimSpace(d.page) == "" {
			d.lines = []string{d.theme.Muted.Render("the desk is empty")}
		} else {
			d.lines = d.blocks.Render(d.md, d.page, iw)
		}
		d.cacheW = iw
	}
	title := "DESK"
	if d.lane != "" {
		title += " · " + sanitize.Line(d.lane)
	}
	return Frame(d.theme, title, focused, d.lines[min(d.offset, len(d.lines)):], w, h)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
