package wire

import "time"

// roundDelay prints a wait the way a person reads it: 2s, 1.5s, 250ms.
func roundDelay(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
