package testenv

import (
	"bufio"
	"fmt"
	"strings"
)

// ZooKeeper is a ZooKeeper release testenv has an image for: the image is a
// minimal root filesystem of one Debian suite with that suite's
// libzookeeper-java, built by EnsureImage from Debian's packages.
type ZooKeeper struct {
	// Version is the release, as the servers report it ("3.9.6").
	Version string
	// Suite is the Debian suite whose libzookeeper-java is that release.
	Suite string
	// Image is the image's tag.
	Image string
	// Packages are what the image installs on top of debootstrap's minbase.
	Packages string
}

// DefaultVersion is the ZooKeeper an ensemble runs when neither
// Config.Version nor ZKRECIPES_ZK_VERSION (nor an image) names one: Debian
// 12's, the image zkrecipes/zookeeper:3.8-debian (DefaultImage).
const DefaultVersion = "3.8.0"

// Versions are the releases testenv has images for, oldest first. A suite
// that moves on to another release makes its image's build fail (the build
// checks the installed version) rather than tag it with the wrong one.
var Versions = []ZooKeeper{
	{Version: "3.8.0", Suite: "bookworm", Image: DefaultImage,
		Packages: "openjdk-17-jre-headless libzookeeper-java iptables procps"},
	{Version: "3.9.3", Suite: "trixie", Image: "zkrecipes/zookeeper:3.9.3-debian",
		Packages: "default-jre-headless libzookeeper-java iptables procps"},
	{Version: "3.9.6", Suite: "testing", Image: "zkrecipes/zookeeper:3.9.6-debian",
		Packages: "default-jre-headless libzookeeper-java iptables procps"},
}

// LookupVersion returns the entry of Versions for version ("3.9.6"), or
// an error wrapping ErrConfig that lists the known ones.
func LookupVersion(version string) (ZooKeeper, error) {
	for _, z := range Versions {
		if z.Version == version {
			return z, nil
		}
	}
	known := make([]string, len(Versions))
	for i, z := range Versions {
		known[i] = z.Version
	}
	return ZooKeeper{}, fmt.Errorf("%w: no image for ZooKeeper %q (known: %s)", ErrConfig, version, strings.Join(known, ", "))
}

// versionForImage returns the entry of Versions whose image is image.
func versionForImage(image string) (ZooKeeper, bool) {
	for _, z := range Versions {
		if z.Image == image {
			return z, true
		}
	}
	return ZooKeeper{}, false
}

// parseVersion returns the release a srvr answer reports ("Zookeeper
// version: 3.9.6-<commit or Debian suffix>, built on ..."): the part before
// the first '-' or ','.
func parseVersion(srvr string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(srvr))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "Zookeeper version: ")
		if !ok {
			continue
		}
		if i := strings.IndexAny(v, "-,"); i >= 0 {
			v = v[:i]
		}
		if v = strings.TrimSpace(v); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("testenv: no version in srvr answer %q", strings.TrimSpace(srvr))
}

// ImageOf returns the image the containers backend runs for cfg, with its
// defaults and ZKRECIPES_IMAGE and ZKRECIPES_ZK_VERSION applied, or
// ErrConfig.
func ImageOf(cfg Config) (string, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return "", err
	}
	return c.Image, nil
}
