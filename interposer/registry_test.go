package interposer_test

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

func TestRegistryErrors(t *testing.T) {
	_, k, _ := newWorld(t)
	for spec, want := range map[string]string{
		"nosuch":                    `unknown interposer "nosuch"`,
		"fsio:mode=fast":            `bad value "fast" for mode`,
		"fsio:speed=1":              `unknown parameter "speed" (known: mode, path)`,
		"fsio:mode=none,mode=none":  `parameter "mode" given twice`,
		"fsio:mode":                 `parameter "mode" is not key=value`,
		"filecache":                 `path= is required`,
		"fault:rule=write":          `fault rule "write": column 6: want '=' and an effect`,
		"fault:seed=x":              `bad value "x" for seed`,
		"trace:s=-1":                `bad value "-1" for s`,
		"count:x=1":                 `unknown parameter "x" (known: none)`,
		"fdatasync:":                `empty parameter list`,
		"fault:rule=write#nth=3=EI": `column 13: want an errno name (EIO), short:N, delay:D or corrupt, got "EI"`,
	} {
		_, err := interposer.Build(k, spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func TestStackOrder(t *testing.T) {
	_, k, p := newWorld(t)
	st, err := interposer.ParseStack([]string{"count", "filecache:path=" + msbPath + ",path=/ora/mesg/other.msb", "fdatasync", "fault:rule=fsync=EIO"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Build(k)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range interposer.Layers(h) {
		names = append(names, typeName(l))
	}
	if got := strings.Join(names, ">"); got != "Count>FileCache>Fdatasync>Fault>Kernel" {
		t.Fatalf("layers %s", got)
	}
	fc, _ := interposer.Find[*interposer.FileCache](h)
	if len(fc.Paths) != 2 {
		t.Fatalf("paths %v", fc.Paths)
	}
	if st.String() != "--stack count --stack filecache:path=/ora/mesg/oraus.msb,path=/ora/mesg/other.msb --stack fdatasync --stack fault:rule=fsync=EIO" {
		t.Fatalf("String: %s", st)
	}
	// fdatasync turns the fsync into fdatasync below it: the fault on fsync never fires.
	q := p.Through(h)
	fd, _ := q.Open(msbPath, unix.O_RDONLY, 0)
	if err := q.Fsync(fd); err != nil {
		t.Fatalf("fsync: %v", err)
	}
	t.Log(interposer.Usage())
}

func typeName(h sim.Handler) string {
	n := fmt.Sprintf("%T", h) // *interposer.Count, *sim.Kernel
	return n[strings.LastIndexByte(n, '.')+1:]
}
