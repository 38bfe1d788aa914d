// Package themes holds staage's palettes (dark, light, high-contrast and
// NO_COLOR) and derives from one palette both the lipgloss styles of the
// console and the chroma style that highlights code, so a diff, a badge and
// a status bar never disagree about what a colour means.
package themes

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"staage/tools"
)

// Names of the built-in themes.
const (
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
	NoColor      = "no-color"
)

// Palette is the set of colours a theme is made of. A nil colour means "the
// terminal's default" (every colour of the NO_COLOR palette is nil).
type Palette struct {
	Name string
	// IsDark says the palette is meant for a dark background (glamour and
	// help styles follow it).
	IsDark bool

	Fg, Muted, Subtle, Accent, Border, FocusBorder color.Color
	StatusFg, StatusBg                             color.Color
	User, Assistant, Thinking                      color.Color
	OK, Warn, Error                                color.Color
	// Diff line colours: foreground of the sign and line numbers, and a
	// background tint for whole changed lines.
	Add, Del, AddBg, DelBg, Hunk color.Color
	// Effect colours, one per class, used for every badge everywhere.
	EffectRead, EffectIdem, EffectRev, EffectIrrev color.Color
	// Syntax colours for the chroma style.
	Keyword, String, Number, Comment, Func, Type, Punct color.Color
	// Marker colours the visible marker of removed control characters.
	Marker color.Color
}

func c(hex string) color.Color { return lipgloss.Color(hex) }

// DarkPalette is the default for dark terminals.
func DarkPalette() Palette {
	return Palette{
		Name: Dark, IsDark: true,
		Fg: c("#d8dee9"), Muted: c("#7f8796"), Subtle: c("#4c5464"), Accent: c("#88c0d0"),
		Border: c("#4c5464"), FocusBorder: c("#88c0d0"),
		StatusFg: c("#e5e9f0"), StatusBg: c("#2e3440"),
		User: c("#a3be8c"), Assistant: c("#88c0d0"), Thinking: c("#7f8796"),
		OK: c("#a3be8c"), Warn: c("#ebcb8b"), Error: c("#e06c75"),
		Add: c("#a3be8c"), Del: c("#e06c75"), AddBg: c("#1f3326"), DelBg: c("#3d2226"), Hunk: c("#b48ead"),
		EffectRead: c("#5fafd7"), EffectIdem: c("#a3be8c"), EffectRev: c("#e5c07b"), EffectIrrev: c("#ff5f5f"),
		Keyword: c("#c678dd"), String: c("#98c379"), Number: c("#d19a66"), Comment: c("#7f848e"),
		Func: c("#61afef"), Type: c("#e5c07b"), Punct: c("#abb2bf"),
		Marker: c("#ff5fd7"),
	}
}

// LightPalette is the default for light terminals.
func LightPalette() Palette {
	return Palette{
		Name: Light, IsDark: false,
		Fg: c("#24292f"), Muted: c("#6e7781"), Subtle: c("#afb8c1"), Accent: c("#0969da"),
		Border: c("#afb8c1"), FocusBorder: c("#0969da"),
		StatusFg: c("#24292f"), StatusBg: c("#d0d7de"),
		User: c("#1a7f37"), Assistant: c("#0969da"), Thinking: c("#6e7781"),
		OK: c("#1a7f37"), Warn: c("#9a6700"), Error: c("#cf222e"),
		Add: c("#1a7f37"), Del: c("#cf222e"), AddBg: c("#dafbe1"), DelBg: c("#ffebe9"), Hunk: c("#8250df"),
		EffectRead: c("#0969da"), EffectIdem: c("#1a7f37"), EffectRev: c("#9a6700"), EffectIrrev: c("#cf222e"),
		Keyword: c("#cf222e"), String: c("#0a3069"), Number: c("#0550ae"), Comment: c("#6e7781"),
		Func: c("#8250df"), Type: c("#953800"), Punct: c("#24292f"),
		Marker: c("#bf3989"),
	}
}

// HighContrastPalette is pure, saturated colours on a dark background.
func HighContrastPalette() Palette {
	return Palette{
		Name: HighContrast, IsDark: true,
		Fg: c("#ffffff"), Muted: c("#d0d0d0"), Subtle: c("#a0a0a0"), Accent: c("#00ffff"),
		Border: c("#ffffff"), FocusBorder: c("#ffff00"),
		StatusFg: c("#000000"), StatusBg: c("#ffffff"),
		User: c("#00ff00"), Assistant: c("#00ffff"), Thinking: c("#d0d0d0"),
		OK: c("#00ff00"), Warn: c("#ffff00"), Error: c("#ff0000"),
		Add: c("#00ff00"), Del: c("#ff4040"), AddBg: c("#003300"), DelBg: c("#4d0000"), Hunk: c("#ff00ff"),
		EffectRead: c("#00ffff"), EffectIdem: c("#00ff00"), EffectRev: c("#ffff00"), EffectIrrev: c("#ff0000"),
		Keyword: c("#ff80ff"), String: c("#80ff80"), Number: c("#ffff80"), Comment: c("#c0c0c0"),
		Func: c("#80ffff"), Type: c("#ffd700"), Punct: c("#ffffff"),
		Marker: c("#ff00ff"),
	}
}

// NoColorPalette has no colour at all (https://no-color.org); emphasis is
// carried by bold, reverse and the text itself (signs, brackets).
func NoColorPalette() Palette { return Palette{Name: NoColor, IsDark: true} }

// Env is what theme selection looks at.
type Env struct {
	// NoColor is the value of $NO_COLOR: any non-empty value disables colour.
	NoColor string
	// Override is an explicit theme name ($STAAGE_THEME); empty to detect.
	Override string
	// DarkBackground is what the terminal answered (true when unknown).
	DarkBackground bool
}

// Select picks a palette: NO_COLOR wins, then an explicit name, then the
// terminal's background.
func Select(env Env) Palette {
	if env.NoColor != "" {
		return NoColorPalette()
	}
	switch env.Override {
	case Dark:
		return DarkPalette()
	case Light:
		return LightPalette()
	case HighContrast:
		return HighContrastPalette()
	case NoColor:
		return NoColorPalette()
	}
	if env.DarkBackground {
		return DarkPalette()
	}
	return LightPalette()
}

// Colored reports whether the palette uses colour at all.
func (p Palette) Colored() bool { return p.Fg != nil }

// EffectColor is the one colour of an effect class. Unknown classes get the
// irreversible colour: the UI fails closed like the registry does.
func (p Palette) EffectColor(e tools.EffectClass) color.Color {
	switch e {
	case tools.EffectRead:
		return p.EffectRead
	case tools.EffectIdempotentWrite:
		return p.EffectIdem
	case tools.EffectReversible:
		return p.EffectRev
	default:
		return p.EffectIrrev
	}
}
