package fs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"staage/tools"
	"staage/tools/workspace"
)

// harness drives the tools the way the loop does: a Toolset from
// Declarations, Bind on raw JSON, then Handler().Run or Preview.
type harness struct {
	t   *testing.T
	dir string
	ws  *workspace.Root
	ts  *tools.Toolset
}

func newHarness(t *testing.T, files map[string]string) *harness {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, ts := openToolset(t, dir)
	return &harness{t: t, dir: dir, ws: ws, ts: ts}
}

// openToolset opens dir as a workspace and declares the tools on it.
func openToolset(tb testing.TB, dir string) (*workspace.Root, *tools.Toolset) {
	tb.Helper()
	ws, err := workspace.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	ts, rep := tools.NewToolset(Declarations(ws))
	if len(rep.Notes) != 0 || ts.Len() != 5 {
		tb.Fatalf("toolset: %d tools, notes %+v", ts.Len(), rep.Notes)
	}
	return ws, ts
}

func (h *harness) path(p string) string { return filepath.Join(h.dir, p) }

func (h *harness) write(p, content string) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.path(p)), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.path(p), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) read(p string) string {
	h.t.Helper()
	b, err := os.ReadFile(h.path(p))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) bind(name string, args any) (*tools.Tool, tools.Call, *tools.Refusal) {
	h.t.Helper()
	tool, ok := h.ts.Lookup(name)
	if !ok {
		h.t.Fatalf("no tool %s", name)
	}
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			h.t.Fatal(err)
		}
		raw = string(b)
	}
	call, ref := tool.Bind("call-1", "main", json.RawMessage(raw))
	return tool, call, ref
}

// run binds and runs; a Bind refusal is returned as the result.
func (h *harness) run(name string, args any) tools.Result {
	h.t.Helper()
	tool, call, ref := h.bind(name, args)
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), call)
}

func (h *harness) preview(name string, args any) (tools.DiffPreview, error) {
	h.t.Helper()
	tool, call, ref := h.bind(name, args)
	if ref != nil {
		return tools.DiffPreview{}, ref
	}
	pv, ok := tool.Handler().(tools.Previewer)
	if !ok {
		h.t.Fatalf("%s has no Preview", name)
	}
	p, err := pv.Preview(context.Background(), call)
	if err != nil {
		return tools.DiffPreview{}, err
	}
	d, ok := p.(tools.DiffPreview)
	if !ok {
		h.t.Fatalf("preview is %T", p)
	}
	return d, nil
}

// ok runs and returns the payload of type P, failing on a refusal.
func ok[P any](h *harness, name string, args any) P {
	h.t.Helper()
	res := h.run(name, args)
	o, isOk := res.(tools.Ok)
	if !isOk {
		h.t.Fatalf("%s(%v) refused: %v", name, args, res)
	}
	p, isP := o.Payload.(P)
	if !isP {
		h.t.Fatalf("%s payload is %T", name, o.Payload)
	}
	// Every payload must encode for the wire.
	if w := tools.ToWire(res); !w.OK {
		h.t.Fatalf("%s payload does not encode: %s", name, w.Message)
	}
	return p
}

// refused runs and checks the refusal name.
func (h *harness) refused(name string, args any, want tools.RefusalName) *tools.Refusal {
	h.t.Helper()
	res := h.run(name, args)
	r, isRef := res.(*tools.Refusal)
	if !isRef {
		h.t.Fatalf("%s(%v) = %#v; want refusal %s", name, args, res, want)
	}
	if r.Name != want {
		h.t.Fatalf("%s(%v) refused %s (%s); want %s", name, args, r.Name, r.Message, want)
	}
	return r
}

func refusalOf(err error) tools.RefusalName {
	var r *tools.Refusal
	if errors.As(err, &r) {
		return r.Name
	}
	return ""
}
