package main

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

func TestPatternReader(t *testing.T) {
	const n = 1<<16 + 13
	all, err := io.ReadAll(newPatternReader(n, 7))
	if err != nil || len(all) != n {
		t.Fatalf("ReadAll: %d bytes, %v", len(all), err)
	}
	// The stream does not depend on how it is read.
	odd, err := io.ReadAll(iotest.OneByteReader(newPatternReader(n, 7)))
	if err != nil || !bytes.Equal(all, odd) {
		t.Fatalf("one-byte reads differ (%v)", err)
	}
	half, err := io.ReadAll(iotest.HalfReader(newPatternReader(n, 7)))
	if err != nil || !bytes.Equal(all, half) {
		t.Fatalf("half reads differ (%v)", err)
	}
	if err := iotest.TestReader(newPatternReader(n, 7), all); err != nil {
		t.Fatal(err)
	}
	other, _ := io.ReadAll(newPatternReader(n, 8))
	if bytes.Equal(all, other) {
		t.Error("seeds give the same stream")
	}
	if bytes.Count(all, all[:8]) > 1 {
		t.Error("stream repeats its first word")
	}
}
