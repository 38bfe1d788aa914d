package rails

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"staage/tools"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOfferedOnlyWithCredentials(t *testing.T) {
	names := func(c Config) string {
		ts, _ := tools.NewToolset(Declarations(c))
		return strings.Join(ts.Names(), ",")
	}
	if got := names(FromEnv(env(nil))); got != "" {
		t.Fatalf("no credentials offered %q", got)
	}
	if got := names(FromEnv(env(map[string]string{EnvBankURL: "http://x"}))); got != "" {
		t.Fatalf("URL without token offered %q", got)
	}
	c := FromEnv(env(map[string]string{EnvBankURL: "http://x", EnvBankToken: "t", EnvResearchURL: "http://y", EnvResearchToken: "u"}))
	if got := names(c); got != "bank_get,bank_search,librarian,research" {
		t.Fatalf("got %q", got)
	}
	if len(c.Missing()) != 0 || len(FromEnv(env(nil)).Missing()) != 2 {
		t.Fatal("Missing() is wrong")
	}
	if s := fmt.Sprintf("%v %+v %#v", c, c, c); strings.Contains(s, "\"t\"") || strings.Contains(s, " t}") {
		t.Fatalf("token printed: %s", s)
	}
}

func run(t *testing.T, ts *tools.Toolset, name, args string) tools.Result {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	call, ref := tool.Bind("1", "main", json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), call)
}

func TestRoundTripsOverHTTP(t *testing.T) {
	var gotAuth, gotPath, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.EscapedPath()
		b := make([]byte, 4096)
		n, _ := r.Body.Read(b)
		gotBody = string(b[:n])
		switch {
		case strings.HasPrefix(r.URL.Path, "/posts/gone"):
			http.Error(w, "nope", http.StatusNotFound)
		case r.URL.Path == "/research":
			fmt.Fprint(w, `{"answer":"42","citations":["a"]}`)
		default:
			fmt.Fprint(w, `{"hits":[{"slug":"a"}]}`)
		}
	}))
	defer srv.Close()
	c := Config{Bank: Endpoint{srv.URL, "tok"}, Research: Endpoint{srv.URL, "tok2"}}
	ts, _ := tools.NewToolset(Declarations(c))

	res := run(t, ts, "bank_search", `{"query":"flaky tests"}`)
	ok, isOk := res.(tools.Ok)
	if !isOk || gotAuth != "Bearer tok" || gotPath != "/search" || !strings.Contains(gotBody, "flaky tests") {
		t.Fatalf("search: %#v auth=%q path=%q body=%q", res, gotAuth, gotPath, gotBody)
	}
	if p := ok.Payload.(Payload); !strings.Contains(string(p.Answer), "hits") {
		t.Fatalf("payload %+v", p)
	}
	res = run(t, ts, "research", `{"question":"why"}`)
	if _, isOk := res.(tools.Ok); !isOk || gotAuth != "Bearer tok2" || !strings.Contains(gotBody, `"tier":"cheapest"`) {
		t.Fatalf("research: %#v body %q", res, gotBody)
	}
	if r, isRef := run(t, ts, "bank_get", `{"slug":"gone"}`).(*tools.Refusal); !isRef || r.Name != tools.RailUnavailable {
		t.Fatalf("404: %#v", r)
	}
	if r, isRef := run(t, ts, "bank_get", `{"slug":"../../etc"}`).(*tools.Refusal); !isRef || r.Name != tools.RailUnavailable && r.Name != tools.ArgsInvalid {
		t.Fatalf("traversal slug: %#v", r)
	}
	if r, isRef := run(t, ts, "librarian", `{"question":"q","angles":["one"]}`).(*tools.Refusal); !isRef || r.Name != tools.ArgsInvalid {
		t.Fatalf("one angle: %#v", r)
	}
}

func TestDeadRailIsARefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close()
	ts, _ := tools.NewToolset(Declarations(Config{Bank: Endpoint{url, "t"}}))
	r, isRef := run(t, ts, "bank_search", `{"query":"x"}`).(*tools.Refusal)
	if !isRef || r.Name != tools.RailUnavailable || strings.Contains(r.Message, "Bearer") {
		t.Fatalf("%#v", r)
	}
}

func TestOversizedAnswerIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", MaxResponseBytes+10)))
	}))
	defer srv.Close()
	ts, _ := tools.NewToolset(Declarations(Config{Bank: Endpoint{srv.URL, "t"}}))
	ok := run(t, ts, "bank_search", `{"query":"x"}`).(tools.Ok)
	if p := ok.Payload.(Payload); !p.Truncated || len(p.Text) != MaxResponseBytes {
		t.Fatalf("truncated=%v len=%d", p.Truncated, len(p.Text))
	}
}
