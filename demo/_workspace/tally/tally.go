// Package tally adds numbers up.
package tally

// Sum returns the sum of xs.
func Sum(xs []int) int {
	total := 0
	for i := 1; i < len(xs); i++ {
		total += xs[i]
	}
	return total
}
