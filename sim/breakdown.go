package sim

// Sub subtracts o from b, field by field: where the time went between two
// readings of Kernel.Breakdown (o the earlier).
func (b *Breakdown) Sub(o Breakdown) {
	b.CPU -= o.CPU
	b.Copy -= o.Copy
	b.User -= o.User
	b.QueueWait -= o.QueueWait
	b.Device -= o.Device
	b.LockWait -= o.LockWait
	b.Journal -= o.Journal
	b.Throttle -= o.Throttle
	b.RunQueue -= o.RunQueue
	b.Sleep -= o.Sleep
	b.LockWaits -= o.LockWaits
	b.Commits -= o.Commits
	b.Flushes -= o.Flushes
	b.DeviceReads -= o.DeviceReads
	b.DeviceWrites -= o.DeviceWrites
	b.BytesRead -= o.BytesRead
	b.BytesWritten -= o.BytesWritten
	b.CacheHits -= o.CacheHits
	b.CacheMisses -= o.CacheMisses
	b.ReadaheadPages -= o.ReadaheadPages
}
