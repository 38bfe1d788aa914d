package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"staage/tools"
)

// GateConfig sets up a Gate.
type GateConfig struct {
	// Approver asks the human. Nil means nobody is attached (headless):
	// every REQUIRED call that no grant covers is denied.
	Approver Approver
	// Always is the persisted store of "always in this workspace" grants.
	// Nil keeps always-grants for this process only.
	Always *GrantFile
	// Auto pre-grants effect classes for the session (--auto).
	Auto []tools.EffectClass
}

// Gate decides whether a call may run. It is safe for concurrent lanes.
type Gate struct {
	approver Approver
	always   *GrantFile
	auto     []tools.EffectClass
	session  *sessionGrants
}

// sessionGrants is shared by a gate and the gates derived from it.
type sessionGrants struct {
	mu     sync.Mutex
	grants []Grant
}

// NewGate builds a gate.
func NewGate(cfg GateConfig) *Gate {
	return &Gate{approver: cfg.Approver, always: cfg.Always, auto: slices.Clone(cfg.Auto), session: &sessionGrants{}}
}

// WithAuto derives a gate that shares this gate's grants and also runs the
// given effect classes without asking. A write child's gate is one: its
// writes land only in a disposable worktree, and the approval of what
// reaches the main checkout moves to apply_change.
func (g *Gate) WithAuto(extra ...tools.EffectClass) *Gate {
	auto := slices.Clone(g.auto)
	for _, e := range extra {
		if !slices.Contains(auto, e) {
			auto = append(auto, e)
		}
	}
	return &Gate{approver: g.approver, always: g.always, auto: auto, session: g.session}
}

// Pending is one call waiting at the gate.
type Pending struct {
	Tool *tools.Tool
	Call tools.Call
	// Child calls never ask: no human is attached to a child thread.
	Child bool
	// Sandbox describes the containment for the modal.
	Sandbox string
	// OnAsk, when set, is called just before the Approver is asked (the
	// loop publishes approval_asked from it).
	OnAsk func(Request)
}

// Outcome is the gate's answer.
type Outcome struct {
	Approved bool
	Scope    Scope
	Prefix   string
	Note     string
	// Call is what runs: the pending call, or the operator's edited one.
	Call   tools.Call
	Edited bool
	// Refusal is set when the call must not run.
	Refusal *tools.Refusal
	// Asked says the operator answered; false when a policy, a grant or a
	// failed preview decided without asking anyone.
	Asked bool
}

// Check runs the approval rules of DESIGN, in order: NEVER runs; an
// auto-granted effect class runs; a standing grant (session, then always)
// bound to the digest runs; a child is refused as unattended; otherwise the
// Approver is asked and the call blocks until it answers or ctx is done.
func (g *Gate) Check(ctx context.Context, p Pending) Outcome {
	d := p.Tool.Descriptor
	ok := func(scope Scope, prefix string) Outcome {
		return Outcome{Approved: true, Scope: scope, Prefix: prefix, Call: p.Call}
	}
	if d.Policy == tools.Never {
		return ok(ScopeNever, "")
	}
	if slices.Contains(g.auto, d.Effect) {
		return ok(ScopeAuto, "")
	}
	if gr, hit := covering(g.SessionGrants(), p); hit {
		return ok(ScopeSession, gr.Prefix)
	}
	if g.always != nil {
		if gr, hit := covering(g.always.Grants(), p); hit {
			return ok(ScopeAlways, gr.Prefix)
		}
	}
	if p.Child {
		return refused(p.Call, tools.Refuse(tools.ApprovalChildUnattended,
			fmt.Sprintf("%s needs approval and no human is attached to a child thread; no standing grant covers %s", d.Name, d.Digest.Short())))
	}
	if g.approver == nil {
		return refused(p.Call, tools.Refuse(tools.ApprovalDenied,
			fmt.Sprintf("%s needs approval and no operator is attached; grant it with --auto %s or a standing grant", d.Name, d.Effect)))
	}
	req, ref := g.request(ctx, p)
	if ref != nil {
		return refused(p.Call, ref)
	}
	if p.OnAsk != nil {
		p.OnAsk(req)
	}
	dec, err := g.approver.Approve(ctx, req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return refused(p.Call, tools.Refuse(tools.ApprovalCancelled, "the approval was cancelled before the operator answered"))
		}
		return refused(p.Call, tools.Refuse(tools.ApprovalDenied, "the approval could not be asked: "+err.Error()))
	}
	out := g.apply(p, dec)
	out.Asked = true
	return out
}

func refused(call tools.Call, r *tools.Refusal) Outcome {
	return Outcome{Call: call, Refusal: r, Scope: ScopeOnce}
}

// request builds what the modal shows. A preview that is itself a refusal
// (a stale digest, a missing file) ends the call here: there is nothing
// worth asking a human about.
func (g *Gate) request(ctx context.Context, p Pending) (Request, *tools.Refusal) {
	req := Request{ID: p.Call.ID, Lane: p.Call.Lane, Descriptor: p.Tool.Descriptor, Args: p.Call.Args, Sandbox: p.Sandbox}
	h := p.Tool.Handler()
	if pv, ok := h.(tools.Previewer); ok {
		prev, err := pv.Preview(ctx, p.Call)
		var ref *tools.Refusal
		switch {
		case errors.As(err, &ref) && ref != nil:
			return req, ref
		case err != nil && !isNilRefusal(err):
			// A preview that failed for its own reasons; show the args.
		default:
			// No error, or a typed-nil *Refusal returned as the error
			// (which is no refusal): the computed preview is the one.
			req.Preview = prev
		}
	}
	if req.Preview == nil {
		// The modal renders by type; it never gets nothing to render.
		req.Preview = tools.ArgsPreview{Args: p.Call.Args}
	}
	if pg, ok := h.(tools.PrefixGranter); ok {
		req.Prefixes = pg.PrefixCandidates(p.Call)
	}
	return req, nil
}

// isNilRefusal reports whether err is a nil *tools.Refusal in an error.
func isNilRefusal(err error) bool {
	r, ok := err.(*tools.Refusal)
	return ok && r == nil
}

func (g *Gate) apply(p Pending, dec Decision) Outcome {
	d := p.Tool.Descriptor
	if dec.Verdict != Approve {
		msg := "the operator denied " + d.Name
		if n := strings.TrimSpace(dec.Note); n != "" {
			msg += ": " + n
		}
		out := refused(p.Call, tools.Refuse(tools.ApprovalDenied, msg))
		out.Note = dec.Note
		if dec.Note != "" {
			out.Refusal.With("note", dec.Note)
		}
		return out
	}
	out := Outcome{Approved: true, Scope: dec.Scope, Note: dec.Note, Call: p.Call}
	if len(dec.EditedArgs) > 0 {
		call, ref := p.Tool.Bind(p.Call.ID, p.Call.Lane, dec.EditedArgs)
		if ref != nil {
			return refused(p.Call, tools.Refuse(tools.ArgsInvalid, "the operator's edited arguments do not validate: "+ref.Message))
		}
		out.Call, out.Edited = call, true
	}
	prefix := ""
	if dec.Prefix != "" {
		pg, ok := p.Tool.Handler().(tools.PrefixGranter)
		if !ok || !pg.MatchesPrefix(out.Call, dec.Prefix) {
			// A prefix that does not cover the call it was chosen on is
			// a mistake; run this call once and grant nothing wider.
			out.Scope = ScopeOnce
			return out
		}
		prefix = dec.Prefix
	}
	out.Prefix = prefix
	grant := Grant{Tool: d.Name, Digest: d.Digest, Prefix: prefix}
	switch dec.Scope {
	case ScopeSession:
		g.GrantSession(grant)
	case ScopeAlways:
		g.GrantSession(grant)
		if g.always != nil {
			if err := g.always.Add(grant); err != nil {
				out.Note = strings.TrimSpace(out.Note + " (the always-grant could not be saved: " + err.Error() + "; it holds for this session)")
				out.Scope = ScopeSession
			}
		}
	default:
		out.Scope = ScopeOnce
	}
	return out
}

// GrantSession adds a standing grant for this process (also used on resume
// to restore session grants whose digest still matches).
func (g *Gate) GrantSession(gr Grant) {
	g.session.mu.Lock()
	defer g.session.mu.Unlock()
	if !slices.Contains(g.session.grants, gr) {
		g.session.grants = append(g.session.grants, gr)
	}
}

// SessionGrants returns a copy of the session grants.
func (g *Gate) SessionGrants() []Grant {
	g.session.mu.Lock()
	defer g.session.mu.Unlock()
	return slices.Clone(g.session.grants)
}

// AutoClasses returns the effect classes pre-granted with --auto.
func (g *Gate) AutoClasses() []tools.EffectClass { return slices.Clone(g.auto) }

// covering finds a grant for the call's digest: a whole-tool grant, or a
// prefix grant the tool itself says covers the call.
func covering(grants []Grant, p Pending) (Grant, bool) {
	for _, gr := range grants {
		if gr.Digest != p.Tool.Digest {
			continue
		}
		if gr.Prefix == "" {
			return gr, true
		}
		if pg, ok := p.Tool.Handler().(tools.PrefixGranter); ok && pg.MatchesPrefix(p.Call, gr.Prefix) {
			return gr, true
		}
	}
	return Grant{}, false
}

// ParseAuto reads a --auto list ("read,idempotent-write"). "none" or ""
// grants nothing; an unknown class is an error, never ignored.
func ParseAuto(s string) ([]tools.EffectClass, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []tools.EffectClass
	all := false
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "all" {
			// Keep reading: "all,bogus" is still a typo to report.
			all = true
			continue
		}
		e, ok := tools.ParseEffectClass(part)
		if !ok {
			return nil, fmt.Errorf("--auto: %q is not an effect class (read, idempotent-write, reversible, irreversible)", part)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if all {
		return tools.EffectClasses(), nil
	}
	return out, nil
}
