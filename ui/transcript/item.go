package transcript

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"staage/tools"
	"staage/ui/markdown"
	"staage/ui/sanitize"
)

// Kind of a transcript item.
type Kind int

// Item kinds.
const (
	KindUser Kind = iota + 1
	KindAssistant
	KindThinking
	KindTool
	KindNotice
)

// Level of a notice.
type Level int

// Notice levels.
const (
	LevelInfo Level = iota
	LevelWarn
	LevelError
)

// Item is one entry of the transcript. Text is already sanitized. The
// rendered lines are cached per width; a finished item is frozen and never
// re-rendered at the same width.
type Item struct {
	Kind  Kind
	Text  string
	Level Level
	Tool  *ToolCard
	// Streaming is set while text deltas still arrive.
	Streaming bool
	Expanded  bool

	// stale marks text that changed since the cache was built; it is
	// only honoured at the next Settle (one re-render per frame).
	stale    bool
	cacheW   int
	cacheOK  bool
	rendered []string
	// blocks caches markdown rendering block by block, so a long answer
	// that is still streaming re-renders only its last block per frame.
	blocks markdown.Blocks
}

// invalidate drops the cached rendering now.
func (it *Item) invalidate() { it.cacheOK = false }

// ToolStatus is how far a call got.
type ToolStatus int

// Tool call statuses.
const (
	ToolProposed ToolStatus = iota
	ToolAwaiting            // the operator is being asked
	ToolRunning
	ToolOK
	ToolRefused
)

// ToolCard is what the transcript knows about one call. Every string field
// is sanitized when it is set.
type ToolCard struct {
	ID, Name, Origin string
	Effect           tools.EffectClass
	Policy           tools.ApprovalPolicy
	Digest           string
	// KeyArg is the one argument that identifies the call (a path, a
	// command), with removed control characters marked.
	KeyArg string
	// input is the raw arguments, pretty-printed only for an expanded card.
	input json.RawMessage
	// Decision reads "approved · session", "denied · note: …".
	Decision string
	Edited   bool
	Status   ToolStatus
	Refusal  string
	Message  string
	// Bounds lists the bounds the result named (truncated, scanCapped…).
	Bounds []string
	// payload is the raw result; it is pretty-printed only when the card
	// is expanded (most never are, and a file read can be large).
	payload json.RawMessage
}

// Payload is the result as the expanded card shows it: pretty, sanitized,
// at most maxPayloadLines lines.
func (tc *ToolCard) Payload() string { return prettyPayload(tc.payload) }

// keyArgNames are argument names that identify a call, in order of
// preference. This looks at argument shapes, never at tool names.
var keyArgNames = []string{"path", "command", "pattern", "objective", "change", "name", "query", "slug"}

func newToolCard(id, name, origin string, effect tools.EffectClass, policy tools.ApprovalPolicy, digest string, input json.RawMessage) *ToolCard {
	tc := &ToolCard{
		ID: sanitize.Line(id), Name: sanitize.Line(name), Origin: sanitize.Line(origin),
		Effect: effect, Policy: policy, Digest: shortDigest(digest),
	}
	tc.KeyArg, tc.input = keyArg(input), input
	return tc
}

// shortDigest is the UI form: sha256: and 12 hex digits.
func shortDigest(d string) string {
	d = sanitize.Line(d)
	if h, ok := strings.CutPrefix(d, "sha256:"); ok && len(h) > 12 {
		return "sha256:" + h[:12]
	}
	return d
}

// keyArg finds the argument that identifies the call.
func keyArg(input json.RawMessage) string {
	var obj map[string]any
	if err := json.Unmarshal(input, &obj); err != nil {
		return clip(sanitize.Line(clipBytes(string(input))), 80)
	}
	for _, k := range keyArgNames {
		if v, ok := obj[k].(string); ok && v != "" {
			return sanitize.Line(clipBytes(v))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := obj[k].(string); ok && v != "" {
			return sanitize.Line(clipBytes(k + "=" + v))
		}
	}
	return ""
}

// clipBytes bounds what a one-line field costs to sanitize; the card
// truncates it to the width anyway.
func clipBytes(s string) string {
	if len(s) > 1024 {
		return s[:1024]
	}
	return s
}

// Args is the pretty JSON of the arguments for the expanded card, with
// removed control characters marked, at most maxPayloadLines lines.
func (tc *ToolCard) Args() string {
	var buf bytes.Buffer
	if json.Indent(&buf, tc.input, "", "  ") != nil {
		return sanitize.Marked(clipBytes(string(tc.input)))
	}
	// Indent keeps JSON's escapes (\u001b stays six inert characters);
	// bidi and zero-width characters are literal, so mark them.
	lines := strings.SplitN(buf.String(), "\n", maxPayloadLines+1)
	if len(lines) > maxPayloadLines {
		lines = append(lines[:maxPayloadLines], "… more not shown")
	}
	return sanitize.Marked(strings.Join(lines, "\n"))
}

// boundNames are the named bounds of tools.Bounds, as JSON keys.
var boundNames = []string{"truncated", "scanCapped", "skippedBinary", "skippedLarge", "clippedLines"}

// maxPayloadLines bounds what an expanded card shows of a result.
const maxPayloadLines = 200

// payloadBounds names the bounds a payload reports.
func payloadBounds(p json.RawMessage) []string {
	var obj map[string]json.RawMessage
	if len(p) == 0 || json.Unmarshal(p, &obj) != nil {
		return nil
	}
	var bounds []string
	for _, k := range boundNames {
		v, ok := obj[k]
		if !ok {
			continue
		}
		var b bool
		var n float64
		switch {
		case json.Unmarshal(v, &b) == nil && b:
			bounds = append(bounds, k)
		case json.Unmarshal(v, &n) == nil && n > 0:
			bounds = append(bounds, k+" "+trimFloat(n))
		}
	}
	return bounds
}

// prettyPayload indents a payload, shows its strings' newlines as line
// breaks, sanitizes it and keeps the first maxPayloadLines lines.
func prettyPayload(p json.RawMessage) string {
	if len(p) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(p, &s) != nil {
		var buf bytes.Buffer
		if json.Indent(&buf, p, "", "  ") == nil {
			s = unescapeForDisplay(buf.String())
		} else {
			s = string(p)
		}
	}
	lines := strings.SplitN(s, "\n", maxPayloadLines+1)
	more := ""
	if len(lines) > maxPayloadLines {
		lines = lines[:maxPayloadLines]
		more = "\n… more not shown"
	}
	return sanitize.Text(strings.Join(lines, "\n")) + more
}

// unescapeForDisplay turns the JSON escapes of newlines and tabs back into
// real ones so file contents read naturally in an expanded card. What it
// produces is sanitized again by the caller.
func unescapeForDisplay(s string) string {
	return strings.NewReplacer(`\n`, "\n      ", `\t`, "    ").Replace(s)
}

func trimFloat(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
