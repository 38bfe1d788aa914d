// Command tally prints the sum of the integers given as arguments.
package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/tally/tally"
)

func main() {
	var xs []int
	for _, a := range os.Args[1:] {
		n, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tally: %q is not a number\n", a)
			os.Exit(2)
		}
		xs = append(xs, n)
	}
	fmt.Println(tally.Sum(xs))
}
