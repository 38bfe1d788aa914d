package main

import (
	"context"
	"os"
	"sync"

	"staage/agent"
	"staage/config"
	"staage/tools"
	"staage/tools/mcp"
)

// connectMCP starts the MCP servers of the operator's own config file (a
// repository's config cannot add one) and returns their declarations. A
// server that fails is a boot report line, never a failed boot.
func connectMCP(ctx context.Context, opts bootOptions, tb *toolBoot) ([]tools.Declaration, error) {
	mc, err := config.LoadMCP(config.Sources{UserFile: opts.Config, WorkspaceDir: tb.ws.Dir()})
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	tb.lines = append(tb.lines, mc.Warnings...)
	if len(mc.Servers) == 0 {
		return nil, nil
	}
	var servers []mcp.Server
	for _, s := range mc.Servers {
		eff := map[string]tools.EffectClass{}
		for t, c := range s.Effects {
			eff[t] = tools.EffectClass(c)
		}
		servers = append(servers, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args,
			Env: s.EnvList(), Effects: eff, Disabled: s.Disabled})
	}
	origins, err := mcp.Connect(ctx, servers, mcp.Options{Env: os.Environ(), Dir: tb.ws.Dir(), OnReport: tb.notices.say})
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	prev := tb.close
	tb.close = func() { _ = origins.Close(); prev() }
	tb.lines = append(tb.lines, origins.Report()...)
	return origins.Declarations(), nil
}

// lateNotices carries lines that arise after boot (an MCP server exited, a
// tool changed under it) to the screen once one is attached. Lines from
// before that are in the boot report already.
type lateNotices struct {
	mu   sync.Mutex
	sink agent.Sink
}

func (n *lateNotices) attach(s agent.Sink) {
	n.mu.Lock()
	n.sink = s
	n.mu.Unlock()
}

// say must not block (MCP calls it from its own goroutines): the sinks
// staage attaches (the console's bridge, exec's printer) return at once.
func (n *lateNotices) say(line string) {
	n.mu.Lock()
	s := n.sink
	n.mu.Unlock()
	if s != nil {
		s.Publish(agent.Warning{Lane: agent.MainLane, Message: line})
	}
}
