package device

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBundledProfilesLoad(t *testing.T) {
	names := Names()
	require.Equal(t, []string{"hdd-7200", "nvme", "nvme-plp", "ram", "sata-ssd"}, names)
	for _, n := range names {
		p, err := Lookup(n)
		require.NoError(t, err, n)
		require.Equal(t, n, p.Name)
	}
	plp, _ := Lookup("nvme-plp")
	require.False(t, plp.Device.WriteCache, "power-loss protection: no volatile cache")
	a, _ := Lookup("hdd-7200")
	a.FS.Type = "ufs"
	b, _ := Lookup("hdd-7200")
	require.Equal(t, "ext4", b.FS.Type, "Lookup returns a fresh profile")
}

// Every number of a bundled profile carries a comment saying where it comes from.
func TestBundledNumbersCiteSources(t *testing.T) {
	for _, n := range Names() {
		b, err := bundled.ReadFile("profiles/" + n + ".toml")
		require.NoError(t, err)
		for i, ln := range strings.Split(string(b), "\n") {
			s := strings.TrimSpace(ln)
			_, v, ok := strings.Cut(s, "=")
			if !ok || strings.HasPrefix(s, "#") {
				continue
			}
			if v = strings.TrimSpace(v); v == "" || strings.HasPrefix(v, "\"") {
				continue // a name, not a number
			}
			require.Contains(t, s, "#", "%s.toml:%d has no source", n, i+1)
		}
	}
}

func TestLookupFileAndErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	good := "name = \"mine\"\n[device]\nkind = \"ram\"\ncapacity_bytes = 1048576\nseq_read_mb_s = 100\nseq_write_mb_s = 100\n[cpu]\ncopy_mb_s = 1000\n[memory]\npage_cache_bytes = 1048576\n"
	p, err := Lookup(write("good.toml", good))
	require.NoError(t, err)
	require.Equal(t, "mine", p.Name)
	require.Equal(t, 128, p.Memory.ReadAheadKB, "defaults fill what the file leaves out")

	for _, c := range []struct{ name, text, want string }{
		{"unknown.toml", strings.Replace(good, "kind = \"ram\"", "kind = \"ram\"\nrpms = 3", 1), "unknown.toml:4: unknown key \"device.rpms\""},
		{"type.toml", strings.Replace(good, "capacity_bytes = 1048576", "capacity_bytes = \"big\"", 1), "type.toml:4:"},
		{"range.toml", strings.Replace(good, "seq_read_mb_s = 100", "seq_read_mb_s = -1", 1), "range.toml:5: device.seq_read_mb_s: must be positive"},
		{"kind.toml", strings.Replace(good, "\"ram\"", "\"tape\"", 1), "kind.toml:3: device.kind"},
		{"syntax.toml", "name = \n", "syntax.toml:1:"},
	} {
		_, err := Lookup(write(c.name, c.text))
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want)
	}
	_, err = Lookup("no-such-device")
	require.ErrorContains(t, err, "not a bundled profile")
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		b, _ := bundled.ReadFile("profiles/" + n + ".toml")
		f.Add(b)
	}
	f.Add([]byte("name = \"x\"\n[device]\nkind = 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse("fuzz.toml", b)
		if err == nil {
			require.NoError(t, p.Validate())
		} else {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.toml"), err.Error())
		}
	})
}

// The disk model: a dependent write just after the previous one on a disk
// without write cache waits almost a full turn; a read continuing the last read
// does not wait at all; seeks grow with distance.
func TestDiskModel(t *testing.T) {
	p, _ := Lookup("hdd-7200")
	p.Device.WriteCache = false
	m := NewModel(&p.Device)
	rot := int64(60e9 / p.Device.RPM)
	_, d1 := m.Submit(0, Write, 1<<20, 4096)
	s2, d2 := m.Submit(d1+1000, Write, 1<<20+4096, 4096)
	require.Greater(t, d2-s2, rot*9/10, "dependent sequential write waits a turn")
	_, r1 := m.Submit(d2, Read, 1<<30, 65536)
	s, r2 := m.Submit(r1, Read, 1<<30+65536, 65536)
	require.Equal(t, us(p.Device.CommandUs)+transfer(65536, p.Device.ReadMBs), r2-s, "sequential read streams: no seek, no rotation")
	require.Less(t, m.SeekTime(1<<30), m.SeekTime(500<<30))
	require.Equal(t, int64(0), m.SeekTime(4096))
}

// At most queue_depth commands are outstanding: with a depth of 1 a second
// command starts when the first completes, whatever the flash parallelism.
func TestQueueDepth(t *testing.T) {
	p, _ := Lookup("nvme-plp")
	m := NewModel(&p.Device)
	_, d1 := m.Submit(0, Read, 0, 4096)
	s2, _ := m.Submit(0, Read, 1<<20, 4096)
	require.Less(t, s2, d1, "parallel units serve both at once")
	p.Device.QueueDepth = 1
	m = NewModel(&p.Device)
	_, d1 = m.Submit(0, Read, 0, 4096)
	s2, _ = m.Submit(0, Read, 1<<20, 4096)
	require.Equal(t, d1, s2, "one tag: the second waits for the first")
}
