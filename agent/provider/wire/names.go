package wire

import (
	"fmt"
	"regexp"

	"staage/tools"
)

// toolName is what both supported APIs accept for a function name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckNames fails closed on a catalog the provider cannot render as
// given: a name outside [a-zA-Z0-9_-]{1,64}, or two entries that one name
// would serve. The registry mints and normalizes names; a provider never
// renames one, because the loop dispatches by the name it offered.
func CheckNames(provider string, catalog []tools.CatalogEntry) error {
	seen := make(map[string]bool, len(catalog))
	for _, t := range catalog {
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("%s: tool name %q is not accepted by the API ([a-zA-Z0-9_-], at most 64); it must be minted by the registry, not renamed here", provider, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("%s: tool name %q is offered twice", provider, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}
