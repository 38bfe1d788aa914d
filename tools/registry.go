package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxNameLen is the longest tool name every supported provider accepts.
const MaxNameLen = 64

// Digest pins a descriptor: sha256 over (origin, raw name, canonical schema,
// effect class). A material change is a different tool.
type Digest [32]byte

// String is the full form, "sha256:" and 64 hex digits (journal, headless).
func (d Digest) String() string { return "sha256:" + hex.EncodeToString(d[:]) }

// Short is the form the UI shows: "sha256:" and 12 hex digits.
func (d Digest) Short() string { return "sha256:" + hex.EncodeToString(d[:])[:12] }

// ParseDigest reads the full form back.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return d, fmt.Errorf("digest %q: want sha256:<64 hex>", s)
	}
	if _, err := hex.Decode(d[:], []byte(h)); err != nil {
		return d, fmt.Errorf("digest %q: %w", s, err)
	}
	return d, nil
}

// MarshalText encodes the full form.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes the full form.
func (d *Digest) UnmarshalText(b []byte) error {
	v, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Descriptor is the pinned, host-minted identity of one tool.
type Descriptor struct {
	Name        string          `json:"name"`
	Origin      string          `json:"origin"`
	RawName     string          `json:"rawName"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Policy      ApprovalPolicy  `json:"policy"`
	Effect      EffectClass     `json:"effect"`
	Digest      Digest          `json:"digest"`
	// DescriptionPrint fingerprints the description alone. It is not part
	// of the digest (the spec fixes that), but a changed description of a
	// known digest can be flagged: a quiet rewrite of what a tool claims.
	DescriptionPrint string `json:"descriptionPrint"`
}

// Tool is one entry of a Toolset: the descriptor, its compiled schema and the
// handler that runs it.
type Tool struct {
	Descriptor
	schema  *jsonschema.Schema
	handler Handler
}

// Handler returns the tool's handler (for optional interfaces such as
// Previewer and PrefixGranter).
func (t *Tool) Handler() Handler { return t.handler }

// NoteKind classifies a boot report line.
type NoteKind string

// Boot report note kinds.
const (
	NoteEffectDefaulted NoteKind = "effect.defaulted" // empty or unknown effect became irreversible
	NotePolicyDefaulted NoteKind = "policy.defaulted" // empty or unknown policy became required
	NoteCollision       NoteKind = "registry.collision"
	NoteNameNormalized  NoteKind = "name.normalized"
	NoteNameInvalid     NoteKind = "name.invalid"
	NoteSchemaInvalid   NoteKind = "schema.invalid"
	NoteNoHandler       NoteKind = "handler.missing"
	NoteInfo            NoteKind = "info"
)

// Note is one line of the boot report.
type Note struct {
	Kind    NoteKind `json:"kind"`
	Name    string   `json:"name,omitempty"`
	Origin  string   `json:"origin,omitempty"`
	RawName string   `json:"rawName,omitempty"`
	Message string   `json:"message"`
}

// Report is what the registry says about the declarations it was given.
type Report struct {
	Notes []Note `json:"notes"`
}

// Add appends a note.
func (r *Report) Add(n Note) { r.Notes = append(r.Notes, n) }

// Has reports whether any note of the kind exists.
func (r Report) Has(kind NoteKind) bool {
	for _, n := range r.Notes {
		if n.Kind == kind {
			return true
		}
	}
	return false
}

// Toolset holds one sorted list of tools. Catalog (what the provider renders)
// and Lookup (what the loop dispatches to) are projections of that one list.
type Toolset struct {
	tools []*Tool
}

// CatalogEntry is what a provider renders for one tool.
type CatalogEntry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// NewToolset mints names, pins digests, fails collisions closed and returns
// the sorted toolset with its report. It is deterministic: the order of decls
// does not matter.
func NewToolset(decls []Declaration) (*Toolset, Report) {
	var rep Report
	type candidate struct {
		tool *Tool
		key  string
	}
	var cands []candidate
	for _, d := range decls {
		t, ok := pin(d, &rep)
		if !ok {
			continue
		}
		cands = append(cands, candidate{t, foldName(t.Name)})
	}
	// Sort first so that collision reports come out in one order whatever
	// the order of the declarations.
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].key != cands[j].key {
			return cands[i].key < cands[j].key
		}
		if cands[i].tool.Name != cands[j].tool.Name {
			return cands[i].tool.Name < cands[j].tool.Name
		}
		return cands[i].tool.Digest.String() < cands[j].tool.Digest.String()
	})
	ts := &Toolset{}
	for i := 0; i < len(cands); {
		j := i + 1
		for j < len(cands) && cands[j].key == cands[i].key {
			j++
		}
		if j-i == 1 {
			ts.tools = append(ts.tools, cands[i].tool)
		} else {
			var names []string
			for _, c := range cands[i:j] {
				// Quoted: raw names come from origins and may carry
				// terminal control sequences into the boot report.
				names = append(names, strconv.Quote(c.tool.Origin+"/"+c.tool.RawName))
			}
			for _, c := range cands[i:j] {
				rep.Add(Note{Kind: NoteCollision, Name: c.tool.Name, Origin: c.tool.Origin, RawName: c.tool.RawName,
					Message: fmt.Sprintf("%s collides after normalization with %s; none of them is offered",
						c.tool.Name, strings.Join(names, ", "))})
			}
		}
		i = j
	}
	sort.Slice(ts.tools, func(i, j int) bool { return ts.tools[i].Name < ts.tools[j].Name })
	// The report, too, is a function of the declarations, not their order.
	sort.SliceStable(rep.Notes, func(i, j int) bool {
		a, b := rep.Notes[i], rep.Notes[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Message < b.Message
	})
	return ts, rep
}

func pin(d Declaration, rep *Report) (*Tool, bool) {
	origin := d.Origin
	if origin == "" {
		origin = BuiltinOrigin
	}
	note := func(kind NoteKind, name, msg string) {
		rep.Add(Note{Kind: kind, Name: name, Origin: origin, RawName: d.RawName, Message: msg})
	}
	name, changed, ok := MintName(origin, d.RawName)
	if !ok {
		note(NoteNameInvalid, name, fmt.Sprintf("%q cannot be named for a provider (empty, or longer than %d after minting); not offered", origin+"/"+d.RawName, MaxNameLen))
		return nil, false
	}
	if changed {
		note(NoteNameNormalized, name, fmt.Sprintf("%q is offered as %s", origin+"/"+d.RawName, name))
	}
	if d.Handler == nil {
		note(NoteNoHandler, name, "declared without a handler; not offered")
		return nil, false
	}
	effect := d.Effect
	if !effect.Valid() {
		note(NoteEffectDefaulted, name, fmt.Sprintf("effect class %q is not declared; treated as irreversible", string(d.Effect)))
		effect = EffectIrreversible
	}
	policy := d.Policy
	if policy != Required && policy != Never {
		note(NotePolicyDefaulted, name, fmt.Sprintf("approval policy %q is not declared; treated as required", string(d.Policy)))
		policy = Required
	}
	schemaDoc := d.Schema
	if len(bytes.TrimSpace(schemaDoc)) == 0 {
		schemaDoc = json.RawMessage(`{"type":"object","additionalProperties":false}`)
	}
	canon, err := CanonicalJSON(schemaDoc)
	if err != nil {
		note(NoteSchemaInvalid, name, "schema is not JSON: "+err.Error())
		return nil, false
	}
	compiled, err := compileSchema(name, canon)
	if err != nil {
		note(NoteSchemaInvalid, name, "schema does not compile: "+err.Error())
		return nil, false
	}
	t := &Tool{
		Descriptor: Descriptor{
			Name: name, Origin: origin, RawName: d.RawName, Description: d.Description,
			Schema: canon, Policy: policy, Effect: effect,
			Digest:           digestOf(origin, d.RawName, canon, effect),
			DescriptionPrint: descriptionPrint(d.Description),
		},
		schema:  compiled,
		handler: d.Handler,
	}
	return t, true
}

// MintName gives the host's name for a declaration: the built-in origin keeps
// its raw name, any other origin gets origin__raw. Characters no provider
// accepts become '_' (changed reports that); a name that is empty or too long
// is not ok.
func MintName(origin, raw string) (name string, changed bool, ok bool) {
	minted := raw
	if origin != BuiltinOrigin {
		minted = origin + "__" + raw
	}
	var b strings.Builder
	for _, r := range minted {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	name = b.String()
	if raw == "" || origin == "" || len(name) > MaxNameLen {
		return name, changed, false
	}
	return name, changed, true
}

// foldName is the collision key: what the strictest provider would make of a
// name ('-' folded to '_', case folded).
func foldName(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "-", "_"))
}

func digestOf(origin, raw string, canonSchema json.RawMessage, effect EffectClass) Digest {
	// An array of four JSON values: unambiguous, no separator games.
	var buf bytes.Buffer
	buf.WriteByte('[')
	o, _ := json.Marshal(origin)
	r, _ := json.Marshal(raw)
	e, _ := json.Marshal(string(effect))
	buf.Write(o)
	buf.WriteByte(',')
	buf.Write(r)
	buf.WriteByte(',')
	buf.Write(canonSchema)
	buf.WriteByte(',')
	buf.Write(e)
	buf.WriteByte(']')
	return sha256.Sum256(buf.Bytes())
}

func descriptionPrint(desc string) string {
	s := sha256.Sum256([]byte(desc))
	return "sha256:" + hex.EncodeToString(s[:])
}

func compileSchema(name string, canon json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(canon))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	c := jsonschema.NewCompiler()
	// A schema comes from its origin (an MCP server, say). The default
	// loader follows file:// references, which would let a declaration make
	// the registry read any local file (or block on a FIFO) at boot and keep
	// the registry from being a pure function of its declarations. Every
	// external reference is refused; the standard meta-schemas are built in.
	c.UseLoader(refuseLoader{})
	url := "staage:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return s, nil
}

// refuseLoader is a jsonschema.URLLoader that loads nothing.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not loaded; a tool schema must be self-contained", url)
}

// Len is the number of tools offered.
func (ts *Toolset) Len() int { return len(ts.tools) }

// Tools returns the sorted list (shared; do not modify).
func (ts *Toolset) Tools() []*Tool { return ts.tools }

// Descriptors projects the descriptors, sorted by name.
func (ts *Toolset) Descriptors() []Descriptor {
	out := make([]Descriptor, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = t.Descriptor
	}
	return out
}

// Catalog projects what a provider renders, sorted by name.
func (ts *Toolset) Catalog() []CatalogEntry {
	out := make([]CatalogEntry, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = CatalogEntry{Name: t.Name, Description: t.Description, Schema: t.Schema}
	}
	return out
}

// Lookup finds a tool by its minted name, for dispatch.
func (ts *Toolset) Lookup(name string) (*Tool, bool) {
	i := sort.Search(len(ts.tools), func(i int) bool { return ts.tools[i].Name >= name })
	if i < len(ts.tools) && ts.tools[i].Name == name {
		return ts.tools[i], true
	}
	return nil, false
}

// Names lists the minted names, sorted.
func (ts *Toolset) Names() []string {
	out := make([]string, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = t.Name
	}
	return out
}
