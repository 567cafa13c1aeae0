package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCountResponses(t *testing.T) {
	body := []byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:x="urn:x">
<D:response><D:href>/a/</D:href></D:response><D:response><D:href>/a/b</D:href><x:response/></D:response></D:multistatus>`)
	if n, err := countResponses(bytes.NewReader(body)); err != nil || n != 2 {
		t.Errorf("countResponses = %d, %v", n, err)
	}
	if _, err := countResponses(strings.NewReader("<d:multistatus xmlns:d='DAV:'><d:response>")); err == nil {
		t.Error("truncated body accepted")
	}
}
