package notes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"staage/tools"
	"staage/tools/notes"
)

// run drives one call the way the loop does: the toolset, Bind (schema and
// strict decoding), then the handler.
func run(t *testing.T, ts *tools.Toolset, name, lane, args string) tools.Result {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not in the toolset (%v)", name, ts.Names())
	}
	call, ref := tool.Bind("call-1", lane, json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), call)
}

func newSet(t *testing.T) (*tools.Toolset, *notes.Store) {
	t.Helper()
	store := notes.NewStore()
	ts, rep := tools.NewToolset(notes.Declarations(store))
	if len(rep.Notes) != 0 {
		t.Fatalf("boot report: %+v", rep.Notes)
	}
	return ts, store
}

func wantRefusal(t *testing.T, r tools.Result, name tools.RefusalName) *tools.Refusal {
	t.Helper()
	ref, ok := r.(*tools.Refusal)
	if !ok {
		t.Fatalf("want refusal %s, got %#v", name, r)
	}
	if ref.Name != name {
		t.Fatalf("want refusal %s, got %s: %s", name, ref.Name, ref.Message)
	}
	return ref
}

func wantOk(t *testing.T, r tools.Result) tools.Ok {
	t.Helper()
	ok, isOk := r.(tools.Ok)
	if !isOk {
		t.Fatalf("want ok, got %#v", r)
	}
	return ok
}

func TestDeclarationsPolicyAndEffect(t *testing.T) {
	ts, _ := newSet(t)
	for _, name := range []string{"plan", "desk"} {
		tool, ok := ts.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if tool.Policy != tools.Never || tool.Effect != tools.EffectIdempotentWrite {
			t.Errorf("%s: policy %s effect %s", name, tool.Policy, tool.Effect)
		}
	}
}

func TestPlanStoresAndNotifies(t *testing.T) {
	ts, store := newSet(t)
	ok := wantOk(t, run(t, ts, "plan", "main", `{"steps":[
		{"title":"  read config ","status":"done"},
		{"title":"edit","status":"in_progress"},
		{"title":"test","status":"pending"}]}`))
	want := []tools.PlanStep{{Title: "read config", Status: "done"}, {Title: "edit", Status: "in_progress"}, {Title: "test", Status: "pending"}}
	p := ok.Payload.(notes.PlanPayload)
	if fmt.Sprint(p.Steps) != fmt.Sprint(want) || p.Done != 1 || p.InProgress != 1 || p.Pending != 1 {
		t.Fatalf("payload %+v", p)
	}
	if len(ok.Notices) != 1 {
		t.Fatalf("notices %v", ok.Notices)
	}
	n, isPlan := ok.Notices[0].(tools.PlanNotice)
	if !isPlan || fmt.Sprint(n.Steps) != fmt.Sprint(want) {
		t.Fatalf("notice %#v", ok.Notices[0])
	}
	if fmt.Sprint(store.Plan("main")) != fmt.Sprint(want) {
		t.Fatalf("store %v", store.Plan("main"))
	}
	if store.Plan("scout-1") != nil {
		t.Fatal("another lane sees main's plan")
	}

	// Revision replaces the whole plan; an empty list clears it.
	wantOk(t, run(t, ts, "plan", "main", `{"steps":[{"title":"only","status":"done"}]}`))
	if got := store.Plan("main"); len(got) != 1 || got[0].Title != "only" {
		t.Fatalf("after revision %v", got)
	}
	ok = wantOk(t, run(t, ts, "plan", "main", `{"steps":[]}`))
	if got := store.Plan("main"); len(got) != 0 {
		t.Fatalf("after clear %v", got)
	}
	if n := ok.Notices[0].(tools.PlanNotice); len(n.Steps) != 0 {
		t.Fatalf("clear notice %v", n)
	}
}

func TestPlanRefusals(t *testing.T) {
	ts, store := newSet(t)
	wantOk(t, run(t, ts, "plan", "main", `{"steps":[{"title":"keep me","status":"pending"}]}`))
	many := make([]string, notes.MaxSteps+1)
	for i := range many {
		many[i] = `{"title":"s","status":"pending"}`
	}
	cases := []struct {
		name, args string
		want       tools.RefusalName
	}{
		{"bad status", `{"steps":[{"title":"x","status":"started"}]}`, tools.ArgsInvalid},
		{"missing status", `{"steps":[{"title":"x"}]}`, tools.ArgsInvalid},
		{"extra key", `{"steps":[{"title":"x","status":"done","owner":"me"}]}`, tools.ArgsInvalid},
		{"no steps", `{}`, tools.ArgsInvalid},
		{"case-variant key", `{"steps":[],"Steps":[]}`, tools.ArgsInvalid},
		{"empty title", `{"steps":[{"title":"","status":"done"}]}`, tools.ArgsInvalid},
		{"blank title", `{"steps":[{"title":"   ","status":"done"}]}`, tools.PlanInvalid},
		{"two in progress", `{"steps":[{"title":"a","status":"in_progress"},{"title":"b","status":"in_progress"}]}`, tools.PlanInvalid},
		{"newline in title", `{"steps":[{"title":"a\nb","status":"done"}]}`, tools.PlanInvalid},
		{"escape in title", `{"steps":[{"title":"a\u001b[2Jb","status":"done"}]}`, tools.PlanInvalid},
		{"bidi override in title", `{"steps":[{"title":"a\u202eb","status":"done"}]}`, tools.PlanInvalid},
		{"long title", `{"steps":[{"title":"` + strings.Repeat("x", 201) + `","status":"done"}]}`, tools.ArgsInvalid},
		{"too many steps", `{"steps":[` + strings.Join(many, ",") + `]}`, tools.ArgsInvalid},
		{"not json", `{"steps":`, tools.ArgsInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRefusal(t, run(t, ts, "plan", "main", c.args), c.want)
		})
	}
	// A refused plan leaves the previous one in place.
	if got := store.Plan("main"); len(got) != 1 || got[0].Title != "keep me" {
		t.Fatalf("plan changed by a refused call: %v", got)
	}
}

func TestDeskReadWriteReplace(t *testing.T) {
	ts, store := newSet(t)
	ok := wantOk(t, run(t, ts, "desk", "main", `{"action":"read"}`))
	if p := ok.Payload.(notes.DeskPayload); !p.Empty || p.Page != "" || len(ok.Notices) != 0 {
		t.Fatalf("empty read %+v %v", p, ok.Notices)
	}
	ok = wantOk(t, run(t, ts, "desk", "main", `{"action":"write","page":"# notes\n- one\n"}`))
	if p := ok.Payload.(notes.DeskPayload); p.Replaced || p.Bytes != 14 {
		t.Fatalf("first write %+v", p)
	}
	if n, isDesk := ok.Notices[0].(tools.DeskNotice); !isDesk || n.Page != "# notes\n- one\n" {
		t.Fatalf("notice %#v", ok.Notices)
	}
	ok = wantOk(t, run(t, ts, "desk", "main", `{"action":"write","page":"two"}`))
	if p := ok.Payload.(notes.DeskPayload); !p.Replaced {
		t.Fatalf("second write %+v", p)
	}
	ok = wantOk(t, run(t, ts, "desk", "main", `{"action":"read"}`))
	if p := ok.Payload.(notes.DeskPayload); p.Page != "two" {
		t.Fatalf("write appended or lost: %q", p.Page)
	}
	// Lanes are separate pages.
	ok = wantOk(t, run(t, ts, "desk", "scout-1", `{"action":"read"}`))
	if p := ok.Payload.(notes.DeskPayload); p.Page != "" {
		t.Fatalf("scout lane reads main's page: %q", p.Page)
	}
	// An empty write clears.
	wantOk(t, run(t, ts, "desk", "main", `{"action":"write","page":""}`))
	if store.Desk("main") != "" {
		t.Fatal("empty write did not clear")
	}
}

func TestDeskRefusals(t *testing.T) {
	ts, store := newSet(t)
	wantOk(t, run(t, ts, "desk", "main", `{"action":"write","page":"keep"}`))
	huge, _ := json.Marshal(map[string]string{"action": "write", "page": strings.Repeat("é", notes.MaxDeskBytes/2+1)})
	ref := wantRefusal(t, run(t, ts, "desk", "main", string(huge)), tools.DeskTooLarge)
	if ref.Details["limit"] != notes.MaxDeskBytes {
		t.Errorf("details %v", ref.Details)
	}
	wantRefusal(t, run(t, ts, "desk", "main", `{"action":"write"}`), tools.ArgsInvalid)
	wantRefusal(t, run(t, ts, "desk", "main", `{"action":"read","page":"x"}`), tools.ArgsInvalid)
	wantRefusal(t, run(t, ts, "desk", "main", `{"action":"append","page":"x"}`), tools.ArgsInvalid)
	wantRefusal(t, run(t, ts, "desk", "main", `{"action":"write","page":"a","page":"b"}`), tools.ArgsInvalid)
	if store.Desk("main") != "keep" {
		t.Fatalf("refused write changed the page: %q", store.Desk("main"))
	}
	// Exactly at the cap is accepted.
	at, _ := json.Marshal(map[string]string{"action": "write", "page": strings.Repeat("x", notes.MaxDeskBytes)})
	wantOk(t, run(t, ts, "desk", "main", string(at)))
}

func TestRestoreAndLanes(t *testing.T) {
	ts, store := newSet(t)
	steps := []tools.PlanStep{{Title: "a", Status: "done"}}
	store.Restore("main", steps, "page")
	steps[0].Title = "mutated by the caller"
	ok := wantOk(t, run(t, ts, "desk", "main", `{"action":"read"}`))
	if ok.Payload.(notes.DeskPayload).Page != "page" {
		t.Fatal("restore lost the page")
	}
	if store.Plan("main")[0].Title != "a" {
		t.Fatal("store shares the caller's slice")
	}
	got := store.Plan("main")
	got[0].Title = "mutated by a reader"
	if store.Plan("main")[0].Title != "a" {
		t.Fatal("Plan returns the store's own slice")
	}
	store.Restore("write-2", nil, "x")
	if fmt.Sprint(store.Lanes()) != "[main write-2]" {
		t.Fatalf("lanes %v", store.Lanes())
	}
}

// TestConcurrentLanes runs many lanes at once (meaningful under -race): each
// lane ends with exactly its own last plan and page.
func TestConcurrentLanes(t *testing.T) {
	ts, store := newSet(t)
	const lanes, rounds = 8, 40
	var wg sync.WaitGroup
	for l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lane := fmt.Sprintf("lane-%d", l)
			for i := range rounds {
				args := fmt.Sprintf(`{"steps":[{"title":"%s step %d","status":"in_progress"}]}`, lane, i)
				if _, ok := run(t, ts, "plan", lane, args).(tools.Ok); !ok {
					t.Errorf("plan refused")
					return
				}
				page, _ := json.Marshal(map[string]string{"action": "write", "page": fmt.Sprintf("%s page %d", lane, i)})
				if _, ok := run(t, ts, "desk", lane, string(page)).(tools.Ok); !ok {
					t.Errorf("desk refused")
					return
				}
				run(t, ts, "desk", lane, `{"action":"read"}`)
			}
		}()
	}
	wg.Wait()
	for l := range lanes {
		lane := fmt.Sprintf("lane-%d", l)
		if got, want := store.Desk(lane), fmt.Sprintf("%s page %d", lane, rounds-1); got != want {
			t.Errorf("%s desk %q want %q", lane, got, want)
		}
		if got := store.Plan(lane); len(got) != 1 || got[0].Title != fmt.Sprintf("%s step %d", lane, rounds-1) {
			t.Errorf("%s plan %v", lane, got)
		}
	}
}
