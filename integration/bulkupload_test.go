package integration

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDesktopBulkUpload syncs a tree of a few hundred small files with
// nextcloudcmd, which sends them to /remote.php/dav/bulk, 100 to a
// request, since the capabilities offer dav.bulkupload: its log must show
// every file completed by its bulk job (no empty file: nextcloudcmd 3.7
// aborts a bulk request with one, nextcloud/desktop#4157), the server must hold every file
// byte for byte, and another pass must find nothing to do.
//
// On the cluster, whose bulk requests take longer, nextcloudcmd 3.7 sometimes
// starts its next bulk request before the answer to the previous one and
// sends that one's files again in it; the pass after must still find
// nothing to do (storage.Commit.Unchanged).
func TestDesktopBulkUpload(t *testing.T) {
	t.Parallel()
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			binary := requirePeer(t, "nextcloudcmd")
			s := d.start(t, serverOptions{tls: true, davspaces: []string{"bulk_upload all"}})
			session := newDesktopSession(t, s, desktopClient{program: "nextcloudcmd", folder: "Bulk"}, binary)
			local := filepath.Join(t.TempDir(), "bulk")
			tree := bulkTree(300)
			writeDesktopTree(t, local, tree)

			session.syncAndCheck("bulk upload", local)
			session.checkBulkUploaded("bulk upload", tree)
			session.syncExpectingNothing("settled", local)
		})
	}
}

// bulkTree is n small files (0 to 8 KiB, the first empty) in ten folders
// and the top folder, with names a bulk request must carry as they are.
func bulkTree(n int) map[string][]byte {
	rnd := rand.New(rand.NewSource(23))
	tree := map[string][]byte{}
	for i := range n {
		name := fmt.Sprintf("folder %d/file-%03d ✓.txt", i%10, i)
		if i%50 == 0 {
			name = fmt.Sprintf("top-%03d.bin", i)
		}
		data := make([]byte, rnd.Intn(8<<10))
		rnd.Read(data)
		tree[name] = data
	}
	tree["empty.txt"] = nil
	return tree
}

// desktopBulkCompleted is the line nextcloudcmd logs for a file its bulk
// upload job has completed.
var desktopBulkCompleted = regexp.MustCompile(`Completed propagation of "([^"]*)" by OCC::BulkPropagatorJob\(`)

// checkBulkUploaded checks that the last pass uploaded every file of tree
// with the client's bulk upload job.
func (d *desktopSession) checkBulkUploaded(step string, tree map[string][]byte) {
	d.t.Helper()
	bulk := map[string]bool{}
	err := scanLog(d.lastLog, func(line string) {
		if m := desktopBulkCompleted.FindStringSubmatch(line); m != nil {
			bulk[m[1]] = true
		}
	})
	if err != nil {
		d.t.Fatal(err)
	}
	var missed []string
	for name := range tree {
		// Folders are made with MKCOL; nextcloudcmd 3.7 leaves empty files
		// out of its bulk requests, as seen here.
		if len(tree[name]) > 0 && !strings.HasSuffix(name, "/") && !bulk[name] {
			missed = append(missed, name)
		}
	}
	if len(missed) > 0 {
		d.t.Errorf("%s: %d of %d files were not uploaded by the bulk job, e.g. %q", step, len(missed), len(tree), missed[0])
	}
}
