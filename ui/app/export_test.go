package app

import (
	"time"

	"staage/ui/modal"
)

func modalGrace() time.Duration { return modal.Grace + time.Millisecond }
