package arch

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// publicHosts are services every user of staage knows by name: providers'
// public APIs and standards' sites. Anything else a shipped file names must
// be loopback or a reserved example name (RFC 2606), so no operator's
// internal service ships inside the binary or its docs.
var publicHosts = map[string]bool{
	"api.anthropic.com": true, "api.openai.com": true, "openrouter.ai": true,
	"json-schema.org": true, "no-color.org": true,
}

var urlPattern = regexp.MustCompile(`https?://(?:[^@\s/"'<>()]+@)?([A-Za-z0-9._-]+)`)

// hostProblem says why a host may not appear in a shipped file, or "".
func hostProblem(host string) string {
	h := strings.ToLower(host)
	switch {
	case publicHosts[h], h == "localhost":
		return ""
	case strings.HasSuffix(h, ".example"), strings.HasSuffix(h, ".invalid"), strings.HasSuffix(h, ".test"),
		h == "example.com", h == "example.org", h == "example.net",
		strings.HasSuffix(h, ".example.com"), strings.HasSuffix(h, ".example.org"), strings.HasSuffix(h, ".example.net"):
		return ""
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsLoopback() {
			return ""
		}
		return "an IP address that is not loopback"
	}
	if !strings.Contains(h, ".") {
		if len(h) <= 4 { // placeholders: x, y, host
			return ""
		}
		return "a single-label host name (an intranet name)"
	}
	return "a host that is neither a known public service, loopback nor a reserved example name"
}

func TestNoShippedFileNamesAnInternalService(t *testing.T) {
	root, _ := filepath.Abs("..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	checked := 0
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		checked++
		for _, m := range urlPattern.FindAllSubmatch(b, -1) {
			if p := hostProblem(string(m[1])); p != "" {
				t.Errorf("%s names %s: %s", name, m[1], p)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d files checked: the walk is broken", checked)
	}
}

func TestHostRules(t *testing.T) {
	bad := []string{"gpu-box", "wiki.corp.acme.net", "10.0.0.7", "192.168.1.2", "bank.internal"}
	good := []string{"localhost", "127.0.0.1", "api.anthropic.com", "llm.example", "gw.example.com", "x", "host", "a.invalid"}
	for _, h := range bad {
		if hostProblem(h) == "" {
			t.Errorf("%s passed", h)
		}
	}
	for _, h := range good {
		if p := hostProblem(h); p != "" {
			t.Errorf("%s refused: %s", h, p)
		}
	}
}
