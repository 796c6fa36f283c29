// Package interposer holds the layers that sit between a program and the kernel
// model, as LD_PRELOAD libraries sit between a program and Linux. Each implements
// sim.Handler, holds the next layer, passes through what it does not interpose (the
// dlsym(RTLD_NEXT) of a C interposer), has Unwrap, and lives in a file of its own:
//
//	oraus      the published cache_oraus.so (Oracle message file, 2002–2003), bugs
//	           included (a specimen)
//	opencache  the published cache_open_calls.so, bugs included
//	filecache  the same idea done right: reads of chosen files served from memory
//	           with the kernel's exact results, fd numbers included
//	fdatasync  fsync → fdatasync on regular files (db4o commits, 2008)
//	dsync      O_SYNC → O_DSYNC in open flags
//	fsio       Oracle's filesystemio_options: none, asynch, directio, setall
//	fault      deterministic fault injection in iosim's fault-rule language
//	           (package faultrule)
//	count      per-syscall counts, errors, bytes and virtual time, like strace -c
//	trace      strace-format lines to an io.Writer
//
// # Building stacks
//
// Every interposer has a name and parameters, usable from a CLI flag
// --stack NAME[:key=value,...] (repeatable; the first is nearest the program) and
// from Go:
//
//	h, err := interposer.Build(kernel, "filecache:path=/ora/mesg/oraus.msb")
//	st, err := interposer.ParseStack([]string{"count", "fsio:mode=setall,path=*.dbf"})
//	h, err = st.Build(kernel)
//	fmt.Print(interposer.Usage())
//
// Errors name the interposer, the key and the value at fault. Layers and Find walk
// a built stack through Unwrap.
//
// # Properties
//
// The tests check read-equivalence — random programs of open/openat, read, pread64,
// readv, lseek, fcntl, dup*, fstat and close (and, for filecache, writes, truncates,
// renames, unlinks and links) give identical results, errnos, bytes, offsets and fd
// numbers on the kernel alone and through the layer — and assert that the same
// property finds and shrinks every bug of the published seed-000 code (see
// COUNTEREXAMPLES.md). Sync policies are checked under power loss: fdatasync and
// O_DSYNC keep every acknowledged byte and the size, and lose the mtime.
package interposer
