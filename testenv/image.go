package testenv

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

//go:embed image.sh
var imageScript string

var imageMu sync.Mutex

// ImagePresent reports whether the Docker engine has image.
func ImagePresent(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Run() == nil
}

// EnsureImage makes sure the Docker engine has image. An image other than
// those of Versions must already be present (testenv never pulls:
// registries may be out of reach). The image of a Versions entry is built
// when missing, once per machine and cached by its tag: a root filesystem
// of the entry's Debian suite made with debootstrap (minbase) from
// Debian's packages, with a headless JRE, that suite's libzookeeper-java,
// iptables and procps, loaded with docker import. The build fails when the
// suite's libzookeeper-java is not the entry's release. Building needs
// root, debootstrap (installed with apt-get when missing and running as
// root) and a Debian mirror; it takes a few minutes and logs a line per
// step.
func EnsureImage(ctx context.Context, image string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	imageMu.Lock()
	defer imageMu.Unlock()
	if ImagePresent(ctx, image) {
		return nil
	}
	z, ok := versionForImage(image)
	if !ok {
		return fmt.Errorf("%w: image %s is not present and testenv builds only those of testenv.Versions", ErrImage, image)
	}
	return BuildImage(ctx, image, z.Suite, z.Packages, "libzookeeper-java="+z.Version, logger)
}

// BuildImage builds image from Debian's packages whatever is present: a
// root filesystem of suite (debootstrap minbase) with packages (separated
// by spaces) installed, loaded with docker import. expect lists
// "package=version" pairs (separated by spaces) whose installed upstream
// versions must be those, or the build fails. Needs root and debootstrap
// (installed with apt-get when missing).
func BuildImage(ctx context.Context, image, suite, packages, expect string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: building %s needs root (debootstrap, chroot)", ErrImage, image)
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		logger.Info("testenv: installing debootstrap")
		if out, err := exec.CommandContext(ctx, "apt-get", "install", "-y", "-q", "debootstrap").CombinedOutput(); err != nil {
			return fmt.Errorf("%w: install debootstrap: %v\n%s", ErrImage, err, tail(string(out), 20))
		}
	}
	script, err := os.CreateTemp("", "zkrecipes-image-*.sh")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(imageScript); err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	script.Close()

	began := time.Now()
	logger.Info("testenv: building image (once per machine)", "image", image, "suite", suite)
	cmd := exec.CommandContext(ctx, "/bin/sh", script.Name(), image, suite, packages, expect)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		logger.Info("testenv: " + sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %v\n%s", ErrImage, err, tail(stderr.String(), 30))
	}
	logger.Info("testenv: image built", "image", image, "took", time.Since(began).Round(time.Second))
	return nil
}
