package replica_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/replica"
)

// hostRows is what ListHosts on r says, a page of size at a time:
// host=replica for each host (replica "-" for r's own).
func hostRows(r *benchReplica, size int32) ([]string, int, error) {
	var rows []string
	pages, token := 0, ""
	for {
		resp, err := r.cl.ListHosts(context.Background(), &tooldexv1.ListHostsRequest{PageSize: size, PageToken: token})
		if err != nil {
			return nil, 0, err
		}
		pages++
		for _, h := range resp.GetHosts() {
			rep := h.GetReplica()
			if rep == "" {
				rep = "-"
			}
			rows = append(rows, fmt.Sprintf("%s=%s %v", h.GetHostId(), rep, h.GetTools()))
		}
		if token = resp.GetNextPageToken(); token == "" {
			return rows, pages, nil
		}
	}
}

// rowReplica returns the replica of a row of hostRows.
func rowReplica(row string) string {
	_, rest, _ := strings.Cut(row, "=")
	rep, _, _ := strings.Cut(rest, " ")
	return rep
}

// TestListHostsAcrossReplicas: ListHosts on any replica lists every
// replica's hosts, the other replicas' marked with theirs, in pages; a
// replica that stops takes its hosts out of the others' lists.
func TestListHostsAcrossReplicas(t *testing.T) {
	node, err := replica.Start(replica.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	a, h := startBenchReplica(t, node), startBenchReplica(t, node)
	defer a.stop()
	defer h.stop()
	startEcho(t, a)
	startBlocking(t, h.addr)
	waitServes(t, a.svc, "wait")
	waitServes(t, h.svc, "echo")

	list := func(r *benchReplica, size int32) []string {
		t.Helper()
		rows, pages, err := hostRows(r, size)
		if err != nil {
			t.Fatal(err)
		}
		if size == 1 && pages != len(rows) {
			t.Fatalf("%d hosts in %d pages of 1", len(rows), pages)
		}
		return rows
	}
	for _, size := range []int32{0, 1} {
		onA, onH := list(a, size), list(h, size)
		if len(onA) != 2 || len(onH) != 2 {
			t.Fatalf("page size %d: ListHosts on a = %v, on h = %v; want both hosts on each", size, onA, onH)
		}
		if onA[0] != "bench-echo=- [echo]" || onH[1] != "blocking=- [wait]" {
			t.Fatalf("page size %d: own hosts: on a %v, on h %v; want bench-echo and blocking unmarked", size, onA, onH)
		}
		// Each lists the other's host marked with the other's replica id.
		if onA[1] == "blocking=- [wait]" || onA[1][:9] != "blocking=" || onH[0][:11] != "bench-echo=" || onH[0] == "bench-echo=- [echo]" {
			t.Fatalf("page size %d: remote hosts: on a %v, on h %v; want each marked with its replica", size, onA, onH)
		}
		if rowReplica(onA[1]) == rowReplica(onH[0]) {
			t.Fatalf("page size %d: a's host and h's host marked with one replica: on a %v, on h %v", size, onA, onH)
		}
	}

	h.stop()
	var onA []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if onA = list(a, 0); len(onA) == 1 {
			break
		}
	}
	if len(onA) != 1 || onA[0] != "bench-echo=- [echo]" {
		t.Fatalf("after h stopped, ListHosts on a = %v, want only bench-echo", onA)
	}
}
