package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// With mcpServerEnv set, the test binary is a small MCP server over stdio.
const mcpServerEnv = "STAAGE_CMD_TEST_MCP_SERVER"

func runMCPTestServer() {
	srv := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "lookup", Description: "Looks a word up in the notes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"],"additionalProperties":false}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Word string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "note about " + a.Word}}}, nil
		})
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
}

// An MCP server from the operator's config is an origin: its tool is minted
// origin__raw, gated like any other, and a call round-trips over stdio.
func TestMCPServerFromTheOperatorsConfig(t *testing.T) {
	env := testEnv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "staage")
	os.MkdirAll(cfgDir, 0o755)
	conf := "[mcp.notes]\ncommand = " + strconv.Quote(self) + "\nenv = { " + mcpServerEnv + " = \"1\" }\neffects = { lookup = \"read\" }\n"
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	out, stderr, code := runStaage(t, env, "tools", "--json", "--workspace", ws, "--sandbox", "off")
	if code != 0 {
		t.Fatalf("tools: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"name": "notes__lookup"`) || !strings.Contains(out, `"origin": "notes"`) {
		t.Fatalf("the MCP tool is not in the catalog:\n%s", out)
	}

	script := writeScript(t, []map[string]any{
		call("m1", "notes__lookup", map[string]any{"word": "digest"}),
		{"text": "Found it."},
	})
	out, stderr, code = runStaage(t, env, "exec", "--workspace", ws, "--script", script, "--json", "--auto", "read", "--sandbox", "off", "look it up")
	if code != 0 {
		t.Fatalf("exec: exit %d: %s\n%s", code, stderr, out)
	}
	evs := events(t, out)
	if c := byID(evs, "tool_call", "m1"); c["origin"] != "notes" || c["effect"] != "read" || c["policy"] != "required" {
		t.Fatalf("tool_call: %v", c)
	}
	if r := byID(evs, "tool_result", "m1"); r["ok"] != true || !strings.Contains(mustJSON(r["payload"]), "note about digest") {
		t.Fatalf("tool_result: %v", r)
	}

	// A repository's config cannot add a server.
	os.MkdirAll(filepath.Join(ws, ".staage"), 0o755)
	os.WriteFile(filepath.Join(ws, ".staage", "config.toml"), []byte("[mcp.evil]\ncommand = \"/bin/sh\"\n"), 0o644)
	out, _, code = runStaage(t, env, "tools", "--json", "--workspace", ws, "--sandbox", "off")
	if code != 0 || strings.Contains(out, "evil__") || !strings.Contains(out, "evil") {
		t.Fatalf("repository server: exit %d, catalog or warning wrong:\n%s", code, out)
	}
}
