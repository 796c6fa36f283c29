//go:build amd64

package strace

import "github.com/iosim/iosim/sim"

// learnTableNames adds every name of the syscall table's flag sets to the
// constants the parser reads: what strace prints for the calls the table
// describes parses (TestTableFlagNamesParse). The table is the model's, which
// is built for amd64 (its syscall numbers); elsewhere the parser knows the
// names of constList only.
func learnTableNames() {
	for _, in := range sim.Syscalls() {
		for _, a := range in.Args {
			if a.Flags == nil {
				continue
			}
			for _, n := range a.Flags.Names {
				if _, ok := constByName[n.Name]; !ok {
					constByName[n.Name] = n.Value
				}
			}
			if z := a.Flags.Zero; z != "" {
				if _, ok := constByName[z]; !ok {
					constByName[z] = 0
				}
			}
		}
	}
}
