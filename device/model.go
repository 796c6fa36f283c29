package device

import (
	"math"
	"math/rand/v2"
)

// Op is a device command.
type Op uint8

// Device commands.
const (
	Read     Op = iota // READ
	Write              // WRITE: into the volatile cache when the device has one
	WriteFUA           // WRITE with Force Unit Access: complete only on stable media
	Flush              // FLUSH CACHE / NVMe Flush: every cached write reaches stable media
)

// Model is the service-time model of one device: a deterministic queueing model
// in virtual nanoseconds. Submit places a command that arrives at a given time
// and returns when it starts being served and when it completes.
//
// Rotating disks (Ruemmler and Wilkes, "An Introduction to Disk Drive Modeling",
// IEEE Computer 27(3), 1994): one actuator serves one command at a time; a
// command costs the controller overhead, a seek whose time grows with the square
// root of the distance (track-to-track at one track, the data sheet's average at
// the average random distance, a third of the stroke), the rotational delay until
// the target sector passes under the head (the platter's angle is tracked in
// virtual time, so a dependent write just after the previous one waits almost a
// full turn) and the transfer at the media rate. A read that continues the
// previous read is served from the drive's look-ahead buffer without rotational
// delay. With the write cache on, a write completes once transferred and is
// destaged later on the media timeline; Flush waits for the destaging; a FUA
// write is served on the media.
//
// Flash (SSD, NVMe): each command takes a per-command latency (read or program)
// on one of Parallelism independent units and transfers at the sequential
// bandwidth on a shared bus. Flush waits for every outstanding write, then costs
// flush_us when the device has a volatile cache. RAM: transfer only.
//
// A Model is not safe for concurrent use; sim serialises it.
type Model struct {
	p         *Device
	rot       int64   // ns per revolution
	trackB    float64 // bytes passing under the head per revolution
	units     []int64 // free-at of each flash unit
	media     int64   // free-at of the media (disk actuator, flash bus)
	pos       int64   // byte address just past the last media access
	lastRead  bool    // the last media access was a read
	lastWrite int64   // completion of the last write (flash: flush waits for it)
	cached    bool    // writes are in the volatile cache, not yet destaged
	tags      []int64 // completion of the last QueueDepth commands, a ring
	tag       int     // the ring's oldest entry
	// Latency spread: lognormal sigma of reads and programs (0: constant),
	// and the generator of the draws.
	readSigma, progSigma float64
	rng                  *rand.Rand
}

// NewModel returns the model of d, idle at time 0 with the head at address 0.
func NewModel(d *Device) *Model {
	m := &Model{p: d}
	if d.Kind == HDD {
		m.rot = int64(60e9 / d.RPM)
		m.trackB = d.ReadMBs * 1e6 * float64(m.rot) / 1e9
	}
	n := d.Parallelism
	if n < 1 {
		n = 1
	}
	m.units = make([]int64, n)
	m.tags = make([]int64, max(d.QueueDepth, 1))
	if d.Kind == SSD || d.Kind == NVMe {
		m.readSigma = lognormalSigma(d.ReadUs, d.ReadP99Us)
		m.progSigma = lognormalSigma(d.ProgramUs, d.ProgramP99Us)
		if m.readSigma > 0 || m.progSigma > 0 {
			m.rng = rand.New(rand.NewPCG(d.LatencySeed, 0x6c6174656e6379))
		}
	}
	return m
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// maxTailRatio bounds p99/mean of a lognormal: exp(z99^2/2).
var maxTailRatio = math.Exp(z99 * z99 / 2)

// lognormalSigma returns the sigma of the lognormal with the given mean and
// 99th percentile (0 when p99 is 0 or not above the mean): from
// ln(p99/mean) = z99*sigma - sigma^2/2, the smaller root.
func lognormalSigma(mean, p99 float64) float64 {
	if !(mean > 0) || !(p99 > mean) {
		return 0
	}
	disc := z99*z99 - 2*math.Log(p99/mean)
	if disc <= 0 {
		return z99
	}
	return z99 - math.Sqrt(disc)
}

// draw returns a latency of mean meanNs spread by sigma (lognormal, mean
// kept), or meanNs when sigma is 0.
func (m *Model) draw(meanNs int64, sigma float64) int64 {
	if sigma == 0 || meanNs == 0 {
		return meanNs
	}
	return int64(float64(meanNs) * math.Exp(sigma*m.rng.NormFloat64()-sigma*sigma/2))
}

// transfer is the time to move n bytes at rate mbs (10^6 bytes/s).
func transfer(n int64, mbs float64) int64 { return int64(float64(n) * 1e3 / mbs) }

func us(v float64) int64 { return int64(v * 1e3) }
func ms(v float64) int64 { return int64(v * 1e6) }

// SeekTime returns the seek time of the disk over a distance of dist bytes.
func (m *Model) SeekTime(dist int64) int64 {
	d := m.p
	if dist < 0 {
		dist = -dist
	}
	if float64(dist) < m.trackB {
		return 0
	}
	frac := float64(dist) / float64(d.CapacityBytes)
	if frac > 1 {
		frac = 1
	}
	// seek(frac) = t2t + k*sqrt(frac), with k such that the mean over random
	// pairs (E[sqrt|U-V|] = 8/15) is the data sheet's average.
	k := (d.AverageSeekMs - d.TrackSeekMs) / (8.0 / 15.0)
	return ms(d.TrackSeekMs + k*math.Sqrt(frac))
}

// rotation returns the delay at time t until the sector at addr is under the head.
func (m *Model) rotation(t, addr int64) int64 {
	head := t % m.rot
	target := int64(float64(addr%int64(m.trackB)) / m.trackB * float64(m.rot))
	d := target - head
	if d < 0 {
		d += m.rot
	}
	return d
}

// mediaAccess serves an access of n bytes at addr on the disk starting at t and
// returns its completion.
func (m *Model) mediaAccess(t int64, op Op, addr, n int64) int64 {
	d := m.p
	if op == Read && m.lastRead && addr == m.pos {
		t += transfer(n, d.ReadMBs)
	} else {
		s := m.SeekTime(addr - m.pos)
		t += s
		if s > 0 && op != Read {
			t += ms(d.WriteSettleMs)
		}
		t += m.rotation(t, addr)
		if op == Read {
			t += transfer(n, d.ReadMBs)
		} else {
			t += transfer(n, d.WriteMBs)
		}
	}
	m.pos, m.lastRead = addr+n, op == Read
	return t
}

// Submit serves a command arriving at time at for n bytes at byte address addr
// and returns when service started and when the command completed.
//
// At most QueueDepth commands are outstanding: one more waits for the oldest
// to complete (a tag), as the block layer makes it wait.
func (m *Model) Submit(at int64, op Op, addr, n int64) (start, done int64) {
	at = max(at, m.tags[m.tag])
	start, done = m.serve(at, op, addr, n)
	m.tags[m.tag] = done
	m.tag = (m.tag + 1) % len(m.tags)
	return start, done
}

func (m *Model) serve(at int64, op Op, addr, n int64) (start, done int64) {
	d := m.p
	switch d.Kind {
	case RAM:
		start = max(at, m.media)
		if op == Flush {
			return start, start
		}
		done = start + transfer(n, d.ReadMBs)
		m.media = done
		return start, done
	case HDD:
		return m.submitDisk(at, op, addr, n)
	}
	return m.submitFlash(at, op, addr, n)
}

func (m *Model) submitDisk(at int64, op Op, addr, n int64) (start, done int64) {
	d := m.p
	cmd := us(d.CommandUs)
	switch {
	case op == Flush:
		start = max(at, m.media)
		done = start + cmd + us(d.FlushUs)
		m.media, m.cached = done, false
		return start, done
	case op == Write && d.WriteCache:
		// Accepted into the cache at interface speed; destaged on the media
		// timeline after what is already queued there. Sequential destaging
		// continues without a seek or rotational delay (the drive writes the
		// cache out in address order).
		start = at
		done = at + cmd + transfer(n, d.WriteMBs)
		seq := m.cached && addr == m.pos
		t := max(at, m.media)
		if seq {
			t += transfer(n, d.WriteMBs)
			m.pos, m.lastRead = addr+n, false
		} else {
			t = m.mediaAccess(t+cmd, op, addr, n)
		}
		m.media, m.cached = t, true
		return start, done
	}
	start = max(at, m.media)
	done = m.mediaAccess(start+cmd, op, addr, n)
	if op == WriteFUA {
		done += us(d.FUAUs)
	}
	m.media = done
	return start, done
}

func (m *Model) submitFlash(at int64, op Op, addr, n int64) (start, done int64) {
	d := m.p
	cmd := us(d.CommandUs)
	if op == Flush {
		start = max(at, m.lastWrite)
		done = start + cmd
		if d.WriteCache {
			done += us(d.FlushUs)
		}
		return start, done
	}
	u := 0
	for i, f := range m.units {
		if f < m.units[u] {
			u = i
		}
	}
	start = max(at, m.units[u])
	lat, bw := m.draw(us(d.ReadUs), m.readSigma), d.ReadMBs
	if op != Read {
		lat, bw = m.draw(us(d.ProgramUs), m.progSigma), d.WriteMBs
		if op == WriteFUA {
			lat += us(d.FUAUs)
		}
	}
	bus := max(start+cmd+lat, m.media)
	done = bus + transfer(n, bw)
	m.media, m.units[u] = done, done
	if op != Read {
		m.lastWrite = max(m.lastWrite, done)
	}
	return start, done
}
