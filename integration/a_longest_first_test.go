package integration

import "testing"

// Go starts a package's parallel tests in the order it finds them, its
// files by name, and runs at most -parallel of them at once: a test of
// minutes that starts last ends the package minutes after the others.
// The longest tests are therefore declared here, in the file that sorts
// first, longest first, and do their work in their own files.

func TestDesktopClients(t *testing.T) { testDesktopClients(t) }

func TestMemoryListingBigFolder(t *testing.T) { testMemoryListingBigFolder(t) }

func TestOwnCloudWebJourneys(t *testing.T) { testOwnCloudWebJourneys(t) }

func TestMassDeleteDesktop(t *testing.T) { testMassDeleteDesktop(t) }

func TestRclone(t *testing.T) { testRclone(t) }

func TestWebUI(t *testing.T) { testWebUI(t) }

func TestDesktopUndo(t *testing.T) { testDesktopUndo(t) }

func TestWebUIUpload(t *testing.T) { testWebUIUpload(t) }

func TestMemoryDeleteBigFolder(t *testing.T) { testMemoryDeleteBigFolder(t) }
