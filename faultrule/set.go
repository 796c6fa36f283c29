package faultrule

import "sync"

// Set decides, operation by operation, which rule of a list fires: the trigger
// semantics every layer shares. For each operation the layer says which rules
// match it (their OPS and WHERE); every matching rule counts the operation, and
// the first whose triggers all hold on its count fires. Deterministic: the
// decision depends only on the sequence of operations and the seed. Safe for
// concurrent use.
type Set struct {
	seed  uint64
	rules []Rule

	mu    sync.Mutex
	seen  []int64 // per rule: matching operations so far
	fired []int64 // per rule: operations it fired on
}

// NewSet returns a set of rules whose p= triggers draw from seed.
func NewSet(seed uint64, rules []Rule) *Set {
	return &Set{seed: seed, rules: rules, seen: make([]int64, len(rules)), fired: make([]int64, len(rules))}
}

// Rules returns the rules (shared; do not modify).
func (s *Set) Rules() []Rule { return s.rules }

// Seed returns the seed of the p= triggers.
func (s *Set) Seed() uint64 { return s.seed }

// Decide counts one operation against every rule match(i) accepts and returns the
// index of the rule that fires, or -1. match is called with the set's lock held,
// once per rule in order, and must not call back into the set.
func (s *Set) Decide(match func(i int, r *Rule) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	hit := -1
	for i := range s.rules {
		r := &s.rules[i]
		if !match(i, r) {
			continue
		}
		s.seen[i]++
		if hit < 0 && r.Fires(s.seen[i], s.seed, i) {
			hit = i
			s.fired[i]++
		}
	}
	return hit
}

// Fired returns how many operations each rule fired on.
func (s *Set) Fired() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.fired...)
}

// Fires reports whether the rule's triggers all hold on its n-th match (1-based);
// idx (the rule's index in its list) and seed key the p= draw.
func (r *Rule) Fires(n int64, seed uint64, idx int) bool {
	if r.Nth > 0 && n != r.Nth {
		return false
	}
	if r.Every > 0 && n%r.Every != 0 {
		return false
	}
	if r.After > 0 && n <= r.After {
		return false
	}
	if r.P > 0 {
		u := float64(splitmix(seed^splitmix(uint64(idx)+1)^uint64(n))>>11) / (1 << 53)
		if u >= r.P {
			return false
		}
	}
	return true
}

// HasOp reports whether the rule applies to the operation called name.
func (r *Rule) HasOp(name string) bool {
	if len(r.Ops) == 0 {
		return true
	}
	for _, o := range r.Ops {
		if o == name {
			return true
		}
	}
	return false
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
