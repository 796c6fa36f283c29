package fio

import (
	"math"
	"math/rand/v2"
)

// zipfMaxGen caps the terms of zeta(n) summed, as fio's ZIPF_MAX_GEN.
const zipfMaxGen = 10000000

// zipf draws block numbers 0..n-1 with fio's random_distribution=zipf:theta
// (fio's lib/zipf.c, after Gray et al., "Quickly generating billion-record
// synthetic databases", SIGMOD 1994): rank k (from 1) is drawn with
// probability proportional to 1/k^theta, and ranks map to blocks by fio's
// hash (a multiplication by the 64-bit golden ratio) plus a random offset, so
// the hot blocks are spread over the file. The uniform draws come from rng
// (fio's come from its own generator: the distribution is fio's, the
// sequence is not).
type zipf struct {
	n                 uint64
	theta, zeta2, eta float64
	zetan, alpha      float64
	off               uint64
	rng               *rand.Rand
}

func newZipf(n uint64, theta float64, rng *rand.Rand) *zipf {
	z := &zipf{n: n, theta: theta, rng: rng}
	z.off = uint64(rng.Uint32())
	z.zeta2 = math.Pow(1.0, theta) + math.Pow(0.5, theta)
	for i := uint64(0); i < min(n, zipfMaxGen); i++ {
		z.zetan += math.Pow(1.0/float64(i+1), theta)
	}
	z.alpha = 1.0 / (1.0 - theta)
	z.eta = (1.0 - math.Pow(2.0/float64(n), 1.0-theta)) / (1.0 - z.zeta2/z.zetan)
	return z
}

// next returns the next block number.
func (z *zipf) next() uint64 {
	uni := float64(z.rng.Uint32()) / float64(math.MaxUint32)
	randZ := uni * z.zetan
	var val uint64
	switch {
	case randZ < 1.0:
		val = 1
	case randZ < 1.0+math.Pow(0.5, z.theta):
		val = 2
	default:
		val = 1 + uint64(float64(z.n)*math.Pow(z.eta*uni-z.eta+1.0, z.alpha))
	}
	val--
	val *= 0x61C8864680B583EB // fio's __hash_u64: GOLDEN_RATIO_64
	return (val + z.off) % z.n
}
