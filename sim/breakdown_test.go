package sim

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBreakdownSub: Sub undoes add on every field (a field added to
// Breakdown and forgotten in either fails here).
func TestBreakdownSub(t *testing.T) {
	var a, o Breakdown
	va, vo := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&o).Elem()
	for i := range va.NumField() {
		va.Field(i).SetInt(int64(100 + i))
		vo.Field(i).SetInt(int64(1 + i))
	}
	want := a
	a.add(&o)
	require.NotEqual(t, want, a)
	a.Sub(o)
	require.Equal(t, want, a)
}
