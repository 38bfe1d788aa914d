// Package mcp makes the MCP servers the operator declared into tool origins.
//
// Connect starts each server (a stdio command from the operator's user
// config, never from a repository), lists its tools and turns each into a
// tools.Declaration with Origin = the server's name, so the registry mints
// server__tool and fails collisions closed. Everything a server says is
// untrusted:
//
//   - the effect class comes only from the operator's effects table; a tool
//     it does not name is irreversible, and a server's annotations
//     (readOnlyHint, destructiveHint, ...) are shown as unverified hints,
//     never used to lower it;
//   - descriptions, result text and error text are stripped of terminal
//     control sequences and invisible format characters here (this package
//     may not import ui), and the strip is announced rather than silent;
//   - every tool is REQUIRED: the operator approves each call;
//   - the tools are pinned as listed at boot. Before each call the server is
//     listed again; a tool that is gone or whose schema changed (a "rug
//     pull") is refused as mcp.unavailable until staage restarts and the
//     operator approves the new descriptor. A changed description is
//     reported.
//
// A server that fails to start, to initialize or to list within the connect
// timeout contributes nothing and is reported in one line; it never blocks
// the boot for longer than that timeout (servers start in parallel).
package mcp
