package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"staage/tools"
)

// Server is one MCP server to start, as the operator declared it.
type Server struct {
	// Name is the origin: the server's tools are offered as Name__tool.
	Name    string
	Command string
	Args    []string
	// Env entries (KEY=value) are added to the console's environment,
	// from which API keys and other credentials were removed.
	Env []string
	// Effects gives a tool (by its raw name) its effect class. A tool not
	// named here, or named with an invalid class, is irreversible.
	Effects  map[string]tools.EffectClass
	Disabled bool
}

// Options tune Connect. Zero values take the defaults.
type Options struct {
	// Env is the console's environment (nil: os.Environ()).
	Env []string
	// Dir is the servers' working directory ("" inherits the console's).
	Dir string
	// ConnectTimeout bounds start + initialize + tools/list for each
	// server; servers start in parallel, so it bounds the whole boot.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tools/call, including the listing that checks
	// the tool did not change.
	CallTimeout time.Duration
	// MaxResultBytes bounds the text and structured content of a result.
	MaxResultBytes int
	// OnReport, if set, receives report lines that arise after Connect
	// started (a server exited, a tool changed); it may be called before
	// Connect returns, from other goroutines, and must not block.
	// Report() has every line too.
	OnReport func(line string)
}

// Defaults.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultCallTimeout    = 2 * time.Minute
	DefaultMaxResultBytes = 256 << 10
)

const (
	maxTools       = 512  // tools one server may list
	maxPages       = 64   // tools/list pages followed
	maxDescription = 4096 // bytes of a description kept
	closeGrace     = 2 * time.Second
	// maxRuntimeLines bounds what one server adds to the report after boot.
	maxRuntimeLines = 16
)

// originName is what a server name must look like to be an origin.
var originName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// Origins are the connected servers and the declarations of their tools.
type Origins struct {
	opts    Options
	servers []*server
	decls   []tools.Declaration

	mu    sync.Mutex
	lines []string

	closeOnce sync.Once
}

// Connect starts every enabled server in parallel, lists its tools and
// declares them. A server that fails contributes nothing and gets one report
// line; Connect itself fails only on a list it cannot take (two servers of
// one name, or a name that is not an origin), before anything starts.
func Connect(ctx context.Context, servers []Server, opts Options) (*Origins, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	seen := map[string]bool{}
	for _, s := range servers {
		if !originName.MatchString(s.Name) || s.Name == tools.BuiltinOrigin {
			return nil, fmt.Errorf("mcp: server name %q is not an origin (a-z, 0-9, '-', at most 31, not %q)", s.Name, tools.BuiltinOrigin)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("mcp: two servers are named %q", s.Name)
		}
		seen[s.Name] = true
	}
	sorted := append([]Server(nil), servers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	o := &Origins{opts: opts}
	type outcome struct {
		srv   *server
		decls []tools.Declaration
		lines []string
	}
	outs := make([]outcome, len(sorted))
	var wg sync.WaitGroup
	for i, spec := range sorted {
		if spec.Disabled {
			outs[i].lines = []string{fmt.Sprintf("mcp %s: disabled in your config; not started", spec.Name)}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv, decls, lines := o.start(ctx, spec)
			outs[i] = outcome{srv, decls, lines}
		}()
	}
	wg.Wait()
	var boot []string
	for _, out := range outs {
		if out.srv != nil {
			o.servers = append(o.servers, out.srv)
		}
		o.decls = append(o.decls, out.decls...)
		boot = append(boot, out.lines...)
	}
	// A server may already have said something (its tools changed while
	// the others were starting): the boot lines go first.
	o.mu.Lock()
	o.lines = append(boot, o.lines...)
	o.mu.Unlock()
	return o, nil
}

// Declarations are the tools of every connected server, sorted by origin and
// raw name. Hand them to the registry (toolset.Options.Extra).
func (o *Origins) Declarations() []tools.Declaration {
	return append([]tools.Declaration(nil), o.decls...)
}

// Report is every line so far: one or more per server at boot, then what
// happened since (a server exited, a tool changed after boot).
func (o *Origins) Report() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

// Close stops every server: stdin closed, a grace period, then the whole
// process group is killed. It is idempotent.
func (o *Origins) Close() error {
	o.closeOnce.Do(func() {
		var wg sync.WaitGroup
		for _, s := range o.servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.shutdown()
			}()
		}
		wg.Wait()
	})
	return nil
}

// say records a line said after boot and passes it on.
func (o *Origins) say(line string) {
	o.mu.Lock()
	o.lines = append(o.lines, line)
	o.mu.Unlock()
	if o.opts.OnReport != nil {
		o.opts.OnReport(line)
	}
}

// pin is a tool as listed at boot: what the operator approves is this.
type pin struct {
	schema json.RawMessage // canonical
	print  string          // the description's print, as tools.Descriptor has it
}

// server is one running MCP server.
type server struct {
	name   string
	o      *Origins
	cmd    *exec.Cmd
	stderr *tail
	kill   context.CancelFunc // cancels the process context: kills the group
	secret *strings.Replacer  // hides configured credentials; may be nil

	// session is set once Connect succeeded; a list_changed handler may
	// read it from the connection's goroutine.
	session atomic.Pointer[sdk.ClientSession]
	pins    map[string]pin
	exited  chan struct{} // closed when the connection ended
	closing atomic.Bool
	// relisting and relistWanted coalesce list_changed notifications.
	relisting, relistWanted atomic.Bool

	mu   sync.Mutex
	said map[string]bool // runtime lines already given
}

// start runs one server through start, initialize and tools/list.
func (o *Origins) start(ctx context.Context, spec Server) (*server, []tools.Declaration, []string) {
	procCtx, kill := context.WithCancel(context.Background())
	s := &server{
		name: spec.Name, o: o, stderr: &tail{}, kill: kill,
		exited: make(chan struct{}), said: map[string]bool{}, pins: map[string]pin{},
		secret: redactor(spec.Env),
	}
	s.cmd = command(procCtx, spec, serverEnv(o.opts.Env, spec.Env), o.opts.Dir, s.stderr)
	client := sdk.NewClient(&sdk.Implementation{Name: "staage", Version: "1"}, &sdk.ClientOptions{
		// No roots, no sampling, no elicitation: a server gets nothing
		// from the console but the calls the operator approved.
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.listChanged() },
	})

	cctx, cancel := context.WithTimeout(ctx, o.opts.ConnectTimeout)
	defer cancel()
	// A server that never answers is killed at the deadline, which also
	// unblocks Connect: the boot never waits longer than the timeout.
	stop := context.AfterFunc(cctx, kill)
	stage := "initialize"
	session, err := client.Connect(cctx, &sdk.CommandTransport{Command: s.cmd, TerminateDuration: closeGrace}, nil)
	var listed []*sdk.Tool
	if err == nil {
		s.session.Store(session)
		stage = "tools/list"
		listed, err = s.list(cctx)
	}
	if !stop() {
		// The deadline (or the boot's cancel) fired and killed the
		// server; whatever error that caused, this is the reason.
		err = cctx.Err()
	}
	if err != nil {
		s.shutdown()
		return nil, nil, []string{s.failure(ctx, stage, err)}
	}
	go func() {
		_ = session.Wait()
		close(s.exited)
		if !s.closing.Load() {
			s.sayOnce("exit", fmt.Sprintf("mcp %s: the server exited%s; its tools answer mcp.unavailable until staage restarts", s.name, s.stderrNote()))
		}
	}()
	decls, lines := s.declare(spec, listed)
	return s, decls, lines
}

// failure is the one report line of a server that contributes nothing.
func (s *server) failure(ctx context.Context, stage string, err error) string {
	var why string
	switch {
	case ctx.Err() != nil:
		why = "not started: the boot was cancelled"
	case s.cmd.Process == nil:
		why = "not started: " + s.line(err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		why = fmt.Sprintf("did not answer %s within %s", stage, s.o.opts.ConnectTimeout)
	default:
		why = fmt.Sprintf("failed at %s: %s", stage, s.line(err.Error()))
	}
	return fmt.Sprintf("mcp %s: %s%s; no tools from it", s.name, why, s.stderrNote())
}

// hide replaces configured credentials in server text.
func (s *server) hide(text string) string {
	if s.secret == nil {
		return text
	}
	return s.secret.Replace(text)
}

// line is server text made fit for one report line or refusal message.
func (s *server) line(text string) string { return s.hide(oneLine(text)) }

func (s *server) stderrNote() string {
	if l := s.hide(s.stderr.last()); l != "" {
		return fmt.Sprintf(" (its stderr: %q)", l)
	}
	return ""
}

// list follows every page of tools/list, within bounds.
func (s *server) list(ctx context.Context) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	cursor := ""
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		res, err := s.session.Load().ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if len(out) > maxTools {
			return nil, fmt.Errorf("the server lists more than %d tools", maxTools)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] {
			return nil, errors.New("tools/list pages loop (a cursor came back)")
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return nil, fmt.Errorf("tools/list has more than %d pages", maxPages)
}

// shutdown stops the server: a graceful close, bounded, then the group is
// killed whatever happened.
func (s *server) shutdown() {
	s.closing.Store(true)
	if session := s.session.Load(); session != nil {
		done := make(chan struct{})
		go func() {
			_ = session.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(2 * closeGrace):
		}
	}
	s.kill()
	// Reap what the server left behind in its group ("cmd &").
	_ = killGroup(s.cmd)
}

// sayOnce gives a runtime line once per key.
// A server that keeps changing may not flood the report: after
// maxRuntimeLines, one last line says the rest is not itemised.
func (s *server) sayOnce(key, line string) {
	s.mu.Lock()
	if s.said[key] || len(s.said) > maxRuntimeLines {
		s.mu.Unlock()
		return
	}
	s.said[key] = true
	if len(s.said) > maxRuntimeLines {
		line = fmt.Sprintf("mcp %s: the server keeps changing its tools; further changes are not reported one by one (calls to changed tools are still refused)", s.name)
	}
	s.mu.Unlock()
	s.o.say(line)
}

// names lists raw names quoted (server text may carry anything).
func names(raw []string) string {
	q := make([]string, len(raw))
	for i, r := range raw {
		q[i] = fmt.Sprintf("%q", r)
	}
	return strings.Join(q, ", ")
}
