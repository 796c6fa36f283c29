package device

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Defaults are what a profile file leaves out: Linux's writeback tunables and
// ext4's mount defaults, which are documented, and the journal's place.
//
//   - read_ahead_kb 128: the block layer's default (VM_READAHEAD_PAGES,
//     include/linux/mm.h: SZ_128K / PAGE_SIZE).
//   - dirty_ratio 20, dirty_background_ratio 10, dirty_expire_centisecs 3000,
//     dirty_writeback_centisecs 500: Documentation/admin-guide/sysctl/vm.rst and
//     mm/page-writeback.c.
//   - commit=5: ext4(5), "commit=nrsec ... The default value is 5 seconds".
//   - journal_offset 0.5: mke2fs places the journal in the middle block group
//     (ext2fs_mkjournal: the goal is the middle of the file system).
func Defaults() Profile {
	return Profile{
		Memory: Memory{
			ReadAheadKB:            128,
			DirtyRatio:             20,
			DirtyBackgroundRatio:   10,
			DirtyExpireCentisecs:   3000,
			DirtyWritebackCentisec: 500,
		},
		FS: FS{Type: "ext4", CommitSeconds: 5, JournalOffset: 0.5},
		Device: Device{
			LogicalSector:  512,
			PhysicalSector: 512,
			QueueDepth:     1,
		},
	}
}

// Load reads a profile from a TOML file. Errors name the file and line.
func Load(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// Parse reads a profile from TOML text; name is used in errors ("name:line: ...").
// Unknown keys, values of the wrong type and values out of range are errors.
func Parse(name string, data []byte) (*Profile, error) {
	p := Defaults()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&p)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s", name, pe.Position.Line, pe.Message)
		}
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, m[0]), " ")
			return nil, fmt.Errorf("%s:%s: %s", name, m[1], msg)
		}
		return nil, fmt.Errorf("%s: %s", name, msg)
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, fmt.Errorf("%s:%d: unknown key %q (expected one of the keys documented in package device)", name, keyLine(data, k), k.String())
	}
	if p.Name == "" {
		return nil, fmt.Errorf("%s:1: name: missing", name)
	}
	if err := p.Validate(); err != nil {
		key := strings.SplitN(err.Error(), ":", 2)[0]
		return nil, fmt.Errorf("%s:%d: %w", name, keyLine(data, strings.Split(key, ".")), err)
	}
	return &p, nil
}

// keyLine finds the line of a dotted key in TOML text (a key inside a [table] or
// the table header itself); 1 when it is not found (a missing key).
func keyLine(data []byte, key []string) int {
	table := ""
	want := strings.Join(key[:len(key)-1], ".")
	last := key[len(key)-1]
	for i, ln := range strings.Split(string(data), "\n") {
		s := strings.TrimSpace(ln)
		if strings.HasPrefix(s, "[") {
			table = strings.Trim(s, "[] \t")
			if j := strings.IndexByte(table, '#'); j >= 0 {
				table = strings.TrimSpace(table[:j])
			}
			if table == strings.Join(key, ".") {
				return i + 1
			}
			continue
		}
		if table != want {
			continue
		}
		if k, _, ok := strings.Cut(s, "="); ok && strings.Trim(strings.TrimSpace(k), `"`) == last {
			return i + 1
		}
	}
	return 1
}

// Encode writes p as TOML (what calibrate prints).
func Encode(p *Profile) ([]byte, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
