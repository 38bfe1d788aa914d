package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The MCP servers the operator declares. A server is a program staage starts
// and whose tools it offers as origin__tool; starting it runs code with the
// operator's privileges, so only the operator's own file may declare one. A
// repository's .staage/config.toml that has an [mcp] table is ignored with a
// warning: cloning a repository must never start a program.

// MCPServerFile is one [mcp.<name>] table of the user file:
//
//	[mcp.github]
//	command = "github-mcp-server"
//	args    = ["stdio"]
//	env     = { GITHUB_TOKEN = "…" }
//	effects = { get_issue = "read", create_issue = "irreversible" }
//	disabled = false
type MCPServerFile struct {
	Command  string            `toml:"command"`
	Args     []string          `toml:"args"`
	Env      map[string]string `toml:"env"`
	Effects  map[string]string `toml:"effects"`
	Disabled bool              `toml:"disabled"`
}

// MCPServer is one server as resolved from the user file. Env values are
// Secrets (a token is the usual reason to set one): printing an MCPServer
// never shows them.
type MCPServer struct {
	// Name is the server's origin: its tools are offered as Name__tool.
	Name    string
	Command string
	Args    []string
	// Env is added to the console's environment (minus its API keys).
	Env map[string]Secret
	// Effects maps a tool's raw name to one of the four effect classes
	// ("read", "idempotent-write", "reversible", "irreversible"). A tool
	// missing here is irreversible.
	Effects  map[string]string
	Disabled bool
}

// EnvList returns the configured environment as KEY=value entries, sorted by
// key: the one place a value is revealed, for the process that needs it.
func (s MCPServer) EnvList() []string {
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+s.Env[k].Reveal())
	}
	return out
}

// MCP is the resolved [mcp] table and what the operator must read about it.
type MCP struct {
	// Servers are sorted by name; disabled ones are included (Disabled set)
	// so the boot report can say they were skipped.
	Servers  []MCPServer
	Warnings []string
}

// mcpName is what a server name must look like to be an origin.
var mcpName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// mcpEffects are the effect classes a user may name. They are the registry's
// four (tools.EffectClasses); config does not import the registry for four
// words.
var mcpEffects = map[string]bool{"read": true, "idempotent-write": true, "reversible": true, "irreversible": true}

// LoadMCP reads the [mcp] table of the operator's user file (src.UserFile, or
// the XDG default) and checks that the repository file, if any, declares no
// server. A missing file is no servers. Problems with one server (a bad name,
// no command, an unknown effect class) are warnings: that server or that
// entry is left out, the rest still start. Only an unreadable file is an
// error.
func LoadMCP(src Sources) (MCP, error) {
	env := src.Env
	if env == nil {
		env = os.Getenv
	}
	var out MCP
	// readFile's own warnings (unknown keys and such) are Load's to give;
	// here they would be said twice.
	var discard []string
	userPath := src.UserFile
	if userPath == "" {
		userPath = DefaultUserFile(env)
	}
	user, _, err := readFile(userPath, &discard)
	if err != nil {
		return out, err
	}
	if src.WorkspaceDir != "" {
		rp := filepath.Join(src.WorkspaceDir, ".staage", "config.toml")
		repo, found, err := readFile(rp, &discard)
		if err != nil {
			return out, err
		}
		if found && len(repo.MCP) > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s declares MCP servers (%s): ignored. Only your user config (%s) may start a program as a tool origin.",
				rp, strings.Join(sortedKeys(repo.MCP), ", "), userPath))
		}
	}
	servers, warns := resolveMCP(user.MCP, userPath)
	out.Servers, out.Warnings = servers, append(out.Warnings, warns...)
	return out, nil
}

// resolveMCP checks each [mcp.<name>] table of the user file.
func resolveMCP(tables map[string]MCPServerFile, path string) ([]MCPServer, []string) {
	var servers []MCPServer
	var warns []string
	for _, name := range sortedKeys(tables) {
		t := tables[name]
		where := fmt.Sprintf("%s [mcp.%s]", path, name)
		if !mcpName.MatchString(name) || name == "builtin" {
			warns = append(warns, fmt.Sprintf("%q in %s: a server name is 1-31 of a-z, 0-9 and '-', starting with a letter or digit, and not \"builtin\"; not started",
				name, path))
			continue
		}
		cmd := strings.TrimSpace(t.Command)
		if cmd == "" {
			if !t.Disabled {
				warns = append(warns, where+": no command; not started")
			}
			continue
		}
		// A relative path with a slash would resolve against the
		// workspace, which the repository controls.
		if strings.Contains(cmd, "/") && !filepath.IsAbs(cmd) {
			warns = append(warns, fmt.Sprintf("%s: command %q is a relative path; give an absolute path or a name on PATH. Not started", where, cmd))
			continue
		}
		s := MCPServer{Name: name, Command: cmd, Args: append([]string(nil), t.Args...), Disabled: t.Disabled}
		for _, k := range sortedKeys(t.Env) {
			if !envName.MatchString(k) {
				warns = append(warns, fmt.Sprintf("%s: env name %q is not a variable name; left out", where, k))
				continue
			}
			if s.Env == nil {
				s.Env = map[string]Secret{}
			}
			s.Env[k] = NewSecret(t.Env[k])
		}
		for _, tool := range sortedKeys(t.Effects) {
			class := strings.TrimSpace(t.Effects[tool])
			if !mcpEffects[class] {
				warns = append(warns, fmt.Sprintf("%s: effects.%s = %q is not one of read, idempotent-write, reversible, irreversible; that tool stays irreversible",
					where, tool, t.Effects[tool]))
				continue
			}
			if s.Effects == nil {
				s.Effects = map[string]string{}
			}
			s.Effects[tool] = class
		}
		servers = append(servers, s)
	}
	return servers, warns
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
