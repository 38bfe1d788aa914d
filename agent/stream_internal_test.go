package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type fault struct {
	kind string
	cut  bool
}

func (f fault) Error() string     { return "boom" }
func (f fault) FaultKind() string { return f.kind }
func (f fault) StreamCut() bool   { return f.cut }

func TestStreamFaultWordsWhatHappened(t *testing.T) {
	e := streamFault("main", "p", fmt.Errorf("wrapped: %w", fault{"rate_limited", false}))
	if e.Kind != "rate_limited" || !strings.Contains(e.Message, "before its response began") {
		t.Fatalf("%+v", e)
	}
	e = streamFault("main", "p", fault{"cut", true})
	if e.Kind != "cut" || !strings.Contains(e.Message, "cut before its end") {
		t.Fatalf("%+v", e)
	}
	e = streamFault("main", "p", errors.New("plain"))
	if e.Kind != "stream" || !strings.Contains(e.Message, "cut before its end") {
		t.Fatalf("%+v", e)
	}
}
