package notes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"staage/tools"
)

// Plan step statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusDone       = "done"
)

// Limits on what the model may write. A plan is a reading for a human in a
// narrow pane, and a desk page is a working note, not a file store.
const (
	MaxSteps      = 50
	MaxTitleRunes = 200
	MaxDeskBytes  = 32 << 10
)

// Declarations returns plan and desk, both backed by store.
func Declarations(store *Store) []tools.Declaration {
	return []tools.Declaration{
		{
			Origin:  tools.BuiltinOrigin,
			RawName: "plan",
			Description: "Declare or revise this turn's plan: a reading for the human, not an action. " +
				"Send the whole plan every time (it replaces the previous one); an empty list clears it. " +
				"Statuses: pending, in_progress (at most one step at a time), done. Titles are one short line.",
			Schema:  json.RawMessage(planSchema),
			Policy:  tools.Never,
			Effect:  tools.EffectIdempotentWrite,
			Handler: planHandler{store},
		},
		{
			Origin:  tools.BuiltinOrigin,
			RawName: "desk",
			Description: fmt.Sprintf("This thread's workdesk page (markdown), bound to the lane. "+
				"action=read returns the page; action=write replaces the whole page with page (never appends). "+
				"The page is at most %d bytes.", MaxDeskBytes),
			Schema:  json.RawMessage(deskSchema),
			Policy:  tools.Never,
			Effect:  tools.EffectIdempotentWrite,
			Handler: deskHandler{store},
		},
	}
}

const planSchema = `{
  "type": "object",
  "properties": {
    "steps": {
      "type": "array",
      "maxItems": 50,
      "items": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 200},
          "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
        },
        "required": ["title", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["steps"],
  "additionalProperties": false
}`

const deskSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["read", "write"]},
    "page": {"type": "string"}
  },
  "required": ["action"],
  "additionalProperties": false
}`

// PlanPayload is what plan answers: the plan as stored, with counts.
type PlanPayload struct {
	Steps      []tools.PlanStep `json:"steps"`
	Pending    int              `json:"pending"`
	InProgress int              `json:"inProgress"`
	Done       int              `json:"done"`
}

type planHandler struct{ store *Store }

func (h planHandler) Run(_ context.Context, call tools.Call) tools.Result {
	var args struct {
		Steps []tools.PlanStep `json:"steps"`
	}
	if err := call.Decode(&args); err != nil {
		return tools.Refuse(tools.ArgsInvalid, "plan arguments: "+err.Error())
	}
	steps, ref := validatePlan(args.Steps)
	if ref != nil {
		return ref
	}
	h.store.SetPlan(call.Lane, steps)
	p := PlanPayload{Steps: steps}
	for _, s := range steps {
		switch s.Status {
		case StatusPending:
			p.Pending++
		case StatusInProgress:
			p.InProgress++
		case StatusDone:
			p.Done++
		}
	}
	// The notice is sent on every accepted call, changed or not: the
	// reducer that renders it is idempotent, and "the model restated its
	// plan" is itself worth a line in the journal.
	return tools.Ok{Payload: p, Notices: []tools.Notice{tools.PlanNotice{Steps: steps}}}
}

// validatePlan trims titles and enforces the rules the schema cannot say:
// a title is one visible line, and at most one step is in progress (a plan
// with two current steps tells the human nothing about where the turn is).
func validatePlan(in []tools.PlanStep) ([]tools.PlanStep, *tools.Refusal) {
	if len(in) > MaxSteps {
		return nil, tools.Refuse(tools.PlanInvalid, fmt.Sprintf("%d steps is over the limit of %d", len(in), MaxSteps))
	}
	out := make([]tools.PlanStep, 0, len(in))
	current := -1
	for i, s := range in {
		title := strings.TrimSpace(s.Title)
		n := i + 1
		switch {
		case title == "":
			return nil, tools.Refuse(tools.PlanInvalid, fmt.Sprintf("step %d has an empty title", n)).With("step", n)
		case utf8.RuneCountInString(title) > MaxTitleRunes:
			return nil, tools.Refuse(tools.PlanInvalid, fmt.Sprintf("step %d's title is over %d characters", n, MaxTitleRunes)).With("step", n)
		case hasControl(title):
			return nil, tools.Refuse(tools.PlanInvalid, fmt.Sprintf("step %d's title has a line break or control character; a title is one line", n)).With("step", n)
		}
		switch s.Status {
		case StatusPending, StatusDone:
		case StatusInProgress:
			if current >= 0 {
				return nil, tools.Refuse(tools.PlanInvalid,
					fmt.Sprintf("steps %d and %d are both in_progress; at most one step is in progress at a time", current+1, n)).
					With("steps", []int{current + 1, n})
			}
			current = i
		default:
			// The schema's enum already refused this; kept so the
			// handler is correct on its own.
			return nil, tools.Refuse(tools.PlanInvalid, fmt.Sprintf("step %d has status %q; want pending, in_progress or done", n, s.Status)).With("step", n)
		}
		out = append(out, tools.PlanStep{Title: title, Status: s.Status})
	}
	return out, nil
}

// hasControl reports C0/C1 controls and the invisible format characters
// (bidi overrides, zero-width) that can make a line read as something else.
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// DeskPayload is what desk answers.
type DeskPayload struct {
	Lane  string `json:"lane"`
	Page  string `json:"page,omitempty"` // on read
	Bytes int    `json:"bytes"`
	Empty bool   `json:"empty,omitempty"`
	// Replaced is true on a write that replaced a non-empty page.
	Replaced bool `json:"replaced,omitempty"`
}

type deskHandler struct{ store *Store }

func (h deskHandler) Run(_ context.Context, call tools.Call) tools.Result {
	var args struct {
		Action string  `json:"action"`
		Page   *string `json:"page"`
	}
	if err := call.Decode(&args); err != nil {
		return tools.Refuse(tools.ArgsInvalid, "desk arguments: "+err.Error())
	}
	switch args.Action {
	case "read":
		if args.Page != nil {
			return tools.Refuse(tools.ArgsInvalid, "desk read takes no page; use action=write to replace the page")
		}
		page := h.store.Desk(call.Lane)
		return tools.Ok{Payload: DeskPayload{Lane: call.Lane, Page: page, Bytes: len(page), Empty: page == ""}}
	case "write":
		if args.Page == nil {
			return tools.Refuse(tools.ArgsInvalid, "desk write needs page: the whole new page (an empty string clears it)")
		}
		page := *args.Page
		if len(page) > MaxDeskBytes {
			return tools.Refuse(tools.DeskTooLarge,
				fmt.Sprintf("the page is %d bytes, over the desk's %d; keep the desk to what the work needs next", len(page), MaxDeskBytes)).
				With("bytes", len(page)).With("limit", MaxDeskBytes)
		}
		prev := h.store.SetDesk(call.Lane, page)
		return tools.Ok{
			Payload: DeskPayload{Lane: call.Lane, Bytes: len(page), Empty: page == "", Replaced: prev != ""},
			Notices: []tools.Notice{tools.DeskNotice{Page: page}},
		}
	default:
		return tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("desk action %q; want read or write", args.Action))
	}
}
