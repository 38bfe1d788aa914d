// Package skills offers the know-how cards on disk to the model: skill_list
// (one line per card, sorted by name) and skill_load (one card, whole).
//
// A card is an Agent Skills style folder, <root>/<name>/SKILL.md, whose YAML
// front matter carries name and description. Cards come from two roots: the
// workspace's .staage/skills and the user's config dir
// (~/.config/staage/skills); a workspace card shadows a user card of the same
// name. Every file is opened through os.Root, so a symlink cannot lead a
// card out of its root. A malformed card is listed as skipped with a reason;
// it never breaks the others.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adrg/xdg"
	"gopkg.in/yaml.v3"
)

// Card sources.
const (
	SourceWorkspace = "workspace"
	SourceUser      = "user"
)

// CardFile is the file that makes a folder a card.
const CardFile = "SKILL.md"

// Limits. A card is prose for the model; these keep a stray large file or a
// folder of thousands of entries from flooding the context.
const (
	MaxFolders          = 256      // folders read per root; more sets ScanCapped
	MaxFrontMatterBytes = 16 << 10 // the front matter must close within this
	MaxCardBytes        = 64 << 10 // skill_load returns at most this, saying so
	MaxNameLen          = 64
	MaxDescriptionRunes = 1024
	maxResources        = 50 // other entries of a card's folder named by skill_load
)

// Dirs names the two skills roots. Either may be empty or missing on disk.
type Dirs struct {
	Workspace string // usually <workspace>/.staage/skills
	User      string // usually ~/.config/staage/skills
}

// DefaultDirs returns the usual roots for a workspace.
func DefaultDirs(workspace string) Dirs {
	return Dirs{
		Workspace: filepath.Join(workspace, ".staage", "skills"),
		User:      filepath.Join(xdg.ConfigHome, "staage", "skills"),
	}
}

// Card is one valid card found on disk.
type Card struct {
	Name        string
	Description string // one line: whitespace runs folded to one space
	Source      string // SourceWorkspace or SourceUser
	Root        string // the skills root it was found in
	Folder      string // the folder name under Root (equal to Name)
	Shadows     bool   // a user card of the same name exists and is hidden by this one
}

// Skipped is a folder that is not a usable card, and why.
type Skipped struct {
	Source string
	Folder string
	Reason string
}

// Catalog is one scan of both roots.
type Catalog struct {
	Cards      []Card // sorted by name
	Skipped    []Skipped
	ScanCapped bool
}

// Lookup finds a card by name.
func (c Catalog) Lookup(name string) (Card, bool) {
	i := sort.Search(len(c.Cards), func(i int) bool { return c.Cards[i].Name >= name })
	if i < len(c.Cards) && c.Cards[i].Name == name {
		return c.Cards[i], true
	}
	return Card{}, false
}

// Scan reads both roots. It never fails: what it cannot read becomes a
// Skipped entry. Cards are read fresh on every call, so a card added during
// a session is offered without a restart.
func Scan(dirs Dirs) Catalog {
	var cat Catalog
	ws, wsSkipped, wsCapped := scanRoot(dirs.Workspace, SourceWorkspace)
	user, userSkipped, userCapped := scanRoot(dirs.User, SourceUser)
	cat.ScanCapped = wsCapped || userCapped
	cat.Skipped = append(wsSkipped, userSkipped...)
	byName := map[string]int{}
	for _, c := range ws {
		byName[c.Name] = len(cat.Cards)
		cat.Cards = append(cat.Cards, c)
	}
	for _, c := range user {
		if i, ok := byName[c.Name]; ok {
			cat.Cards[i].Shadows = true
			continue
		}
		cat.Cards = append(cat.Cards, c)
	}
	sort.Slice(cat.Cards, func(i, j int) bool { return cat.Cards[i].Name < cat.Cards[j].Name })
	return cat
}

func scanRoot(dir, source string) (cards []Card, skipped []Skipped, capped bool) {
	if dir == "" {
		return nil, nil, false
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, false
		}
		return nil, []Skipped{{Source: source, Reason: fmt.Sprintf("cannot open the skills folder: %v", err)}}, false
	}
	defer root.Close()
	names, err := folderNames(root)
	if err != nil {
		return nil, []Skipped{{Source: source, Reason: fmt.Sprintf("cannot list the skills folder: %v", err)}}, false
	}
	if len(names) > MaxFolders {
		names, capped = names[:MaxFolders], true
	}
	seen := map[string]bool{}
	for _, folder := range names {
		card, reason := readCard(root, folder)
		if reason != "" {
			skipped = append(skipped, Skipped{Source: source, Folder: folder, Reason: reason})
			continue
		}
		if seen[card.Name] {
			// Cannot happen while the name must equal the folder; kept so
			// a later relaxation of that rule cannot list a name twice.
			skipped = append(skipped, Skipped{Source: source, Folder: folder, Reason: "another folder already declares this name"})
			continue
		}
		seen[card.Name] = true
		card.Source, card.Root = source, dir
		cards = append(cards, card)
	}
	return cards, skipped, capped
}

// folderNames lists the root's entries that may be cards, sorted. Hidden
// entries are not cards (editors and VCS keep state there).
func folderNames(root *os.Root) ([]string, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		// A symlink may name a folder; os.Root decides later whether
		// it stays inside the root.
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// readCard reads one folder's front matter. A non-empty reason means the
// folder is skipped.
func readCard(root *os.Root, folder string) (Card, string) {
	f, reason := openCard(root, folder)
	if reason != "" {
		return Card{}, reason
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, MaxFrontMatterBytes+8))
	if err != nil {
		return Card{}, fmt.Sprintf("cannot read %s: %v", CardFile, err)
	}
	name, desc, err := parseFrontMatter(head)
	if err != nil {
		return Card{}, err.Error()
	}
	if name != folder {
		return Card{}, fmt.Sprintf("front matter name %q does not match its folder %q", name, folder)
	}
	return Card{Name: name, Description: desc, Folder: folder}, ""
}

// openCard opens <folder>/SKILL.md inside root, refusing anything that is
// not a regular file or that leaves the root.
func openCard(root *os.Root, folder string) (*os.File, string) {
	fi, err := root.Stat(folder)
	switch {
	case err != nil && isEscape(err):
		return nil, "the folder is a link that leaves the skills folder"
	case err != nil:
		return nil, fmt.Sprintf("cannot read the folder: %v", err)
	case !fi.IsDir():
		return nil, "not a folder"
	}
	name := folder + "/" + CardFile
	f, err := root.Open(name)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return nil, "no " + CardFile + " in the folder"
	case err != nil && isEscape(err):
		return nil, CardFile + " is a link that leaves the skills folder"
	case err != nil:
		return nil, fmt.Sprintf("cannot open %s: %v", CardFile, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, CardFile + " is not a regular file"
	}
	return f, ""
}

// isEscape recognizes os.Root's refusal of a path that leaves the root. The
// error has no exported sentinel; its text is stable ("path escapes from
// parent").
func isEscape(err error) bool {
	return strings.Contains(err.Error(), "escapes from parent")
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	fenceLine = regexp.MustCompile(`^---[ \t]*\r?$`)
)

// parseFrontMatter reads the YAML block between the opening and closing
// "---" lines and checks name and description as the Agent Skills format
// defines them. Other keys (license, allowed-tools, metadata) are allowed
// and ignored.
func parseFrontMatter(head []byte) (name, desc string, err error) {
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	lines := strings.SplitAfter(string(head), "\n")
	if len(lines) == 0 || !fenceLine.MatchString(strings.TrimSuffix(lines[0], "\n")) {
		return "", "", errors.New(CardFile + " does not start with a --- front matter line")
	}
	var block strings.Builder
	closed := false
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l, "\n") && len(head) > MaxFrontMatterBytes {
			break // a partial line at the read limit
		}
		if fenceLine.MatchString(strings.TrimSuffix(l, "\n")) {
			closed = true
			break
		}
		block.WriteString(l)
	}
	if !closed {
		return "", "", fmt.Errorf("front matter is not closed by a --- line within %d bytes", MaxFrontMatterBytes)
	}
	var fm map[string]any
	if err := yaml.Unmarshal([]byte(block.String()), &fm); err != nil {
		return "", "", fmt.Errorf("front matter is not valid YAML: %s", oneLine(err.Error()))
	}
	name, err = stringField(fm, "name")
	if err != nil {
		return "", "", err
	}
	desc, err = stringField(fm, "description")
	if err != nil {
		return "", "", err
	}
	if len(name) > MaxNameLen || !nameRE.MatchString(name) {
		return "", "", fmt.Errorf("name %q is not 1-%d lowercase letters, digits and single hyphens", clip(name, 80), MaxNameLen)
	}
	desc = strings.Join(strings.Fields(desc), " ")
	switch {
	case desc == "":
		return "", "", errors.New("description is empty")
	case utf8.RuneCountInString(desc) > MaxDescriptionRunes:
		return "", "", fmt.Errorf("description is over %d characters", MaxDescriptionRunes)
	case hasInvisible(desc):
		return "", "", errors.New("description has control or invisible formatting characters")
	}
	return name, desc, nil
}

func stringField(fm map[string]any, key string) (string, error) {
	v, ok := fm[key]
	if !ok || v == nil {
		return "", fmt.Errorf("front matter has no %s", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("front matter %s is not a string", key)
	}
	return strings.TrimSpace(s), nil
}

func hasInvisible(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return clip(strings.Join(strings.Fields(s), " "), 200) }

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
