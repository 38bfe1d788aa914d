package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"staage/tools"
)

// declare turns the tools a server listed at boot into declarations and pins
// each one. The effect class is the operator's word or irreversible; nothing
// the server says lowers it.
func (s *server) declare(spec Server, listed []*sdk.Tool) ([]tools.Declaration, []string) {
	var decls []tools.Declaration
	var lines, undeclared, hinted []string
	listedNames := map[string]bool{}
	for _, t := range listed {
		listedNames[t.Name] = true
		schema, err := schemaOf(t)
		if err != nil {
			lines = append(lines, fmt.Sprintf("mcp %s: tool %q: %v; not offered", s.name, t.Name, err))
			continue
		}
		desc, removed := describe(t)
		if removed > 0 {
			lines = append(lines, fmt.Sprintf("mcp %s: tool %q: its description carried %d control or invisible characters; removed (read it before you approve a call)",
				s.name, t.Name, removed))
		}
		effect, ok := spec.Effects[t.Name]
		if !ok || !effect.Valid() {
			effect = tools.EffectIrreversible
			undeclared = append(undeclared, t.Name)
			if t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint) {
				hinted = append(hinted, t.Name)
			}
		}
		decls = append(decls, tools.Declaration{
			Origin: s.name, RawName: t.Name, Description: desc, Schema: schema,
			Policy: tools.Required, Effect: effect,
			Handler: &handler{s: s, raw: t.Name},
		})
		s.pins[t.Name] = pin{schema: schema, print: descriptionPrint(desc)}
	}
	sort.Slice(decls, func(i, j int) bool { return decls[i].RawName < decls[j].RawName })

	head := fmt.Sprintf("mcp %s: %d tools (offered as %s__<tool>, each approved per call)", s.name, len(decls), s.name)
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		head += fmt.Sprintf("; irreversible, as [mcp.%s] effects does not name them: %s", s.name, names(undeclared))
	}
	lines = append([]string{head}, lines...)
	if len(hinted) > 0 {
		sort.Strings(hinted)
		lines = append(lines, fmt.Sprintf("mcp %s: the server hints that %s only read or are idempotent; hints are not trusted, set their effects in your config if you agree",
			s.name, names(hinted)))
	}
	var unknown []string
	for name := range spec.Effects {
		if !listedNames[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		lines = append(lines, fmt.Sprintf("mcp %s: [mcp.%s] effects names tools the server does not list: %s", s.name, s.name, names(unknown)))
	}
	return decls, lines
}

// schemaOf is the canonical JSON of a tool's input schema.
func schemaOf(t *sdk.Tool) (json.RawMessage, error) {
	if t.InputSchema == nil {
		return nil, fmt.Errorf("no input schema")
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	canon, err := tools.CanonicalJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return canon, nil
}

// describe is the description staage offers: the server's, stripped and
// bounded, with what was removed said, and its annotations shown as
// unverified hints.
func describe(t *sdk.Tool) (string, int) {
	d, removed := strip(t.Description)
	d = strings.TrimSpace(d)
	if d == "" {
		title, r := strip(t.Title)
		d, removed = strings.TrimSpace(title), removed+r
	}
	if c, cut := clip(d, maxDescription); cut {
		d = c + " … [description clipped by staage]"
	}
	if removed > 0 {
		d += fmt.Sprintf("\n[staage removed %d control or invisible characters from this description]", removed)
	}
	if h := hints(t.Annotations); h != "" {
		d += "\n[server hints, not verified: " + h + "]"
	}
	return strings.TrimSpace(d), removed
}

// hints words the annotations a server set (only what it set explicitly).
func hints(a *sdk.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var h []string
	if a.ReadOnlyHint {
		h = append(h, "read-only")
	}
	if a.DestructiveHint != nil {
		if *a.DestructiveHint {
			h = append(h, "destructive")
		} else {
			h = append(h, "non-destructive")
		}
	}
	if a.IdempotentHint {
		h = append(h, "idempotent")
	}
	if a.OpenWorldHint != nil {
		if *a.OpenWorldHint {
			h = append(h, "open-world")
		} else {
			h = append(h, "closed-world")
		}
	}
	return strings.Join(h, ", ")
}

// descriptionPrint matches tools.Descriptor.DescriptionPrint.
func descriptionPrint(desc string) string {
	sum := sha256.Sum256([]byte(desc))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func short(print string) string {
	if len(print) > len("sha256:")+12 {
		return print[:len("sha256:")+12]
	}
	return print
}

// listChanged runs when the server says its tools changed: list again now,
// so the operator hears of it before the model calls a changed tool. A
// server that floods notifications gets one listing at a time, and one more
// after it if notifications arrived meanwhile.
func (s *server) listChanged() {
	s.relistWanted.Store(true)
	if !s.relisting.CompareAndSwap(false, true) {
		return
	}
	defer s.relisting.Store(false)
	for s.relistWanted.Swap(false) {
		if s.closing.Load() || s.session.Load() == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.o.opts.ConnectTimeout)
		listed, err := s.list(ctx)
		cancel()
		if err != nil {
			return // the next call lists again and answers for itself
		}
		s.compare(listed)
	}
}

// compare reports every way the listing differs from the boot pins, once
// each, and returns the current tools by raw name.
func (s *server) compare(listed []*sdk.Tool) map[string]*sdk.Tool {
	now := make(map[string]*sdk.Tool, len(listed))
	for _, t := range listed {
		now[t.Name] = t
	}
	var raws []string
	for raw := range s.pins {
		raws = append(raws, raw)
	}
	sort.Strings(raws)
	for _, raw := range raws {
		p := s.pins[raw]
		t, ok := now[raw]
		if !ok {
			s.sayOnce("gone\x00"+raw, fmt.Sprintf("mcp %s: the server no longer lists %q; calls to %s__%s are refused", s.name, raw, s.name, raw))
			continue
		}
		schema, err := schemaOf(t)
		if err != nil || !bytes.Equal(schema, p.schema) {
			key := "schema\x00" + raw + "\x00" + string(schema)
			s.sayOnce(key, fmt.Sprintf("mcp %s: the server changed the schema of %q after boot: a different tool from the one offered. Calls are refused; restart staage to review and approve the new one",
				s.name, raw))
			continue
		}
		desc, _ := describe(t)
		if pr := descriptionPrint(desc); pr != p.print {
			s.sayOnce("desc\x00"+raw+"\x00"+pr, fmt.Sprintf("mcp %s: the server changed the description of %q after boot (%s → %s); staage still offers the description you saw at boot",
				s.name, raw, short(p.print), short(pr)))
		}
	}
	var added []string
	for raw := range now {
		if _, ok := s.pins[raw]; !ok {
			added = append(added, raw)
		}
	}
	sort.Strings(added)
	for _, raw := range added {
		s.sayOnce("new\x00"+raw, fmt.Sprintf("mcp %s: the server now lists %q, which was not there at boot; restart staage to offer it", s.name, raw))
	}
	return now
}
