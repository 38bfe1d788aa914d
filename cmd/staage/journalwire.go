package main

import (
	"context"
	"fmt"
	"os"

	"staage/agent"
	"staage/agent/journal"
)

// journalRun is the journal side of a boot.
type journalRun struct {
	sink   agent.Sink
	replay []agent.Event
	close  func()
}

// startJournal opens the session's journal: a new one, or the one named by
// --continue / --resume, whose events are handed back for replay. The demo is
// not journaled: its workspace is a temporary copy that is gone when it ends.
func startJournal(ctx context.Context, opts bootOptions, rt *bootRuntime, screen agent.Sink, secrets []string) (*journalRun, error) {
	if opts.NoJournal || rt.Demo {
		if opts.Continue || opts.Resume != "" {
			return nil, &exitError{code: 2, msg: "the offline demo has no journal to resume"}
		}
		return nil, nil
	}
	hdr := journal.Header{
		Version: journal.Version, Workspace: rt.Workspace, Provider: rt.ProviderName,
		Sandbox: rt.Sandbox, Tools: map[string]string{},
	}
	for _, d := range rt.Toolset.Descriptors() {
		hdr.Tools[d.Name] = d.Digest.String()
	}
	w, replay, err := openJournal(ctx, opts, hdr)
	if err != nil {
		return nil, err
	}
	w.SetSecrets(append(journal.SecretsFromEnv(os.Environ()), secrets...)...)
	// A journal that cannot be written must be seen, not just lost: the
	// operator is told once, on screen.
	w.OnError(func(err error) {
		if screen != nil {
			screen.Publish(agent.Error{Lane: agent.MainLane, Kind: "journal",
				Message: "the session journal could not be written (" + err.Error() + "); this session will not be resumable from here on"})
		}
	})
	jr := &journalRun{sink: w, close: func() { _ = w.Close() }}
	if replay != nil {
		jr.replay = replay.Events
		for _, p := range replay.Problems {
			rt.BootReport = append(rt.BootReport, "journal: "+p)
		}
		for _, name := range journal.ChangedTools(replay.Header.Tools, hdr.Tools) {
			rt.BootReport = append(rt.BootReport, fmt.Sprintf("%s changed since the session was written (its descriptor digest differs)", name))
		}
	}
	return jr, nil
}
