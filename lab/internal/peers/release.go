package peers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// Release is one generation of the peer libraries: the Curator and kazoo of
// one Debian suite. Debian12's are installed on this machine (setup.sh
// installs them); a release with an Image runs its peers, javac included,
// in containers of that image, which EnsureImage builds from the suite's
// packages when missing.
type Release struct {
	// Name is short and fit for a test name ("debian12", "testing").
	Name string
	// Suite is the Debian suite the libraries come from.
	Suite string
	// Curator and Kazoo are the libraries' upstream versions.
	Curator, Kazoo string
	// Image is the container image peers run in; empty: this machine.
	Image string
	// packages are what the image installs on top of debootstrap's
	// minbase.
	packages string
}

var (
	// Debian12 is Debian 12's Curator 5.4 and kazoo 2.8, installed on
	// this machine: the release of Start, StartProgram, StartProgramWith
	// and Available.
	Debian12 = Release{Name: "debian12", Suite: "bookworm", Curator: "5.4.0", Kazoo: "2.8.0"}
	// Testing is Debian testing's Curator 5.7.1 and kazoo 2.11.0 (the
	// newest kazoo release), run in containers.
	Testing = Release{Name: "testing", Suite: "testing", Curator: "5.7.1", Kazoo: "2.11.0",
		Image: "zkrecipes/peers:curator-5.7.1-kazoo-2.11.0",
		packages: "default-jdk-headless libcurator-recipes-java libcurator-discovery-java " +
			"libzookeeper-java libslf4j-java python3 python3-kazoo"}
	// Releases are every release, oldest first.
	Releases = []Release{Debian12, Testing}
)

// EnvRelease names the peer release(s) a test run uses (Lookup): empty for
// every one of Releases.
const EnvRelease = "ZKRECIPES_PEERS"

// Lookup returns the release named name, or an error wrapping ErrMissing.
func Lookup(name string) (Release, error) {
	for _, r := range Releases {
		if r.Name == name {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("%w: no peer release %q (known: debian12, testing)", ErrMissing, name)
}

// String names the release with its library versions.
func (r Release) String() string {
	return fmt.Sprintf("%s (Curator %s, kazoo %s)", r.Name, r.Curator, r.Kazoo)
}

// Version returns the version of kind's library in r.
func (r Release) Version(kind Kind) string {
	if kind == Kazoo {
		return r.Kazoo
	}
	return r.Curator
}

// Available returns nil when kind of r can run here, else an error wrapping
// ErrMissing that says what to install or build. A release with an image
// needs a Docker engine and the image (EnsureImage builds it).
func (r Release) Available(kind Kind) error {
	if r.Image == "" {
		return available(kind)
	}
	if kind != Curator && kind != Kazoo {
		return fmt.Errorf("%w: unknown peer kind %q", ErrMissing, kind)
	}
	if !testenv.ImagePresent(context.Background(), r.Image) {
		return fmt.Errorf("%w: no image %s (go run ./lab/cmd/zkimage -peers)", ErrMissing, r.Image)
	}
	return nil
}

var imageMu sync.Mutex

// EnsureImage builds r's image when the Docker engine lacks it (nothing for
// a release without an image): a root filesystem of r.Suite with a JDK,
// the suite's Curator, ZooKeeper, slf4j, Python and kazoo, from Debian's
// packages; the build fails when the suite's Curator or kazoo is not r's.
// Needs root and debootstrap; a few minutes.
func (r Release) EnsureImage(ctx context.Context, logger *slog.Logger) error {
	if r.Image == "" {
		return nil
	}
	imageMu.Lock()
	defer imageMu.Unlock()
	if testenv.ImagePresent(ctx, r.Image) {
		return nil
	}
	expect := fmt.Sprintf("libcurator-recipes-java=%s libcurator-discovery-java=%s python3-kazoo=%s", r.Curator, r.Curator, r.Kazoo)
	return testenv.BuildImage(ctx, r.Image, r.Suite, r.packages, expect, logger)
}

// containerSeq numbers this process's peer containers.
var containerSeq atomic.Int64

// command returns a command running args (args[0] is the program) with r's
// runtime: on this machine, or in a throwaway container of r's image that
// shares this machine's network and temporary directory. name is empty or
// the container's name.
func (r Release) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd, _ := r.commandNamed(ctx, false, args...)
	return cmd
}

// peerCommand is command for a long-running peer, which reads its commands
// on stdin; it returns the container's name too (empty on this machine).
func (r Release) peerCommand(args ...string) (*exec.Cmd, string) {
	return r.commandNamed(context.Background(), true, args...)
}

func (r Release) commandNamed(ctx context.Context, interactive bool, args ...string) (*exec.Cmd, string) {
	if r.Image == "" {
		return exec.CommandContext(ctx, args[0], args[1:]...), ""
	}
	host, _ := os.Hostname()
	name := fmt.Sprintf("zkrecipes-peer-%d-%d", os.Getpid(), containerSeq.Add(1))
	tmp, err := filepath.Abs(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	// The labels are testenv's: testenv.Reap removes the container once
	// this process is gone, should it outlive it.
	dargs := []string{"run", "--rm", "--name", name, "--network", "host",
		"--label", "zkrecipes.testenv=1", "--label", "zkrecipes.owner=" + host + ":" + strconv.Itoa(os.Getpid()),
		"-v", tmp + ":" + tmp, "-e", "TMPDIR=" + tmp}
	if interactive {
		dargs = append(dargs, "-i")
	}
	dargs = append(dargs, r.Image)
	return exec.CommandContext(ctx, "docker", append(dargs, args...)...), name
}
