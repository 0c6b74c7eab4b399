package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAptSecurityURI runs apt-sources.sh on each fixture in
// testdata/apt (a ROOT with an etc/apt) and compares the derived URI of
// the security archive with the fixture's want file (empty: none can be
// derived, and the script exits 1). has-suite must find bookworm-security
// only in the fixture named has-security.
func TestAptSecurityURI(t *testing.T) {
	dirs, err := filepath.Glob("testdata/apt/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "want"))
			require.NoError(t, err)
			want := strings.TrimSpace(string(b))

			out, err := exec.Command("bash", "apt-sources.sh", "security-uri", dir).Output()
			got := strings.TrimSpace(string(out))
			if want == "" {
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "no URI can be derived: exit 1")
				require.Equal(t, 1, ee.ExitCode())
				require.Empty(t, got)
			} else {
				require.NoError(t, err)
				require.Equal(t, want, got)
			}

			err = exec.Command("bash", "apt-sources.sh", "has-suite", "bookworm-security", dir).Run()
			if filepath.Base(dir) == "has-security" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// TestSetupNamesNoMirror: setup.sh and apt-sources.sh carry no host name;
// the mirror comes from the machine's own sources.
func TestSetupNamesNoMirror(t *testing.T) {
	for _, f := range []string{"setup.sh", "apt-sources.sh"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, bad := range []string{"http://", "https://", "debian.org", "ftp."} {
			require.NotContains(t, string(b), bad, "%s names a mirror", f)
		}
	}
}
