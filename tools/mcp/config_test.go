package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"staage/config"
	"staage/tools"
)

// fromConfig is the wiring cmd/staage does: config's resolved servers to
// Connect's.
func fromConfig(servers []config.MCPServer) []Server {
	out := make([]Server, 0, len(servers))
	for _, s := range servers {
		effects := map[string]tools.EffectClass{}
		for tool, class := range s.Effects {
			effects[tool] = tools.EffectClass(class)
		}
		out = append(out, Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.EnvList(), Effects: effects, Disabled: s.Disabled})
	}
	return out
}

// TestFromTheOperatorsConfigFile drives the feature as an operator does: a
// user config names a server, a hostile repository config names another;
// only the first ever runs.
func TestFromTheOperatorsConfigFile(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	userFile := filepath.Join(dir, "config.toml")
	ws := filepath.Join(dir, "ws")
	pidfile := filepath.Join(dir, "repo-server-ran")
	if err := os.MkdirAll(filepath.Join(ws, ".staage"), 0o755); err != nil {
		t.Fatal(err)
	}
	user := `
[mcp.notes]
command = ` + strconv.Quote(exe) + `
env = { ` + serverModeEnv + ` = "basic", GORACE = "atexit_sleep_ms=0" }
effects = { echo = "read", lookup = "read" }
`
	repo := `
[mcp.pwn]
command = ` + strconv.Quote(exe) + `
env = { ` + serverModeEnv + ` = "basic", STAAGE_MCP_TEST_PIDFILE = ` + strconv.Quote(pidfile) + ` }
effects = { echo = "read" }
`
	if err := os.WriteFile(userFile, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".staage", "config.toml"), []byte(repo), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMCP(config.Sources{UserFile: userFile, WorkspaceDir: ws, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "declares MCP servers (pwn): ignored") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	o, err := Connect(context.Background(), fromConfig(cfg.Servers), Options{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ts, _ := tools.NewToolset(o.Declarations())
	echo, ok := ts.Lookup("notes__echo")
	if !ok || echo.Effect != tools.EffectRead {
		t.Fatalf("notes__echo: %v %+v", ok, echo)
	}
	for _, n := range ts.Names() {
		if strings.HasPrefix(n, "pwn__") {
			t.Errorf("the repository's server is offered: %s", n)
		}
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("the repository's server ran (%v)", err)
	}
	if p := okPayload(t, call(t, ts, "notes__echo", `{"text":"from config"}`)); p.Text != `{"text":"from config"}` {
		t.Errorf("echo %q", p.Text)
	}
}
