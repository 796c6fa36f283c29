package device

import (
	"embed"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

//go:embed profiles/*.toml
var bundled embed.FS

// Names returns the names of the bundled profiles, sorted.
func Names() []string {
	ents, _ := bundled.ReadDir("profiles")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	slices.Sort(out)
	return out
}

// Lookup returns a bundled profile by name, or loads the TOML file at
// nameOrPath when it is not a bundled name (a name containing a path separator
// or ending in .toml is always a file). Each call returns a fresh Profile.
func Lookup(nameOrPath string) (*Profile, error) {
	if !strings.ContainsRune(nameOrPath, os.PathSeparator) && !strings.HasSuffix(nameOrPath, ".toml") {
		b, err := bundled.ReadFile(path.Join("profiles", nameOrPath+".toml"))
		if err == nil {
			return Parse(nameOrPath+".toml", b)
		}
		if _, serr := os.Stat(nameOrPath); serr != nil {
			return nil, fmt.Errorf("device %q: not a bundled profile (%s) nor a file", nameOrPath, strings.Join(Names(), ", "))
		}
	}
	return Load(nameOrPath)
}
