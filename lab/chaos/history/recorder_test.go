package history

import "testing"

func TestHoldingNow(t *testing.T) {
	r := NewRecorder()
	if _, has := r.HoldingNow([]string{"c1"}); has {
		t.Fatal("an empty history has holdings")
	}
	c1, c2, c3 := r.Client("c1"), r.Client("c2"), r.Client("c3")
	c1.Acquired("/l", 1, "")
	c1.Released("/l", 1)
	c2.Acquired("/l", 2, "")
	c1.Invoke(FnRead, "/r", 0).OK(0)
	c3.Acquired("/l", 3, "")
	c3.Lost("/l", 3, "expired")
	holding, has := r.HoldingNow([]string{"c1", "c2", "c3", "c4"})
	if !has || holding["c1"] || !holding["c2"] || holding["c3"] || holding["c4"] {
		t.Fatalf("holding %v, has %v; want only c2", holding, has)
	}
}
