package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
	"staage/tools/delegate"
	"staage/tools/notes"
	"staage/tools/toolset"
	"staage/tools/workspace"
)

// childRunner runs task's child threads on the session's loop. It is wired
// after the session exists (the task tool is composed before it).
type childRunner struct {
	session *agent.Session
	gate    *approvals.Gate
	notes   *notes.Store
}

const childSystem = `You are a child thread of staage, started by the operator's agent to do one bounded job.
Work only on the objective. You have no human to ask: tools that need an approval nobody granted are refused.
When you are done, answer with one JSON object and nothing else:
{"status":"done"|"failed","summary":"…","findings":["…"],"files":["…"]}`

// RunChild implements delegate.ChildRunner.
func (c *childRunner) RunChild(ctx context.Context, spec delegate.ChildSpec) (delegate.Envelope, error) {
	if c.session == nil || c.gate == nil {
		return delegate.Envelope{}, fmt.Errorf("child threads are not wired in this boot")
	}
	turn := agent.Turn{System: childSystem, Prompt: "Objective: " + spec.Objective}
	switch spec.Mode {
	case delegate.ModeScout:
		turn.Profile = tools.Scout()
	case delegate.ModeWrite:
		root, err := workspace.Open(spec.Workdir)
		if err != nil {
			return delegate.Envelope{}, fmt.Errorf("write child worktree: %w", err)
		}
		turn.Toolset, _ = toolset.ComposeWriteChild(root, c.notes)
		turn.Profile = tools.WriteChild()
		// Writes land only in the disposable worktree; what reaches the
		// main checkout is approved at apply_change.
		turn.Gate = c.gate.WithAuto(tools.EffectIdempotentWrite, tools.EffectReversible, tools.EffectIrreversible)
	default:
		return delegate.Envelope{}, fmt.Errorf("unknown child mode %q", spec.Mode)
	}
	out, err := c.session.RunChild(ctx, agent.ChildTurn{
		Parent: spec.ParentLane, Mode: spec.Mode, Objective: spec.Objective, Worktree: spec.Workdir, Turn: turn,
	})
	if err != nil {
		return delegate.Envelope{}, err
	}
	env := envelopeOf(out)
	if spec.Mode == delegate.ModeWrite && env.Status == delegate.StatusDone {
		// The change id apply_change will take, if the child left edits.
		env.Change = spec.Change
	}
	c.session.FinishChild(spec.ParentLane, out.Lane, env.Status, env)
	return env, nil
}

var fencedJSON = regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```")

// envelopeOf reads the child's answer. A child that did not answer in the
// envelope's shape still gets one: its text becomes the summary. How the
// turn ended decides cut and failed whatever the child claims.
func envelopeOf(out agent.ChildOutcome) delegate.Envelope {
	var env delegate.Envelope
	text := strings.TrimSpace(out.Text)
	parsed := json.Unmarshal([]byte(text), &env) == nil
	if !parsed {
		if m := fencedJSON.FindStringSubmatch(text); m != nil {
			parsed = json.Unmarshal([]byte(m[1]), &env) == nil
		}
	}
	if !parsed {
		env = delegate.Envelope{Summary: text}
	}
	switch out.Done.Stop {
	case agent.StopEndTurn:
		if env.Status != delegate.StatusFailed {
			env.Status = delegate.StatusDone
		}
	case agent.StopInterrupted, agent.StopMaxSteps, agent.StopMaxTokens:
		env.Status = delegate.StatusCut
	default:
		env.Status = delegate.StatusFailed
	}
	if env.Summary == "" {
		env.Summary = "(the child gave no summary; it stopped with " + out.Done.Stop + ")"
	}
	return env
}
