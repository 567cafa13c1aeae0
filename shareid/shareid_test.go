package shareid

import "testing"

func TestMountAndParse(t *testing.T) {
	const share = "Xy_9-abc"
	if got, want := Mount(share), "a0ca6a90-a365-4782-871e-d44447bbc668$a0ca6a90-a365-4782-871e-d44447bbc668!Xy_9-abc"; got != want {
		t.Fatalf("Mount = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		ref    string
		share  string
		inJail bool
	}{
		{Mount(share), share, true},
		{DriveID, "", true},
		{DriveID + "!", "", false},
		{DriveID + "x", "", false},
		{Jail, "", false},
		{"storage$space!node", "", false},
		{"", "", false},
	} {
		share, inJail := Parse(tc.ref)
		if share != tc.share || inJail != tc.inJail {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", tc.ref, share, inJail, tc.share, tc.inJail)
		}
	}
}
