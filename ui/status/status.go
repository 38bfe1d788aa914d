// Package status renders the console's one-line bars: the status bar at
// the top (model, sandbox, workspace, tokens and cost, pending approvals)
// and the lanes bar at the bottom (lanes with their state, key hints).
package status

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"staage/themes"
	"staage/ui/sanitize"
)

// Info is what the status bar shows.
type Info struct {
	Model, Sandbox, Workspace string
	Demo                      bool
	InputTokens, OutputTokens int64
	CostUSD                   float64
	CostKnown                 bool
	Pending                   int
	Running                   bool
	Note                      string
}

// Bar renders the status bar, exactly w cells wide.
func Bar(th themes.Theme, in Info, w int) string {
	left := []string{th.StatusKey.Render(" staage")}
	if in.Demo {
		left = append(left, th.StatusWarn.Render("offline demo"))
	}
	if in.Model != "" && !(in.Demo && in.Model == "offline demo") {
		left = append(left, th.StatusBar.Render(sanitize.Line(in.Model)))
	}
	if in.Sandbox != "" {
		left = append(left, th.StatusBar.Render("sandbox: "+sanitize.Line(in.Sandbox)))
	}
	if in.Workspace != "" {
		left = append(left, th.StatusBar.Render(sanitize.Line(in.Workspace)))
	}
	var right []string
	if in.Running {
		right = append(right, th.StatusBar.Render("● working"))
	}
	if in.Note != "" {
		right = append(right, th.StatusWarn.Render(sanitize.Line(in.Note)))
	}
	if tok := in.InputTokens + in.OutputTokens; tok > 0 {
		right = append(right, th.StatusBar.Render(Tokens(tok)+" tok"))
	}
	if in.CostKnown {
		right = append(right, th.StatusBar.Render(fmt.Sprintf("$%.2f", in.CostUSD)))
	}
	if in.Pending > 0 {
		right = append(right, th.StatusWarn.Render(fmt.Sprintf("⚠ %d pending", in.Pending)))
	}
	sep := th.StatusBar.Render(" · ")
	return fill(th, strings.Join(left, sep), strings.Join(right, sep)+th.StatusBar.Render(" "), w)
}

// Tokens formats a token count compactly: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Lane is one entry of the lanes bar.
type Lane struct {
	Name string
	// State is "" (idle), "running", "done", "failed" or "cut".
	State string
}

// Lanes renders the lanes bar with the hints on the right.
func Lanes(th themes.Theme, lanes []Lane, current string, hints string, w int) string {
	parts := []string{th.Muted.Render("lanes:")}
	for _, l := range lanes {
		name := sanitize.Line(l.Name)
		switch l.State {
		case "running":
			name += " ●"
		case "done":
			name += " ✓"
		case "failed", "cut":
			name += " ✗"
		}
		if l.Name == current {
			parts = append(parts, th.Accent.Render("["+name+"]"))
		} else {
			parts = append(parts, th.Text.Render(name))
		}
	}
	return fillPlain(strings.Join(parts, " "), th.Muted.Render(hints), w)
}

func fill(th themes.Theme, left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		left = ansi.Truncate(left, max(w-rw-1, 0), "…")
		lw = ansi.StringWidth(left)
		if lw+rw > w {
			return ansi.Truncate(left+right, w, "")
		}
	}
	return left + th.StatusBar.Render(strings.Repeat(" ", w-lw-rw)) + right
}

func fillPlain(left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		right = ""
		rw = 0
		left = ansi.Truncate(left, w, "…")
		lw = ansi.StringWidth(left)
	}
	return left + strings.Repeat(" ", max(w-lw-rw, 0)) + right
}
