package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"staage/tools"
)

// Declarations returns skill_list and skill_load over dirs. Both are
// REQUIRED reads: reading the user's config dir is an outbound act the
// operator decides on, like any file read.
func Declarations(dirs Dirs) []tools.Declaration {
	return []tools.Declaration{
		{
			Origin:  tools.BuiltinOrigin,
			RawName: "skill_list",
			Description: "List the know-how cards (skills) available on disk, one line each, sorted by name: " +
				"name, description and where it comes from (workspace or user). Load one with skill_load.",
			Schema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Policy:  tools.Required,
			Effect:  tools.EffectRead,
			Handler: listHandler{dirs},
		},
		{
			Origin:  tools.BuiltinOrigin,
			RawName: "skill_load",
			Description: "Load one know-how card by its name (as skill_list shows it) and return it whole. " +
				"An unknown name is refused with the name that was not found.",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":200}},` +
				`"required":["name"],"additionalProperties":false}`),
			Policy:  tools.Required,
			Effect:  tools.EffectRead,
			Handler: loadHandler{dirs},
		},
	}
}

// ListPayload is skill_list's answer. Cards holds one line per card
// ("name: description [source]"); Skipped one line per folder that is not
// a usable card ("source/folder: reason"). ScanCapped is set when a root had
// more than MaxFolders folders.
type ListPayload struct {
	Cards   []string `json:"cards"`
	Skipped []string `json:"skipped,omitempty"`
	tools.Bounds
}

type listHandler struct{ dirs Dirs }

func (h listHandler) Run(_ context.Context, _ tools.Call) tools.Result {
	cat := Scan(h.dirs)
	p := ListPayload{Cards: make([]string, 0, len(cat.Cards))}
	for _, c := range cat.Cards {
		p.Cards = append(p.Cards, cardLine(c))
	}
	for _, s := range cat.Skipped {
		p.Skipped = append(p.Skipped, skippedLine(s))
	}
	p.ScanCapped = cat.ScanCapped
	return tools.Ok{Payload: p}
}

func cardLine(c Card) string {
	where := c.Source
	if c.Shadows {
		where += ", shadows the user card of the same name"
	}
	return fmt.Sprintf("%s: %s [%s]", c.Name, c.Description, where)
}

func skippedLine(s Skipped) string {
	if s.Folder == "" {
		return fmt.Sprintf("%s: %s", s.Source, s.Reason)
	}
	return fmt.Sprintf("%s/%s: skipped, %s", s.Source, oneLine(s.Folder), s.Reason)
}

// LoadPayload is skill_load's answer: the whole card, or its first
// MaxCardBytes with Truncated set and TotalBytes saying how much there was.
type LoadPayload struct {
	Name       string `json:"name"`
	Source     string `json:"source"`
	Folder     string `json:"folder"` // absolute path of the card's folder
	Content    string `json:"content"`
	Bytes      int    `json:"bytes"`
	TotalBytes int64  `json:"totalBytes"`
	// Resources names the other entries of the card's folder (top level,
	// folders with a trailing /), which the card may refer to.
	Resources []string `json:"resources,omitempty"`
	tools.Bounds
}

type loadHandler struct{ dirs Dirs }

func (h loadHandler) Run(_ context.Context, call tools.Call) tools.Result {
	var args struct {
		Name string `json:"name"`
	}
	if err := call.Decode(&args); err != nil {
		return tools.Refuse(tools.ArgsInvalid, "skill_load arguments: "+err.Error())
	}
	cat := Scan(h.dirs)
	// The name is only ever compared with scanned names, never joined to
	// a path, so "../x" or "/etc" can only fail to match.
	card, ok := cat.Lookup(args.Name)
	if !ok {
		return unknown(cat, args.Name)
	}
	p, err := load(card)
	if err != nil {
		return tools.Refuse(tools.SkillUnknown, fmt.Sprintf("card %q could not be read: %v", card.Name, err)).With("name", card.Name)
	}
	return tools.Ok{Payload: p}
}

func unknown(cat Catalog, name string) *tools.Refusal {
	shown := oneLine(name)
	msg := fmt.Sprintf("no card named %q", shown)
	for _, s := range cat.Skipped {
		if s.Folder == name {
			msg = fmt.Sprintf("card %q is not usable: %s", shown, s.Reason)
			break
		}
	}
	ref := tools.Refuse(tools.SkillUnknown, msg).With("name", shown)
	if near := nearest(cat, name, 3); len(near) > 0 {
		ref.Message += "; did you mean " + strings.Join(near, ", ") + "?"
		ref = ref.With("nearest", near)
	}
	return ref
}

func load(card Card) (LoadPayload, error) {
	root, err := os.OpenRoot(card.Root)
	if err != nil {
		return LoadPayload{}, err
	}
	defer root.Close()
	f, reason := openCard(root, card.Folder)
	if reason != "" {
		return LoadPayload{}, fmt.Errorf("%s", reason)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return LoadPayload{}, err
	}
	body, err := io.ReadAll(io.LimitReader(f, MaxCardBytes+1))
	if err != nil {
		return LoadPayload{}, err
	}
	p := LoadPayload{Name: card.Name, Source: card.Source, Folder: root.Name() + string(os.PathSeparator) + card.Folder, TotalBytes: st.Size()}
	if len(body) > MaxCardBytes {
		body = clipAtLine(body[:MaxCardBytes])
		p.Truncated = true
	}
	p.Content = strings.ToValidUTF8(string(body), "\uFFFD")
	p.Bytes = len(body)
	p.Resources = resources(root, card.Folder)
	return p, nil
}

// clipAtLine cuts b at its last newline (or, without one, at the last whole
// rune), so a clipped card never ends mid-line or mid-character.
func clipAtLine(b []byte) []byte {
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		return b[:i+1]
	}
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}

func resources(root *os.Root, folder string) []string {
	f, err := root.Open(folder)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Name() == CardFile || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := oneLine(e.Name())
		if e.IsDir() {
			name += "/"
		}
		out = append(out, name)
	}
	sort.Strings(out)
	if len(out) > maxResources {
		out = append(out[:maxResources], fmt.Sprintf("… and %d more", len(out)-maxResources))
	}
	return out
}

// nearest proposes up to n card names close to name: by edit distance, or
// sharing a substring.
func nearest(cat Catalog, name string, n int) []string {
	type cand struct {
		name string
		dist int
	}
	want := strings.ToLower(name)
	var cands []cand
	for _, c := range cat.Cards {
		d := editDistance(want, c.Name)
		limit := max(2, len(c.Name)/3)
		if d <= limit || (len(want) >= 3 && (strings.Contains(c.Name, want) || strings.Contains(want, c.Name))) {
			cands = append(cands, cand{c.Name, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance over runes; names are short.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 {
		ra = ra[:256]
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
