package sim

// WorldObserver is implemented by a Handler that keeps a copy of what the model's
// files hold: their data, their stat, how paths resolve (the filecache interposer).
//
// Calls change files through the stack, so every layer sees them. The one other
// way files change is from outside every program: a replayer materialising the
// state a trace shows existed before it (a file's bytes seen in a read, a directory
// a failed unlink reveals), which is no call of the traced program and so must not
// be counted, charged, traced or faulted by the layers. Whoever changes files that
// way calls NotifyWorldChanged, which every layer receives; a layer that keeps a copy
// drops it and reads the files again through the next layer when it needs them.
type WorldObserver interface {
	// WorldChanged says that the data, size or attributes of the inode numbered
	// ino changed without a call; ino 0 says that the namespace did (paths were
	// created or removed).
	WorldChanged(ino uint64)
}

// NotifyWorldChanged calls WorldChanged(ino) on h and every layer below it that
// implements WorldObserver, following the layers' Unwrap() Handler methods.
func NotifyWorldChanged(h Handler, ino uint64) {
	for h != nil {
		if o, ok := h.(WorldObserver); ok {
			o.WorldChanged(ino)
		}
		u, ok := h.(interface{ Unwrap() Handler })
		if !ok {
			return
		}
		h = u.Unwrap()
	}
}

// FdServer is implemented by a Handler that serves fds itself, without the kernel
// holding them (the filecache interposer's virtual fds). ServedFd says, with no
// effect on the layer (nothing counted or charged), which inode such an fd refers
// to for the program and its file offset; ok is false for an fd the layer does not
// serve. A replayer needs it to infer and to check the bytes the program read
// through such a layer.
type FdServer interface {
	ServedFd(t *Task, fd int) (ino uint64, off int64, ok bool)
}

// ServedFd asks h and every layer below it (following Unwrap) for an fd one of
// them serves; see FdServer.
func ServedFd(h Handler, t *Task, fd int) (ino uint64, off int64, ok bool) {
	for h != nil {
		if s, is := h.(FdServer); is {
			if ino, off, ok = s.ServedFd(t, fd); ok {
				return ino, off, true
			}
		}
		u, is := h.(interface{ Unwrap() Handler })
		if !is {
			return 0, 0, false
		}
		h = u.Unwrap()
	}
	return 0, 0, false
}
